import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { Reporter } from '../../../src/runtime/report/reporter';

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
    expect(lines).toEqual(['[6/8] setup: waiting 10s for Job/uyuni-setup (uyuni) complete: Job running; pods uyuni-setup-x Pending/ContainerCreating']);
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

  const columns = process.stdout.columns;
  const terminalWidth = (n: number) => Object.defineProperty(process.stdout, 'columns', { value: n, configurable: true, writable: true });
  afterEach(() => terminalWidth(columns));

  it('tty: keeps one live line per step with N/M, elapsed time and the blocker, cleared before other output', () => {
    terminalWidth(200);
    const { r, out, tick } = reporter('tty');
    r.emit({ type: 'step-start', ...step, description: 'first-time setup' });
    tick(2500);
    r.emit(waiting(2.5));
    expect(out[out.length - 1]).toBe('[6/8] setup 2.5s waiting for Job/uyuni-setup (uyuni) complete: Job running; pods uyuni-setup-x Pending/ContainerCreating');
    r.emit({ type: 'log', step: 'setup', pod: 'uyuni-setup-x', container: 'main', line: 'hello' });
    const joined = out.join('');
    expect(joined).toContain('\r\x1b[2K  setup/uyuni-setup-x/main | hello\n[6/8] setup');
    r.emit({ type: 'step-done', ...step, elapsedSeconds: 3 });
    expect(out[out.length - 1]).toBe('[6/8] setup: done in 3s\n');
    r.close();
  });

  const rollout = { step: 'server', index: 8, total: 8 };
  const starting = 'Deployment/uyuni (uyuni) rollout: 0/1 ready; pod uyuni-7d9f8c5b4-x2k4p: Running, uyuni starting (startup probe), 0 restarts';
  const pod = (started: boolean) => ({
    owner: { kind: 'Deployment', name: 'uyuni', namespace: 'uyuni' }, pod: 'uyuni-7d9f8c5b4-x2k4p', phase: 'Running',
    containers: [{ name: 'uyuni', state: 'running' as const, started, ready: false, restartCount: 0, startupProbe: true, readinessProbe: true }],
  });

  it('tty: a blocker too long for the terminal loses its middle, not the pod state at its end', () => {
    terminalWidth(110);
    const { r, out, tick } = reporter('tty');
    r.emit({ type: 'step-start', ...rollout, description: 'the server' });
    tick(3 * 3600_000 + 62_000);
    r.emit({ type: 'waiting', ...rollout, elapsedSeconds: 3 * 3600 + 62, blockers: [starting] });
    const live = out[out.length - 1];
    expect(live.length).toBe(109);
    expect(live).toMatch(/^\[8\/8\] server 3h1m2s waiting for Deployment\/uyuni .*….*Running, uyuni starting \(startup probe\), 0 restarts$/);
    r.close();
  });

  it('records a wait in events.jsonl (and -o json) when what blocks or a pod changes, and once an interval, not on every tick', () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'ev-')), 'events.jsonl');
    const j = reporter('json', 10);
    j.r.recordTo(file);
    j.r.emit({ type: 'step-start', ...rollout, description: 'the server' });
    for (let i = 1; i <= 40; i++) { // 10 s of the waiter's quarter-second reports, then a change
      j.tick(250);
      j.r.emit({ type: 'waiting', ...rollout, elapsedSeconds: i / 4, blockers: [starting], pods: [pod(i > 30)] });
    }
    j.r.close();
    const recorded = fs.readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l)).filter((e) => e.type === 'waiting');
    expect(recorded.map((e) => [e.elapsedSeconds, e.pods[0].containers[0].started])).toEqual([[0.25, false], [7.75, true], [10, true]]);
    expect(recorded[0]).toMatchObject({ blockers: [starting], pods: [{ owner: { kind: 'Deployment', name: 'uyuni', namespace: 'uyuni' }, phase: 'Running', containers: [{ name: 'uyuni', started: false, ready: false, restartCount: 0 }] }] });
    expect(j.out.join('')).toBe(fs.readFileSync(file, 'utf8'));
  });

  it('plain: counts a long wait in hours', () => {
    const { r, out, tick } = reporter('plain', 10);
    r.emit({ type: 'step-start', ...rollout, description: 'the server' });
    tick(9 * 3600_000 + 59 * 60_000 + 59_500);
    r.emit({ type: 'waiting', ...rollout, elapsedSeconds: 9 * 3600 + 59 * 60 + 59.5, blockers: [starting] });
    expect(out.join('')).toContain(`[8/8] server: waiting 9h59m59s for ${starting}\n`);
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
    expect(p.err.join('')).toBe('run failed (exit 1) after 1s: step setup: boom\n');
  });
});
