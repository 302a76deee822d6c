/**
 * `destroy --yes` waits, as `kubectl delete` does, until what it deleted is gone (the namespace
 * too, which the API server keeps Terminating until it is empty), with progress lines and a
 * deadline (`--timeout`); `--wait=false` returns at once; a closing summary line.
 */
import { startSimulator, Simulator } from '../../sim';
import { cli, spawnCli, until } from './harness';
import { deployment, job, namespace, NS, writePlan } from '../plans';

let sim: Simulator;
afterEach(async () => {
  await sim?.stop();
});

/** A plan with a ConfigMap that a finalizer holds once deleted (as a controller's would). */
const held = () => writePlan([
  { name: 'namespace', objects: [namespace()] },
  { name: 'config', objects: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'held', namespace: NS, finalizers: ['example.com/hold'] }, data: { a: '1' } }] },
  { name: 'work', objects: [job('work')] },
]);

/** What the controller holding the ConfigMap does when it is done: removes its finalizer. */
async function release(): Promise<void> {
  const res = await fetch(`${sim.url}/api/v1/namespaces/${NS}/configmaps/held`, {
    method: 'PATCH', headers: { 'content-type': 'application/merge-patch+json' }, body: JSON.stringify({ metadata: { finalizers: null } }),
  });
  expect(res.status).toBe(200);
}

