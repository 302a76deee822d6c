/**
 * Reads in parallel (issue 25): against a slow API, `plan` and the read phase of `run` send their
 * reads together, never more than READ_CONCURRENCY in flight; `run`'s writes stay in step order.
 * (The times at 1 s per request are in bench/slow-api.bench.ts, not here.)
 */
import * as path from 'path';
import { READ_CONCURRENCY } from '../../../src/kube/limit';
import { readPlan } from '../../../src/plan/reader';
import { startSimulator, Simulator } from '../../sim';
import { changes, cli, ROOT } from './harness';

const install = path.join(ROOT, 'dist', 'install');

let sim: Simulator;
afterEach(async () => {
  await sim?.stop();
});

describe('a slow API', () => {
  it('plan reads with several requests in flight, never more than the bound; run writes one at a time, in step order', async () => {
    sim = await startSimulator();
    expect((await cli('run', install, { kubeconfig: sim.kubeconfigPath })).code).toBe(0);
    sim.setLatency(40);
    sim.resetInFlight();
    const plan = await cli('plan', install, { kubeconfig: sim.kubeconfigPath });
    expect(plan.code).toBe(0);
    expect(sim.maxInFlight).toBeGreaterThanOrEqual(4);
    expect(sim.maxInFlight).toBeLessThanOrEqual(READ_CONCURRENCY);

    // A change in every step (the plan into a second namespace: every object new; a run over
    // the installed one applies nothing, its dry runs found it unchanged): run applies them all,
    // in the plan's order.
    sim.resetInFlight();
    const mark = sim.requests.length;
    const r = await cli('run', install, { kubeconfig: sim.kubeconfigPath, namespace: 'uyuni-second' });
    expect(r.code).toBe(0);
    expect(sim.maxInFlight).toBeGreaterThanOrEqual(4);
    expect(sim.maxInFlight).toBeLessThanOrEqual(READ_CONCURRENCY);
    const order = readPlan(install).steps.flatMap((s) => s.objects.map((o) => `${s.name} ${o.kind.toLowerCase()}s/${o.name}`));
    // the plan's objects (not the copy of the records on the namespace, written at the end: record-store.ts)
    const applied = changes(sim.requests.slice(mark)).filter((q) => q.method === 'PATCH' && !/dryRun|fieldManager=uyuni-cdk-records/.test(q.query))
      .map((q) => order.find((x) => q.path.endsWith(x.split(' ')[1].replace(/^(\w+?)ys\//, '$1ies/').replace(/sss\//, 'sses/'))))
      .filter((x): x is string => x !== undefined);
    const positions = applied.map((x) => order.indexOf(x));
    expect(applied.length).toBeGreaterThan(10);
    expect(positions).toEqual([...positions].sort((a, b) => a - b));
  });
});
