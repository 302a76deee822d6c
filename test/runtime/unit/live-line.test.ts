/**
 * The live line of a server in its first start, at the widths terminals have: what it is doing
 * (`starting (startup probe)`) stays whole; the pod's name, then the namespace, give way.
 */
import { Reporter } from '../../../src/runtime/report/reporter';

const columns = process.stdout.columns;
const terminalWidth = (n: number) => Object.defineProperty(process.stdout, 'columns', { value: n, configurable: true, writable: true });
afterEach(() => terminalWidth(columns));

const rollout = { step: 'server', index: 8, total: 8 };
const blocker = 'Deployment/uyuni (uyuni) rollout: 0/1 ready; pod uyuni-7d9f8c5b4-x2k4p: Running, uyuni starting (startup probe), 0 restarts';
const pod = (started: boolean) => ({
  owner: { kind: 'Deployment', name: 'uyuni', namespace: 'uyuni' }, pod: 'uyuni-7d9f8c5b4-x2k4p', phase: 'Running',
  containers: [{ name: 'uyuni', state: 'running' as const, started, ready: false, restartCount: 0, startupProbe: true, readinessProbe: true }],
});

function liveLine(width: number, started = false): string {
  terminalWidth(width);
  let t = 1_000_000;
  const out: string[] = [];
  const r = new Reporter({ mode: 'tty', write: (s) => out.push(s), now: () => t });
  r.emit({ type: 'step-start', ...rollout, description: 'the server' });
  t += 3 * 3600_000 + 62_000;
  r.emit({ type: 'waiting', ...rollout, elapsedSeconds: 3 * 3600 + 62, blockers: [blocker], pods: [pod(started)] });
  r.close();
  return out.filter((l) => l.startsWith('[8/8]')).at(-1)!;
}

describe('the live line of a server in its startup probe', () => {
  it('says what it is doing, the pod\'s name where there is room', () => {
    expect(liveLine(120)).toBe('[8/8] server 3h1m2s Deployment/uyuni (uyuni) starting (startup probe), pod uyuni-7d9f8c5b4-x2k4p');
    expect(liveLine(80)).toBe('[8/8] server 3h1m2s Deployment/uyuni (uyuni) starting (startup probe)');
    expect(liveLine(66)).toBe('[8/8] server 3h1m2s Deployment/uyuni starting (startup probe)');
    expect(liveLine(50)).toBe('[8/8] server 3h1m2s starting (startup probe)');
    for (const w of [40, 50, 66, 80, 120]) expect(liveLine(w).length).toBeLessThan(w);
  });

  it('once started, the wait again (its readiness)', () => {
    expect(liveLine(200, true)).toBe(`[8/8] server 3h1m2s waiting for ${blocker}`);
  });
});