describe('destroy --yes waits until what it deleted is gone', () => {
  it('prints what it waits for (the Terminating namespace, the finalizer), returns once all is gone, then the summary', async () => {
    sim = await startSimulator();
    const dir = held();
    expect((await cli('run', dir, { kubeconfig: sim.kubeconfigPath })).code).toBe(0);
    let finished = false;
    const destroying = cli('destroy', dir, { kubeconfig: sim.kubeconfigPath, yes: true, purgeVolumes: true }).finally(() => { finished = true; });
    // the in-process run's stderr is only returned at the end: watch the cluster instead
    const start = Date.now();
    while (!sim.get('v1', 'Namespace', NS)?.metadata?.deletionTimestamp && Date.now() - start < 20_000) await new Promise((r) => setTimeout(r, 20));
    await new Promise((r) => setTimeout(r, 1500));
    expect(finished).toBe(false);
    expect(sim.get('v1', 'Namespace', NS)?.status?.phase).toBe('Terminating');
    await release();
    const r = await destroying;
    expect(r.code).toBe(0);
    expect(sim.get('v1', 'Namespace', NS)).toBeUndefined();
    expect(r.err).toMatch(new RegExp(`destroy: waiting for 2 deleted objects to be gone: ConfigMap/held \\(${NS}\\) \\(being deleted, finalizers example.com/hold\\), Namespace/${NS} \\(Terminating, finalizers kubernetes\\) \\(\\d+s of 600s\\)`));
    expect(r.out).toMatch(/deleted {7}Namespace\/uyuni-test/);
    expect(r.out.trim().split('\n').pop()).toBe('Destroy complete: 5 deleted and gone.');
  });

  it('an object made again under the same name (another uid) while destroy waits: what it deleted is gone, the new one is neither waited for nor deleted', async () => {
    sim = await startSimulator();
    // the namespace is not the plan's: only the ConfigMap is deleted and waited for
    sim.put({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS, labels: { 'kubernetes.io/metadata.name': NS } }, spec: { finalizers: ['kubernetes'] }, status: { phase: 'Active' } });
    const dir = writePlan([{ name: 'config', objects: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'held', namespace: NS, finalizers: ['example.com/hold'] }, data: { a: '1' } }] }]);
    expect((await cli('run', dir, { kubeconfig: sim.kubeconfigPath })).code).toBe(0);
    const first = sim.get('v1', 'ConfigMap', 'held', NS);
    const destroying = cli('destroy', dir, { kubeconfig: sim.kubeconfigPath, yes: true, timeout: 4 });
    await until('the ConfigMap being deleted', () => Boolean(sim.get('v1', 'ConfigMap', 'held', NS)?.metadata?.deletionTimestamp));
    // its controller lets it go, and someone makes it again at once, with the plan's labels
    await release();
    sim.put({ ...first, metadata: { name: 'held', namespace: NS, labels: first.metadata.labels } });
    const remade = sim.get('v1', 'ConfigMap', 'held', NS);
    expect(remade.metadata.uid).not.toBe(first.metadata.uid);
    const r = await destroying;
    expect(r.code).toBe(0);
    expect(r.out.trim().split('\n').pop()).toMatch(/^Destroy complete: \d+ deleted and gone/);
    const after = sim.get('v1', 'ConfigMap', 'held', NS);
    expect(after?.metadata?.uid).toBe(remade.metadata.uid);
    expect(after?.metadata?.deletionTimestamp).toBeUndefined();
  });

  it('--timeout: exit 1 naming what is still there, which the cluster goes on deleting', async () => {
    sim = await startSimulator();
    const dir = held();
    expect((await cli('run', dir, { kubeconfig: sim.kubeconfigPath })).code).toBe(0);
    const r = await cli('destroy', dir, { kubeconfig: sim.kubeconfigPath, yes: true, purgeVolumes: true, timeout: 2 });
    expect(r.code).toBe(1);
    expect(r.err).toContain(`uyuni-cdk: timed out after 2s waiting for what destroy deleted to be gone: 2 still there: ConfigMap/held (${NS}) (being deleted, finalizers example.com/hold), Namespace/${NS} (Terminating`);
    expect(r.err).toContain('run the same destroy again to wait again');
    expect(sim.get('v1', 'Namespace', NS)?.status?.phase).toBe('Terminating');
  });

  it('--wait=false (the real CLI) returns once the deletes are sent, saying it did not wait', async () => {
    sim = await startSimulator();
    const dir = held();
    expect((await cli('run', dir, { kubeconfig: sim.kubeconfigPath })).code).toBe(0);
    const r = await spawnCli(['destroy', dir, '--kubeconfig', sim.kubeconfigPath, '--yes', '--purge-volumes', '--wait=false']).done;
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(sim.get('v1', 'Namespace', NS)?.status?.phase).toBe('Terminating');
    expect(r.out.trim().split('\n').pop()).toBe('Destroy started: 5 deleted, not waited for (--wait=false).');
  });

  it('a dry run and a destroy that keeps the data close with what was kept', async () => {
    sim = await startSimulator();
    const dir = writePlan([
      { name: 'namespace', objects: [namespace()] },
      { name: 'volumes', objects: [{ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'data', namespace: NS }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }] },
      { name: 'work', objects: [job('work')] },
    ]);
    expect((await cli('run', dir, { kubeconfig: sim.kubeconfigPath })).code).toBe(0);
    const dry = await cli('destroy', dir, { kubeconfig: sim.kubeconfigPath });
    expect(dry.out.trim().split('\n').pop()).toBe('Dry run: 2 would be deleted, 3 kept (1 ConfigMap, 1 PersistentVolumeClaim, 1 Namespace; --purge-volumes deletes the data). Nothing was deleted: --yes deletes.');
    const r = await cli('destroy', dir, { kubeconfig: sim.kubeconfigPath, yes: true });
    expect(r.code).toBe(0);
    expect(sim.get('batch/v1', 'Job', 'work', NS)).toBeUndefined();
    expect(r.out.trim().split('\n').pop()).toBe('Destroy complete: 2 deleted and gone, 3 kept (1 ConfigMap, 1 PersistentVolumeClaim, 1 Namespace; --purge-volumes deletes the data).');
  });
});

