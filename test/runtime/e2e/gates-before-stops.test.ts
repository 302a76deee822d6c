/**
 * Gates before stops (issue 38, item 4): a gate of a later step that the facts gathered so far
 * decide already refuses before a step stops anything; a gate that can only be decided after the
 * stop (facts printed once nothing runs) refuses, and the run starts again what it stopped, and
 * says so. (dist/restore's own case: test/runtime/e2e/backup.test.ts.)
 */
import { startSimulator, Simulator } from '../../sim';
import { cli } from './harness';
import { deployment, job, namespace, NS, writePlan } from '../plans';

let sim: Simulator;
afterEach(async () => {
  await sim?.stop();
});

const SERVER = { apiVersion: 'apps/v1', kind: 'Deployment', name: 'server', namespace: NS } as const;
const refuseUnless = (fact: string) => [{ type: 'equals' as const, left: { fact }, right: { value: 'ok' }, message: `${fact} must be ok` }];
const factsFrom = (name: string) => ({ apiVersion: 'batch/v1', kind: 'Job', name, namespace: NS });
/** Merge patches of the server's Deployment (a scale), not its server-side apply (force=true). */
const scaledWrites = () => sim.requests.filter((r) => r.method === 'PATCH' && r.path.endsWith('/deployments/server') && !r.query.includes('force=true'));

/** namespace, server (running) → inspect (prints `mode`) → stop (server to 0) → [check (prints `target`)] → work (gated). */
function plan(check: boolean, gateOn: string): string {
  return writePlan([
    { name: 'namespace', objects: [namespace()] },
    { name: 'server', objects: [deployment('server')] },
    { name: 'inspect', objects: [job('inspect')], factsFrom: factsFrom('inspect') },
    { name: 'stop', objects: [], actions: [{ type: 'scale', object: SERVER, replicas: 0 }] },
    ...(check ? [{ name: 'check', objects: [job('check')], factsFrom: factsFrom('check') }] : []),
    { name: 'work', objects: [job('work')], gates: refuseUnless(gateOn) },
  ]);
}

describe('gates before stops', () => {
  it('a later gate decided by facts gathered before the stop refuses before anything is stopped', async () => {
    sim = await startSimulator({ jobs: { inspect: { logs: ['mode=broken'] } } });
    const r = await cli('run', plan(false, 'mode'), { kubeconfig: sim.kubeconfigPath, yes: true });
    expect(r.code).toBe(1);
    expect(r.out + r.err).toContain('gate refused before anything is stopped: step work: mode must be ok');
    expect(scaledWrites()).toEqual([]);
    expect(sim.get('apps/v1', 'Deployment', 'server', NS).spec.replicas).toBe(1);
    expect(sim.get('batch/v1', 'Job', 'work', NS)).toBeUndefined();
  });

  it('a gate on facts printed after the stop refuses there, and the run scales back what it stopped, saying so', async () => {
    sim = await startSimulator({ jobs: { inspect: { logs: ['mode=ok'] }, check: { logs: ['target=full'] } } });
    const r = await cli('run', plan(true, 'target'), { kubeconfig: sim.kubeconfigPath, yes: true });
    expect(r.code).toBe(1);
    expect(r.out + r.err).toContain('gate refused: target must be ok (target is full, expected ok)');
    expect(r.out + r.err).toContain(`started again what this run stopped: Deployment/server (${NS}) to 1`);
    expect(r.out).toMatch(/scale back to 1 Deployment\/server \(uyuni-test\): done \(stopped by step stop; the refusal starts it again\)/);
    expect(sim.get('apps/v1', 'Deployment', 'server', NS).spec.replicas).toBe(1);
    expect(sim.get('batch/v1', 'Job', 'work', NS)).toBeUndefined();
  });
});
