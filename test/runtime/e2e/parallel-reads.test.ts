/**
 * Reads in parallel (issues 25, 36): against a slow API, `plan` and the read phase of `run` send
 * their reads together, never more than READ_CONCURRENCY in flight, and their dry runs together,
 * never more than DRY_RUN_CONCURRENCY; `run`'s writes stay in step order (within a step, sent in file order).
 * (The times at 1 s per request are in bench/slow-api.bench.ts, not here.)
 */
import * as path from 'path';
import { DRY_RUN_CONCURRENCY, READ_CONCURRENCY } from '../../../src/kube/limit';
import { readPlan } from '../../../src/plan/reader';
import { peakInFlight, RequestRecord, startSimulator, Simulator } from '../../sim';
import { changes, cli, ROOT } from './harness';

const install = path.join(ROOT, 'dist', 'install');
const reads = (rs: readonly RequestRecord[]) => rs.filter((q) => q.method === 'GET' && !/watch=/.test(q.query));
const dryRuns = (rs: readonly RequestRecord[]) => rs.filter((q) => /dryRun=All/.test(q.query));

let sim: Simulator;
afterEach(async () => {
  await sim?.stop();
});

describe('a slow API', () => {
  it("plan reads and dry-runs with several requests in flight, never more than their bounds; run writes in step order (a step's applies together, sent in file order)", async () => {
    sim = await startSimulator();
    expect((await cli('run', install, { kubeconfig: sim.kubeconfigPath })).code).toBe(0);
    sim.setLatency(40);
    sim.resetInFlight();
    const before = sim.requests.length;
    const plan = await cli('plan', install, { kubeconfig: sim.kubeconfigPath });
    expect(plan.code).toBe(0);
    const planned = sim.requests.slice(before);
    expect(peakInFlight(reads(planned))).toBeGreaterThanOrEqual(4);
    expect(peakInFlight(reads(planned))).toBeLessThanOrEqual(READ_CONCURRENCY);
    expect(peakInFlight(dryRuns(planned))).toBeGreaterThanOrEqual(READ_CONCURRENCY + 1);
    expect(peakInFlight(dryRuns(planned))).toBeLessThanOrEqual(DRY_RUN_CONCURRENCY);
    expect(sim.maxInFlight).toBeLessThanOrEqual(READ_CONCURRENCY + DRY_RUN_CONCURRENCY);

    // A change in every step (the plan into a second namespace: every object new; a run over
    // the installed one applies nothing, its dry runs found it unchanged): run applies them all,
    // in the plan's order.
    sim.resetInFlight();
    const mark = sim.requests.length;
    const r = await cli('run', install, { kubeconfig: sim.kubeconfigPath, namespace: 'uyuni-second' });
    expect(r.code).toBe(0);
    const ran = sim.requests.slice(mark);
    expect(peakInFlight(reads(ran))).toBeGreaterThanOrEqual(4);
    // the reads, and a step's waits listing while the lock renews
    expect(peakInFlight(reads(ran))).toBeLessThanOrEqual(READ_CONCURRENCY + 1);
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
