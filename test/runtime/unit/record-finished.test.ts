/**
 * A run's last records (src/runtime/safety/record.ts recordPlanFinished, against the simulator):
 * the finished run's history entry goes with the server's identity in one write of each place,
 * both read once (issue 36: the run's end was seven round trips of reads and writes of them);
 * when the guarded records cannot be written (a damaged one is never overwritten), the finished
 * run's entry, which guards nothing, is still written.
 */
import * as path from 'path';
import { Cluster } from '../../../src/kube/cluster';
import { loadKubeConfig } from '../../../src/kube/load-kubeconfig';
import { readPlan } from '../../../src/plan/reader';
import { HISTORY_CONFIGMAP } from '../../../src/plan/types';
import { parseRecords, recordPlanFinished } from '../../../src/runtime/safety/record';
import { readSources } from '../../../src/runtime/safety/record-store';
import { Simulator, startSimulator } from '../../sim';
import { clients } from '../../sim/helpers';

const NS = 'records';
const plan = { ...readPlan(path.join(__dirname, '..', '..', '..', 'dist', 'install')), namespace: NS };
const FINISHED = { [plan.name]: JSON.stringify({ run: 'install-1', finishedAt: '2026-12-03T12:00:00.000Z', jobs: {} }) };

describe('the records a run writes when it is done', () => {
  let sim: Simulator;
  let cluster: Cluster;
  beforeEach(async () => {
    sim = await startSimulator();
    cluster = new Cluster(loadKubeConfig({ kubeconfig: sim.kubeconfigPath }));
    await clients(sim).core.createNamespace({ body: { metadata: { name: NS } } });
  });
  afterEach(() => sim.stop());

  const history = async () => (await clients(sim).core.readNamespacedConfigMap({ name: HISTORY_CONFIGMAP, namespace: NS })).data ?? {};

  it('writes the finished run and the identity together: each place read once and written once', async () => {
    const mark = sim.requests.length;
    await recordPlanFinished(cluster, plan, () => [], 'install-1', async () => FINISHED);
    const sent = sim.requests.slice(mark).map((r) => `${r.method} ${r.path}`);
    expect(sent.filter((r) => r.endsWith(`/configmaps/${HISTORY_CONFIGMAP}`))).toEqual([
      `GET /api/v1/namespaces/${NS}/configmaps/${HISTORY_CONFIGMAP}`, `PATCH /api/v1/namespaces/${NS}/configmaps/${HISTORY_CONFIGMAP}`,
    ]);
    expect(sent.filter((r) => r.endsWith(`/namespaces/${NS}`))).toEqual([`GET /api/v1/namespaces/${NS}`, `PATCH /api/v1/namespaces/${NS}`]);
    expect((await history())[plan.name]).toBe(FINISHED[plan.name]);
    const records = parseRecords(await readSources(cluster, NS));
    expect(records.identity).toMatchObject({ fqdn: plan.identity!.fqdn, plan: plan.name, run: 'install-1' });
  });

  it('writes the finished run alone when the identity record is damaged, which it leaves as it is', async () => {
    await clients(sim).core.createNamespacedConfigMap({ namespace: NS, body: { metadata: { name: HISTORY_CONFIGMAP }, data: { identity: 'not json' } } });
    await expect(recordPlanFinished(cluster, plan, () => [], 'install-1', async () => FINISHED)).rejects.toThrow(/identity.*not overwritten/);
    expect(await history()).toEqual({ identity: 'not json', ...FINISHED });
  });
});
