/** Issue 28's output conventions as units: durations, colour, bookkeeping left out of diffs, gates in words. */
import { formatDuration } from '../../../src/plan/duration';
import type { Gate } from '../../../src/plan/types';
import { COLOUR, NO_COLOUR, paintDiffLine, paletteFor } from '../../../src/runtime/colour';
import { fieldDiff, isBookkeeping } from '../../../src/runtime/field-diff';
import { evaluateGate } from '../../../src/runtime/gates';

describe('formatDuration', () => {
  it('prints a plan deadline, a step timeout and elapsed time as people read them', () => {
    expect(formatDuration(604800)).toBe('7d');
    expect(formatDuration(36000)).toBe('10h');
    expect(formatDuration(2160)).toBe('36m');
    expect(formatDuration(5400)).toBe('1h30m');
    expect(formatDuration(3 * 3600 + 5)).toBe('3h0m5s');
    expect(formatDuration(90000)).toBe('1d1h');
    expect(formatDuration(300)).toBe('5m');
    expect(formatDuration(30)).toBe('30s');
    expect(formatDuration(4.25)).toBe('4.3s');
    expect(formatDuration(0)).toBe('0s');
    expect(formatDuration(59.96)).toBe('1m');
    expect(formatDuration(62.7)).toBe('1m2s');
    expect(formatDuration(9 * 3600 + 59 * 60 + 59.5)).toBe('9h59m59s');
  });
});

describe('colour', () => {
  const tty = { isTTY: true, format: 'text', env: {} };
  it('only on a terminal, for text, without --no-color and without NO_COLOR', () => {
    expect(paletteFor(tty).enabled).toBe(true);
    expect(paletteFor({ ...tty, isTTY: false }).enabled).toBe(false);
    expect(paletteFor({ ...tty, format: 'json' }).enabled).toBe(false);
    expect(paletteFor({ ...tty, format: 'yaml' }).enabled).toBe(false);
    expect(paletteFor({ ...tty, color: false }).enabled).toBe(false);
    expect(paletteFor({ ...tty, env: { NO_COLOR: '1' } }).enabled).toBe(false);
    // no-color.org: an empty NO_COLOR does not count
    expect(paletteFor({ ...tty, env: { NO_COLOR: '' } }).enabled).toBe(true);
  });

  it('paints a diff line by its marker, never a context line that holds a YAML list item', () => {
    expect(paintDiffLine('+  a: "2"', COLOUR)).toBe('\x1b[32m+  a: "2"\x1b[39m');
    expect(paintDiffLine('-  a: "1"', COLOUR)).toBe('\x1b[31m-  a: "1"\x1b[39m');
    expect(paintDiffLine('   - name: x', COLOUR)).toBe('   - name: x');
    expect(paintDiffLine('+  a: "2"', NO_COLOUR)).toBe('+  a: "2"');
  });
});

describe('bookkeeping in field diffs', () => {
  const deployment = (plan: string, wave: string, image: string): any => ({
    apiVersion: 'apps/v1', kind: 'Deployment',
    metadata: {
      name: 'uyuni', namespace: 'uyuni',
      labels: { app: 'uyuni', 'uyuni-cdk.io/plan': plan, 'uyuni-cdk.io/step': 'server', 'applyset.kubernetes.io/part-of': 'applyset-x-v1' },
      annotations: { 'argocd.argoproj.io/sync-wave': wave, team: 'ops' },
    },
    spec: { template: { metadata: { labels: { app: 'uyuni', 'uyuni-cdk.io/plan': plan } }, spec: { containers: [{ name: 'uyuni', image }] } } },
  });

  it('knows our keys from the user\'s', () => {
    expect(['uyuni-cdk.io/plan', 'uyuni-cdk.io/spec-hash', 'applyset.kubernetes.io/part-of', 'argocd.argoproj.io/sync-wave'].every(isBookkeeping)).toBe(true);
    expect(['app', 'app.kubernetes.io/part-of', 'team', 'argocd.argoproj.io/hook'].some(isBookkeeping)).toBe(false);
  });

  it('leaves them out of the diff and counts those that change, in the pod template too', () => {
    const d = fieldDiff(deployment('migrate', '3', 'server:2026.01'), deployment('install', '7', 'server:2026.02'));
    expect(d).not.toMatch(/uyuni-cdk\.io|applyset|sync-wave/);
    expect(d).toContain('-        - image: server:2026.01\n+        - image: server:2026.02\n');
    expect(d.trimEnd().split('\n').pop()).toBe('(+ 2 bookkeeping labels and 1 annotation)');
  });

  it('an object whose bookkeeping alone changes is still an update, its diff the count only', () => {
    expect(fieldDiff(deployment('migrate', '3', 'i'), deployment('install', '3', 'i'))).toBe('(+ 2 bookkeeping labels)\n');
    expect(fieldDiff(deployment('install', '3', 'i'), deployment('install', '3', 'i'))).toBe('');
  });
});

describe('gate messages in words', () => {
  const facts = { current_pg_version: '14', fqdn: 'old.example.com', target_fqdn: 'new.example.com', release: '2025.10' };
  const gate = (g: object) => evaluateGate({ message: 'm', ...g } as Gate, facts).detail;

  it('says what a fact is and what was expected, never an equality that reads as holding', () => {
    expect(gate({ type: 'compare-versions', left: { fact: 'current_pg_version' }, op: '==', right: { value: '16' } })).toBe('m (current_pg_version is 14, expected 16)');
    expect(gate({ type: 'compare-versions', left: { fact: 'release' }, op: '>=', right: { value: '2026.01' } })).toBe('m (release is 2025.10, expected 2026.01 or newer)');
    expect(gate({ type: 'compare-versions', left: { fact: 'release' }, op: '<', right: { value: '2025.01' } })).toBe('m (release is 2025.10, expected older than 2025.01)');
    expect(gate({ type: 'equals', left: { fact: 'fqdn' }, right: { fact: 'target_fqdn' } })).toBe('m (fqdn is old.example.com, expected target_fqdn (new.example.com))');
    expect(gate({ type: 'not-equals', left: { fact: 'fqdn' }, right: { value: 'old.example.com' } })).toBe('m (fqdn is old.example.com, expected anything but old.example.com)');
    expect(gate({ type: 'equals', left: { fact: 'nope' }, right: { value: 'x' } })).toBe('m (nope is unknown (no step printed it), expected x)');
    expect(gate({ type: 'present', fact: 'nope' })).toBe('m (nope is missing: no step printed it)');
  });

  it('reads a gate whose value comes first from the fact\'s side', () => {
    expect(gate({ type: 'compare-versions', left: { value: '16' }, op: '>=', right: { fact: 'current_pg_version' } })).toBe('current_pg_version is 14, as expected: 16 or older');
    expect(gate({ type: 'compare-versions', left: { value: '12' }, op: '>', right: { fact: 'current_pg_version' } })).toBe('m (current_pg_version is 14, expected older than 12)');
  });
});
