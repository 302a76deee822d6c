/**
 * A namespace being deleted (issue 28: the run after `destroy`): `plan` says so, `run` refuses it
 * before its first write, and the namespace step refuses one that is terminating, where before
 * the run passed the namespace step and failed later with `namespaces "…" not found` or a 403.
 */
import { startSimulator, Simulator } from '../../sim';
import { verdictFor } from '../../../src/runtime/readiness';
import { changes, cli } from './harness';
import { deployment, namespace, NS, writePlan } from '../plans';

let sim: Simulator;
afterEach(async () => {
  await sim?.stop();
});

/** Deletes the namespace; a ConfigMap with a finalizer keeps it Terminating (as pods still stopping do). */
async function terminate(name: string): Promise<void> {
  sim.put({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'held', namespace: name, finalizers: ['example.com/hold'] } });
  expect((await fetch(`${sim.url}/api/v1/namespaces/${name}`, { method: 'DELETE' })).ok).toBe(true);
  expect(sim.get('v1', 'Namespace', name).status.phase).toBe('Terminating');
}

const install = () => writePlan([{ name: 'namespace', objects: [namespace()] }, { name: 'server', objects: [deployment('web')] }], { name: 'install' });

describe('a terminating namespace', () => {
  it('plan says it, and run refuses it before any write, saying what to do', async () => {
    sim = await startSimulator();
    const dir = install();
    expect((await cli('run', dir, { kubeconfig: sim.kubeconfigPath })).code).toBe(0);
    await terminate(NS);
    const plan = await cli('plan', dir, { kubeconfig: sim.kubeconfigPath, detailedExitcode: true });
    expect(plan.code).toBe(1);
    expect(plan.out).toMatch(/run would refuse before any write:\n {2}- namespace uyuni-test is being deleted \(Terminating since \d{4}-[^)]+\): nothing can be created in it until it is gone/);
    const mark = sim.requests.length;
    const r = await cli('run', dir, { kubeconfig: sim.kubeconfigPath });
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/refused before any write: namespace uyuni-test is being deleted \(Terminating since [^)]+\)[^\n]*Wait until it is gone \(kubectl get namespace uyuni-test/);
    expect(r.out + r.err).not.toContain('not found');
    expect(changes(sim.requests.slice(mark))).toEqual([]);
  });

  it('a run that finds it terminating after its lock refuses before any write', async () => {
    sim = await startSimulator();
    const dir = install();
    expect((await cli('run', dir, { kubeconfig: sim.kubeconfigPath })).code).toBe(0);
    sim.put({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'held', namespace: NS, finalizers: ['example.com/hold'] } });
    // Someone's destroy, just after the lock was taken (the hook sees each request as it arrives),
    // done before the run's next request is served: a DELETE sent over HTTP from here raced with
    // the run's read of the namespace and sometimes lost (the refusal then came from the namespace step).
    let locked = false;
    let deleted = false;
    sim.setAuthorize(() => {
      const last = sim.requests[sim.requests.length - 1];
      if (locked && !deleted) {
        // the request after the lock's: served with the namespace terminating
        sim.remove('v1', 'Namespace', NS);
        deleted = true;
      }
      if (last.method === 'POST' && last.path.endsWith('/leases')) locked = true;
      return true;
    });
    const r = await cli('run', dir, { kubeconfig: sim.kubeconfigPath });
    expect(deleted).toBe(true);
    expect(sim.get('v1', 'Namespace', NS).status.phase).toBe('Terminating');
    expect({ code: r.code, err: r.err }).toEqual({ code: 1, err: expect.stringMatching(/refused before any write: namespace uyuni-test is being deleted \(Terminating since/) });
    expect(r.out).not.toContain('[2/2] server');
    expect(r.out + r.err).not.toContain('not found');
  });

  it('an `exists` wait on a Namespace that starts terminating fails at once', () => {
    const ns = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'x', deletionTimestamp: new Date('2026-01-01T00:00:00Z') }, status: { phase: 'Terminating' } };
    expect(verdictFor('exists', { object: ns as any } as any)).toEqual({ state: 'failed', reason: expect.stringMatching(/^namespace x is being deleted \(Terminating since 2026-01-01T00:00:00.000Z\)/) });
    expect(verdictFor('exists', { object: { ...ns, metadata: { name: 'x' }, status: { phase: 'Active' } } as any } as any).state).toBe('done');
  });
});
