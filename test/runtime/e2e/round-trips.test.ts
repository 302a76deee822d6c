/**
 * Round trips on the critical path (issue 36): against the simulator answering every request
 * LATENCY ms late, how many requests `status` and `plan` of dist/install send, and how many of
 * them waited on an earlier answer (test/sim/round-trips.ts). Counts, not times: a latency far
 * above the command's own work between requests makes them independent of the machine.
 */
import * as path from 'path';
import { READ_CONCURRENCY } from '../../../src/kube/limit';
import { roundTrips, startSimulator, Simulator } from '../../sim';
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

  it('status: one LIST per kind (or a GET for a kind of one object), the StorageClasses and the ping together, within the read bound: 2 round trips', async () => {
    const m = await measure('status');
    // 8 kinds listed, the plan's Namespace and ConfigMap read by name, the StorageClasses
    // (bound waits), GET /version: 12 requests, at most 8 reads in flight, so 2 round trips;
    // before: the ping, then the reads (2 rounds: 10 of them), then the StorageClasses (4).
    expect(m).toEqual({ requests: 12, roundTrips: 2 });
    expect(sim.maxInFlight).toBeLessThanOrEqual(READ_CONCURRENCY + 1);
  });

  it('plan: the takeovers and the lost-credentials checks after the walk read together, within the read bound: 5 round trips, not 11', async () => {
    const mark = sim.requests.length;
    const m = await measure('plan');
    const sent = sim.requests.slice(mark);
    // after the walk: what the last dry run's answer started
    const lastDryRun = Math.max(...sent.filter((q) => /dryRun=All/.test(q.query)).map((q) => q.done ?? 0));
    const after = sent.filter((q) => q.at >= lastDryRun);
    // the kinds listed, the plan's Namespace and ConfigMap, the other plans' parents, the
    // history, the claims, then the 4 generated Secrets, and the lock's Lease (a live run's lock
    // refuses too): 20 reads, 8 at most in flight; before,
    // each check after the other and each Secret after the other: 11 round trips
    expect({ requests: after.length, roundTrips: roundTrips(after) }).toEqual({ requests: 20, roundTrips: 5 });
    // 135 before the lock's Lease and the records' copy on the Namespace were read too; 140 since
    // the PodSecurity check (src/runtime/pod-security.ts): the Namespace's labels and a dry run of
    // each workload (Deployments db and uyuni) for the admission's warnings, among the other reads
    expect(m.requests).toBe(140);
    expect(sim.maxInFlight).toBeLessThanOrEqual(READ_CONCURRENCY);
  });
});
