/**
 * Round trips on the critical path (issue 36): against the simulator answering every request
 * LATENCY ms late, how many requests `status` and `plan` of dist/install send, and how many of
 * them waited on an earlier answer (test/sim/round-trips.ts). Counts, not times: a latency far
 * above the command's own work between requests makes them independent of the machine.
 */
import * as path from 'path';
import { APPLY_CONCURRENCY, DRY_RUN_CONCURRENCY, READ_CONCURRENCY, STATUS_READ_CONCURRENCY } from '../../../src/kube/limit';
import { peakInFlight, roundTrips, startSimulator, Simulator } from '../../sim';
import { cli, ROOT } from './harness';

const install = path.join(ROOT, 'dist', 'install');
const LATENCY = 150;

let sim: Simulator;
afterAll(async () => {
  await sim?.stop();
});

async function measure(verb: 'status' | 'plan'): Promise<{ requests: number; roundTrips: number }> {
  const mark = sim.requests.length;
  sim.resetInFlight();
  const r = await cli(verb, install, { kubeconfig: sim.kubeconfigPath });
  expect(r.code).toBe(0);
  const sent = sim.requests.slice(mark);
  return { requests: sent.length, roundTrips: roundTrips(sent) };
}

describe('round trips against a slow API, dist/install installed', () => {
  beforeAll(async () => {
    sim = await startSimulator();
    expect((await cli('run', install, { kubeconfig: sim.kubeconfigPath })).code).toBe(0);
    sim.setLatency(LATENCY);
  });

  it('status: one LIST per kind with the plan\'s selector (or a GET for a kind of one object), the StorageClasses and the ping together: 1 round trip', async () => {
    const mark = sim.requests.length;
    const m = await measure('status');
    // 8 kinds listed, the plan's Namespace and ConfigMap read by name, the StorageClasses
    // (bound waits), GET /version: 12 requests, all at once (status's bound, 16), so 1 round
    // trip; before: 2 (a bound of 8), and before that the ping, then the reads (2 rounds), then
    // the StorageClasses (4).
    expect(m).toEqual({ requests: 12, roundTrips: 1 });
    expect(sim.maxInFlight).toBeLessThanOrEqual(STATUS_READ_CONCURRENCY + 1);
    // each LIST carries the plan's selector (what status judges is what carries its labels)
    const lists = sim.requests.slice(mark).filter((q) => q.path.startsWith('/api') && /\/namespaces\/uyuni\/[a-z]+$/.test(q.path));
    expect(lists).toHaveLength(8);
    for (const q of lists) expect(new URLSearchParams(q.query).get('labelSelector')).toBe('app.kubernetes.io/part-of=uyuni,app.kubernetes.io/managed-by=uyuni-cdk');
  });

  it('plan: one LIST per kind with the records, each dry run once its object is read, the checks on the same reads: at most 7 round trips, not 24', async () => {
    const mark = sim.requests.length;
    const m = await measure('plan');
    const sent = sim.requests.slice(mark);
    // the ping; the parent, the records, the Namespace and the objects (a LIST per kind and
    // namespace, the requirements' Secrets by name), the lock's Lease, the other plans' parents,
    // the claims; then the 50 dry runs, 16 in flight, each sent once its object's LIST was back:
    // 80 requests, 6 round trips. Before (issue 36): each object a GET then its dry run, 7 pairs
    // in flight, the pruning's lists one after another, the requirements one at a time in the
    // walk, the take-over and lost-credentials checks after it (listing the kinds again): 137
    // requests, 24 round trips. The chain is 6 on an idle machine; under load a bound's slot may
    // free a moment after the next request was due, and a seventh round shows: at most 7.
    // 82 with the PodSecurity check (src/runtime/core/pod-security.ts): a dry run of each workload
    // (Deployments db and uyuni) for the admission's warnings; its Namespace comes from the snapshot.
    expect(m.requests).toBe(82);
    expect(m.roundTrips).toBeLessThanOrEqual(7);
    // the plan's claims read in one LIST, none by name
    expect(sent.filter((q) => q.method === 'GET' && /\/persistentvolumeclaims\/./.test(q.path))).toEqual([]);
    // every check read with the objects: nothing waits for the last dry run
    const lastDryRun = Math.max(...sent.filter((q) => /dryRun=All/.test(q.query)).map((q) => q.done ?? 0));
    expect(sent.filter((q) => q.at >= lastDryRun)).toEqual([]);
    expect(peakInFlight(sent.filter((q) => q.method === 'GET'))).toBeLessThanOrEqual(READ_CONCURRENCY);
    expect(peakInFlight(sent.filter((q) => /dryRun=All/.test(q.query)))).toBeLessThanOrEqual(DRY_RUN_CONCURRENCY);
  });

  it('run, a first install: each step\'s applies together (what configures, then the workloads), within their bound', async () => {
    const mark = sim.requests.length;
    sim.resetInFlight();
    const r = await cli('run', install, { kubeconfig: sim.kubeconfigPath, namespace: 'round-trips-fresh' });
    expect(r.code).toBe(0);
    const sent = sim.requests.slice(mark);
    const applies = sent.filter((q) => q.method === 'PATCH' && /fieldManager=/.test(q.query) && !/dryRun=All/.test(q.query) && q.path.includes('/namespaces/round-trips-fresh/'));
    // the 26 claims of the volumes step (and the other steps' objects) go together, not one after another
    expect(peakInFlight(applies)).toBeGreaterThan(1);
    expect(peakInFlight(applies)).toBeLessThanOrEqual(APPLY_CONCURRENCY);
    // 101 sequential round trips before (each apply waiting for the one before); 59 with the
    // applies together, 68 once the CA rotation's and the archive's reads came; 49 measured with
    // LATENCY_MS=250 (bench/slow-api.bench.ts) once discovery, the access reviews, the generated
    // Secrets, the StorageClasses and the records were read together; 43 once the run took the
    // parent and the records from its decision's reads and wrote its last records in one write
    // of each place; 40 once the access reviews and a step's applies went in one round each:
    // what is left being the steps' waits and bookkeeping one after another
    expect(roundTrips(sent)).toBeLessThanOrEqual(43);
    // every group discovered once, however many of its kinds were asked for together
    const groups = sent.filter((q) => q.method === 'GET' && /^\/(api\/v1|apis\/[^/]+\/[^/]+)$/.test(q.path)).map((q) => q.path);
    expect(groups).toEqual([...new Set(groups)]);
  });
});
