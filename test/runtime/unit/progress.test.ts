import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { Reporter } from '../../../src/runtime/progress';

function reporter(mode: 'tty' | 'plain' | 'json', intervalSeconds = 10) {
  let t = 1_000_000;
  const out: string[] = [];
  const err: string[] = [];
  const r = new Reporter({ mode, write: (s) => out.push(s), writeErr: (s) => err.push(s), intervalSeconds, now: () => t });
  return { r, out, err, tick: (ms: number) => { t += ms; } };
}

const step = { step: 'setup', index: 6, total: 8 };
const waiting = (elapsedSeconds: number, blockers = ['Job/uyuni-setup (uyuni) complete: Job running; pods uyuni-setup-x Pending/ContainerCreating']) =>
  ({ type: 'waiting' as const, ...step, elapsedSeconds, blockers });

describe('progress output', () => {
  it('plain: prints a waiting line naming the blocker once per interval, not on every change', () => {
    const { r, out, tick } = reporter('plain', 10);
    r.emit({ type: 'step-start', ...step, description: 'first-time setup' });
    r.emit(waiting(0.1));
    tick(5000);
    r.emit(waiting(5, ['something else']));
    expect(out.join('')).not.toContain('waiting');
    tick(5000);
    r.emit(waiting(10));
    tick(1000);
    r.emit(waiting(11));
    const lines = out.join('').split('\n').filter((l) => l.includes('waiting'));
    expect(lines).toEqual(['[6/8] setup: waiting 10.0s for Job/uyuni-setup (uyuni) complete: Job running; pods uyuni-setup-x Pending/ContainerCreating']);
    r.close();
  });

  it('plain: shortens a long list of blockers to the first three', () => {
    const { r, out, tick } = reporter('plain', 1);
    r.emit({ type: 'step-start', ...step, description: 'volumes' });
    tick(1500);
    r.emit(waiting(1.5, ['a', 'b', 'c', 'd', 'e']));
    expect(out.join('')).toContain('waiting 1.5s for a; b; c (+2 more)');
    r.close();
  });

  it('tty: keeps one live line per step with N/M, elapsed time and the blocker, cleared before other output', () => {
    const { r, out, tick } = reporter('tty');
    r.emit({ type: 'step-start', ...step, description: 'first-time setup' });
    tick(2500);
    r.emit(waiting(2.5));
    expect(out[out.length - 1]).toBe('[6/8] setup 2.5s waiting for Job/uyuni-setup (uyuni) complete: Job running; pods uyuni-setup-x Pending/ContainerCreating'.slice(0, (process.stdout.columns || 120) - 1));
    r.emit({ type: 'log', step: 'setup', pod: 'uyuni-setup-x', container: 'main', line: 'hello' });
    const joined = out.join('');
    expect(joined).toContain('\r\x1b[2K  setup/uyuni-setup-x/main | hello\n[6/8] setup');
    r.emit({ type: 'step-done', ...step, elapsedSeconds: 3 });
    expect(out[out.length - 1]).toBe('[6/8] setup: done in 3.0s\n');
    r.close();
  });

  it('json: one event per line, also recorded in events.jsonl; the run failure goes to stderr in text modes', () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'ev-')), 'events.jsonl');
    const j = reporter('json');
    j.r.recordTo(file);
    j.r.emit({ type: 'step-start', ...step, description: 'd' });
    j.r.emit({ type: 'run-done', status: 'failed', exitCode: 1, elapsedSeconds: 1, message: 'step setup: boom' });
    j.r.close();
    const lines = j.out.join('').trim().split('\n').map((l) => JSON.parse(l));
    expect(lines.map((l) => l.type)).toEqual(['step-start', 'run-done']);
    expect(fs.readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l).type)).toEqual(['step-start', 'run-done']);

    const p = reporter('plain');
    p.r.emit({ type: 'run-done', status: 'failed', exitCode: 1, elapsedSeconds: 1, message: 'step setup: boom' });
    expect(p.err.join('')).toBe('run failed (exit 1) after 1.0s: step setup: boom\n');
  });
});
