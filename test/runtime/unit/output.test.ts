/** Issue 28's output conventions as units: durations, colour, bookkeeping left out of diffs, gates in words, the run's closing line. */
import { parseAllDocuments } from 'yaml';
import { formatDuration } from '../../../src/plan/duration';
import type { Gate } from '../../../src/plan/types';
import { COLOUR, NO_COLOUR, paintDiffLine, paletteFor } from '../../../src/runtime/report/colour';
import { fieldDiff, isBookkeeping } from '../../../src/runtime/decide/field-diff';
import { evaluateGate } from '../../../src/runtime/decide/gates';
import { Reporter } from '../../../src/runtime/report/reporter';

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

describe('the run\'s closing line and machine formats', () => {
  const id = (kind: string, name: string) => ({ kind, name, namespace: 'uyuni' });
  const step = { step: 'stop-server', index: 2, total: 3 };

  function run(format?: 'json' | 'yaml', mode: 'plain' | 'json' = 'plain') {
    const out: string[] = [];
    const err: string[] = [];
    const r = new Reporter({ mode, format, write: (t) => out.push(t), writeErr: (t) => err.push(t), now: () => 0 });
    r.emit({ type: 'step-start', ...step, description: 'stop the server' });
    r.emit({ type: 'action', step: 'stop-server', action: 'scale to 0', object: id('Deployment', 'uyuni'), result: 'done' });
    r.emit({ type: 'action', step: 'stop-server', action: 'scale to 0', object: id('Deployment', 'db'), result: 'already at 0 replicas: not done' });
    r.emit({ type: 'action', step: 'stop-server', action: 'scale to 2', object: id('Deployment', 'web'), result: 'done' });
    r.emit({ type: 'action', step: 'stop-server', action: 'delete', object: id('Job', 'old'), result: 'deleting' });
    r.emit({ type: 'requirement', step: 'stop-server', kind: 'Secret', name: 's', namespace: 'uyuni', result: 'generated', keys: ['password'] });
    r.emit({ type: 'apply', step: 'stop-server', object: id('Job', 'backup'), result: 'created' });
    r.emit({ type: 'apply', step: 'stop-server', object: id('Job', 'sync'), result: 're-created' });
    r.emit({ type: 'apply', step: 'stop-server', object: id('ConfigMap', 'c'), result: 'updated' });
    r.emit({ type: 'apply', step: 'stop-server', object: id('Service', 'a'), result: 'unchanged' });
    r.emit({ type: 'apply', step: 'stop-server', object: id('Service', 'b'), result: 'unchanged' });
    r.emit({ type: 'step-done', ...step, elapsedSeconds: 2.5 });
    r.emit({ type: 'action', step: '(run)', action: 'prune (propagationPolicy Background)', object: id('Service', 'hub'), result: 'deleted' });
    r.emit({ type: 'run-done', status: 'done', exitCode: 0, elapsedSeconds: 3700 });
    return { out: out.join(''), err: err.join(''), tally: r.tally };
  }

  it('counts created, updated, deleted, stopped, scaled, Jobs run and unchanged', () => {
    const { out, tally } = run();
    expect(tally).toEqual({ created: 1, updated: 1, relabelled: 0, deleted: 2, stopped: 1, scaled: 1, jobsRun: 2, unchanged: 2, applied: 0 });
    expect(out).not.toContain('Service/a');
    expect(out).toContain('[2/3] stop-server: done in 2.5s (2 objects unchanged)\n');
    expect(out.trimEnd().split('\n').pop()).toBe('Run complete in 1h1m40s: 1 created, 1 updated, 2 deleted, 1 stopped, 1 scaled, 2 Jobs run, 2 unchanged.');
  });

  it('-o yaml: one document per event, the same as -o json', () => {
    const yaml = run('yaml', 'json').out;
    const json = run('json', 'json').out;
    expect(yaml.startsWith('---\n')).toBe(true);
    expect(parseAllDocuments(yaml).map((d) => d.toJS())).toEqual(json.trim().split('\n').map((l) => JSON.parse(l)));
    expect(JSON.parse(json.trim().split('\n').pop()!)).toMatchObject({ type: 'run-done', resources: { stopped: 1, jobsRun: 2 } });
  });

  it('a failed run says what it changed before it stopped', () => {
    const r = new Reporter({ mode: 'plain', write: () => undefined, writeErr: (t) => failed.push(t), now: () => 0 });
    const failed: string[] = [];
    r.emit({ type: 'apply', step: 's', object: id('ConfigMap', 'c'), result: 'created' });
    r.emit({ type: 'run-done', status: 'failed', exitCode: 1, elapsedSeconds: 1.5, message: 'step s: boom' });
    expect(failed.join('')).toBe('run failed (exit 1) after 1.5s: step s: boom\n  changed before it stopped: 1 created, 0 updated, 0 deleted, 0 stopped, 0 Jobs run, 0 unchanged\n');
  });
});
