/**
 * A list-watch started from a listing the caller holds (issue 36: a step's wait on the one object
 * it wrote watches from the resourceVersion its apply answered, without a list first), against the
 * API simulator through the real client.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import { Cluster } from '../../../src/kube/cluster';
import { loadKubeConfig } from '../../../src/kube/load-kubeconfig';
import { Simulator, startSimulator } from '../../sim';

let sim: Simulator | undefined;
afterEach(async () => {
  await sim?.stop();
  sim = undefined;
});

const Q = { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'default', fieldSelector: 'metadata.name=one' };
const configMap = (data: Record<string, string>) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'one', namespace: 'default' }, data });
const configMapRequests = (s: Simulator) => s.requests.filter((r) => r.path === '/api/v1/namespaces/default/configmaps');

async function until(what: string, ok: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !ok(); i++) await new Promise((r) => setTimeout(r, 25));
  if (!ok()) throw new Error(`not seen: ${what}`);
}

describe('a watch from a listing', () => {
  it('hears the listing, sends no list, watches from its resourceVersion and hears what changed since', async () => {
    sim = await startSimulator();
    const cluster = new Cluster(loadKubeConfig({ kubeconfig: sim.kubeconfigPath }));
    const written = await cluster.apply(configMap({ a: '1' })) as KubernetesObject & { data?: Record<string, string> };
    const rv = written.metadata!.resourceVersion!;
    // changed between the write and the watch: the watch from the write's version still hears it
    await cluster.apply(configMap({ a: '2' }));
    const seen: Array<string | undefined> = [];
    const h = cluster.watch<KubernetesObject & { data?: Record<string, string> }>(Q, (items) => seen.push(items.get('default/one')?.data?.a), undefined, { items: [written], resourceVersion: rv });
    try {
      await until('the change after the listing', () => seen.includes('2'));
      expect(seen[0]).toBe('1');
      const sent = configMapRequests(sim);
      expect(sent.filter((r) => !/watch=true/.test(r.query))).toHaveLength(0);
      expect(sent.filter((r) => /watch=true/.test(r.query)).map((r) => new URLSearchParams(r.query).get('resourceVersion'))).toEqual([rv]);
    } finally {
      h.stop();
    }
  });

  it('stopped at once, hears nothing and sends nothing', async () => {
    sim = await startSimulator();
    const cluster = new Cluster(loadKubeConfig({ kubeconfig: sim.kubeconfigPath }));
    const written = await cluster.apply(configMap({ a: '1' }));
    let heard = 0;
    const mark = sim.requests.length;
    cluster.watch(Q, () => heard++, undefined, { items: [written], resourceVersion: written.metadata!.resourceVersion! }).stop();
    await new Promise((r) => setTimeout(r, 300));
    expect(heard).toBe(0);
    expect(configMapRequests(sim).filter((r) => sim!.requests.indexOf(r) >= mark)).toEqual([]);
  });
});
