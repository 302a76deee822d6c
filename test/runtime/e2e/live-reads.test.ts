/**
 * The live objects a decision reads (src/runtime/core/live-reads.ts, issue 36), against the simulator:
 * one LIST per kind and namespace that holds several, a GET for the others, each object read once
 * per snapshot, and a LIST that RBAC forbids read by GETs instead.
 */
import { loadKubeConfig } from '../../../src/kube/kubeconfig';
import { limiter } from '../../../src/kube/limit';
import type { ObjectRef } from '../../../src/plan/types';
import { Cluster } from '../../../src/kube/cluster';
import { MissingKind } from '../../../src/kube/api-errors';
import { prefetchObjects, readObjects, withSnapshot } from '../../../src/runtime/core/live-reads';
import { startSimulator, Simulator } from '../../sim';

const NS = 'uyuni';
let sim: Simulator;
afterEach(async () => {
  await sim?.stop();
});

const service = (name: string): ObjectRef => ({ apiVersion: 'v1', kind: 'Service', name, namespace: NS });
const claim = (name: string): ObjectRef => ({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', name, namespace: NS });

async function setUp(): Promise<Cluster> {
  sim = await startSimulator();
  sim.put({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
  for (const name of ['web', 'db']) sim.put({ apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: NS }, spec: { ports: [{ port: 80 }] } });
  sim.put({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'var-cache', namespace: NS }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } });
  return new Cluster(loadKubeConfig({ kubeconfig: sim.kubeconfigPath }));
}

/** What was asked since `mark`, as `GET path?query` (no discovery). */
const asked = (mark: number) => sim.requests.slice(mark).filter((q) => /\/namespaces\//.test(q.path) || /\/namespaces$/.test(q.path))
  .map((q) => `${q.method} ${q.path}${q.query ? `?${q.query}` : ''}`);

describe('the live objects of a decision', () => {
  it('reads several objects of a kind with one LIST, one of a kind with a GET; absent objects and kinds nobody serves are undefined', async () => {
    const cluster = await setUp();
    await cluster.ping();
    const refs = [service('web'), service('gone'), service('db'), claim('var-cache'), { apiVersion: 'example.com/v1', kind: 'Nothing', name: 'x', namespace: NS }];
    const mark = sim.requests.length;
    const read = await readObjects(cluster, refs);
    expect(read.map((o) => o?.metadata?.name)).toEqual(['web', undefined, 'db', 'var-cache', undefined]);
    expect(read[0]).toMatchObject({ apiVersion: 'v1', kind: 'Service' });
    expect(asked(mark).sort()).toEqual([
      `GET /api/v1/namespaces/${NS}/persistentvolumeclaims/var-cache`,
      `GET /api/v1/namespaces/${NS}/services?limit=500`,
    ]);
  });

  it('a snapshot reads each object once, however often it is asked, and keeps a missing kind for who asks', async () => {
    const cluster = await setUp();
    await cluster.ping();
    const snap = withSnapshot(cluster, limiter());
    const mark = sim.requests.length;
    prefetchObjects(snap, [service('web'), service('db')]);
    const [a, b, c] = await Promise.all([snap.get(service('web')), snap.get(service('web')), snap.get(service('db'))]);
    expect([a?.metadata?.name, b?.metadata?.name, c?.metadata?.name]).toEqual(['web', 'web', 'db']);
    expect(await snap.get(claim('var-cache'))).toMatchObject({ metadata: { name: 'var-cache' } });
    expect(await snap.get(claim('var-cache'))).toMatchObject({ metadata: { name: 'var-cache' } });
    expect(asked(mark)).toEqual([`GET /api/v1/namespaces/${NS}/services?limit=500`, `GET /api/v1/namespaces/${NS}/persistentvolumeclaims/var-cache`]);
    await expect(snap.get({ apiVersion: 'example.com/v1', kind: 'Nothing', name: 'x', namespace: NS })).rejects.toBeInstanceOf(MissingKind);
  });

  it('reads by GET, each object, when RBAC forbids the LIST', async () => {
    const cluster = await setUp();
    await cluster.ping();
    sim.setForbidden([{ verbs: ['list'], resource: 'services' }]);
    const mark = sim.requests.length;
    const read = await readObjects(cluster, [service('web'), service('db'), service('gone')]);
    expect(read.map((o) => o?.metadata?.name)).toEqual(['web', 'db', undefined]);
    const sent = sim.requests.slice(mark).filter((q) => q.path.includes('/services'));
    expect(sent.map((q) => `${q.status} ${q.path}`).sort()).toEqual([
      `200 /api/v1/namespaces/${NS}/services/db`,
      `200 /api/v1/namespaces/${NS}/services/web`,
      `403 /api/v1/namespaces/${NS}/services`,
      `404 /api/v1/namespaces/${NS}/services/gone`,
    ]);
  });

  it('never lists Secrets: each one asked for is read by name', async () => {
    const cluster = await setUp();
    await cluster.ping();
    for (const name of ['a', 'b']) sim.put({ apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: NS }, data: {} });
    sim.put({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'someone-elses', namespace: NS }, data: {} });
    const mark = sim.requests.length;
    const secret = (name: string): ObjectRef => ({ apiVersion: 'v1', kind: 'Secret', name, namespace: NS });
    expect((await readObjects(cluster, [secret('a'), secret('b')])).map((o) => o?.metadata?.name)).toEqual(['a', 'b']);
    expect(asked(mark).sort()).toEqual([`GET /api/v1/namespaces/${NS}/secrets/a`, `GET /api/v1/namespaces/${NS}/secrets/b`]);
  });
});