describe('destroy stops the server before its database', () => {
  /** Deployment `name` whose pods are component `component`, as the server plans label them. */
  const workload = (name: string, component: string) => {
    const d = deployment(name);
    const labels = { app: name, 'app.kubernetes.io/component': component };
    return { ...d, spec: { ...d.spec, template: { ...d.spec.template, metadata: { labels } } } };
  };
  /** The server's steps as install orders them: the database before the server. */
  const serverPlan = () => writePlan([
    { name: 'namespace', objects: [namespace()] },
    { name: 'database', objects: [workload('db', 'db')] },
    { name: 'server', objects: [workload('uyuni', 'server'), workload('tftp', 'tftp')] },
  ]);
  const STOPPING = 'uyuni-stopping';
  /**
   * A pod of the server that is slow to go (its preStop, its 180 s of grace): the simulator
   * removes a deleted pod after a virtual second, so this one is a pod of the server's labels that
   * nothing deletes but the test.
   */
  function slowServerPod(): void {
    sim.put({
      apiVersion: 'v1', kind: 'Pod', metadata: { name: STOPPING, namespace: NS, labels: { app: 'uyuni', 'app.kubernetes.io/component': 'server' } },
      spec: { containers: [{ name: 'main', image: 'registry.opensuse.org/uyuni/server:latest' }] },
    });
  }
  async function podGone(): Promise<void> {
    const res = await fetch(`${sim.url}/api/v1/namespaces/${NS}/pods/${STOPPING}`, {
      method: 'DELETE', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ apiVersion: 'v1', kind: 'DeleteOptions', gracePeriodSeconds: 0 }),
    });
    expect(res.status).toBe(200);
    await until('the slow pod is gone', () => !sim.get('v1', 'Pod', STOPPING, NS));
  }
  const dbPods = () => sim.list('v1', 'Pod', NS).filter((p) => p.metadata.labels?.app === 'db' && !p.metadata.deletionTimestamp);

  it('deletes Deployment db only once the pods of the server\'s Deployments are gone, and says so; the dry run says it will', async () => {
    sim = await startSimulator({ deployments: { uyuni: {}, tftp: {}, db: {} } });
    const dir = serverPlan();
    expect((await cli('run', dir, { kubeconfig: sim.kubeconfigPath })).code).toBe(0);
    slowServerPod();

    const dry = await cli('destroy', dir, { kubeconfig: sim.kubeconfigPath });
    expect(dry.out).toContain(`would delete  Deployment/db (${NS})  (after the pods of Deployment/tftp (${NS}), Deployment/uyuni (${NS}) are gone: the database stops last)`);

    let finished = false;
    const destroying = cli('destroy', dir, { kubeconfig: sim.kubeconfigPath, yes: true }).finally(() => { finished = true; });
    await until('the server\'s Deployments are deleted', () => !sim.get('apps/v1', 'Deployment', 'uyuni', NS) && !sim.get('apps/v1', 'Deployment', 'tftp', NS));
    await new Promise((r) => setTimeout(r, 1500));
    expect(finished).toBe(false);
    // the database still runs while a pod of the server is there
    expect(sim.get('apps/v1', 'Deployment', 'db', NS)?.metadata?.deletionTimestamp).toBeUndefined();
    expect(dbPods()).toHaveLength(1);

    await podGone();
    const r = await destroying;
    expect(r.code).toBe(0);
    expect(sim.get('apps/v1', 'Deployment', 'db', NS)).toBeUndefined();
    expect(r.err).toContain(`destroy: waiting for 1 pod of the server to be gone before deleting Deployment/db (${NS}): Pod/${STOPPING} (of Deployment/uyuni (${NS}))`);
    expect(r.out).toMatch(new RegExp(`deleted {7}Deployment/db \\(${NS}\\) {2}\\(after the pods of Deployment/tftp \\(${NS}\\), Deployment/uyuni \\(${NS}\\) were gone \\(\\d+s\\): the database stops last\\)`));
  });

  it('--timeout: refuses to delete the database while a pod of the server is still there, and leaves it running', async () => {
    sim = await startSimulator({ deployments: { uyuni: {}, tftp: {}, db: {} } });
    const dir = serverPlan();
    expect((await cli('run', dir, { kubeconfig: sim.kubeconfigPath })).code).toBe(0);
    slowServerPod();
    const r = await cli('destroy', dir, { kubeconfig: sim.kubeconfigPath, yes: true, timeout: 2 });
    expect(r.code).toBe(1);
    expect(r.err).toContain(`uyuni-cdk: timed out after 2s waiting for the server's pods to be gone before deleting Deployment/db (${NS}): Pod/${STOPPING} (of Deployment/uyuni (${NS})) still there; the database was not deleted`);
    expect(sim.get('apps/v1', 'Deployment', 'db', NS)?.metadata?.deletionTimestamp).toBeUndefined();
    expect(dbPods()).toHaveLength(1);
    expect(sim.get('apps/v1', 'Deployment', 'uyuni', NS)).toBeUndefined();
  });
});
