/**
 * `destroy --yes` waits for what it deleted by uid, on kube-apiserver: a ConfigMap that a
 * finalizer holds is deleted, its controller lets it go, and someone makes it again under the same
 * name at once. The new one has another uid, so what destroy deleted is gone: destroy ends (exit
 * 0) and leaves the new one alone, neither waited for until the timeout nor deleted again.
 */
import { cli } from '../runtime/e2e/harness';
import { NS, writePlan } from '../runtime/plans';
import { plane, until } from './helpers';

const p = plane();
const ns = p.namespace('uyuni-cdk-uid');

afterAll(async () => {
  await p.kubectl(['delete', 'namespace', ns, '--wait=false', '--ignore-not-found']);
});

it('an object made again under the same name while destroy waits is not the one it deleted', async () => {
  // the namespace is not the plan's: only the ConfigMap (and the run's own bookkeeping) is deleted
  expect((await p.kubectl(['create', 'namespace', ns])).code).toBe(0);
  const dir = writePlan([{ name: 'config', objects: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'held', namespace: NS, finalizers: ['example.com/hold'] }, data: { a: '1' } }] }], { name: 'uid' });
  const run = await cli('run', dir, { kubeconfig: p.kubeconfig, namespace: ns });
  expect(run.code).toBe(0);
  const uidOf = async () => (await p.kubectl(['-n', ns, 'get', 'configmap', 'held', '-o', 'jsonpath={.metadata.uid} {.metadata.deletionTimestamp}'])).out.trim();
  const [first] = (await uidOf()).split(' ');
  expect(first).toMatch(/^[0-9a-f-]{36}$/);
  const destroying = cli('destroy', dir, { kubeconfig: p.kubeconfig, namespace: ns, yes: true, timeout: 30 });
  await until('the ConfigMap being deleted', async () => (await uidOf()).split(' ')[1]);
  // its controller lets it go; someone makes it again at once
  expect((await p.kubectl(['-n', ns, 'patch', 'configmap', 'held', '--type', 'merge', '-p', '{"metadata":{"finalizers":null}}'])).code).toBe(0);
  expect((await p.kubectl(['-n', ns, 'create', 'configmap', 'held', '--from-literal=a=2'])).code).toBe(0);
  const r = await destroying;
  expect(r.err).not.toContain('timed out');
  expect(r.code).toBe(0);
  expect(r.out.trim().split('\n').pop()).toMatch(/^Destroy complete: \d+ deleted and gone/);
  const after = (await uidOf()).split(' ');
  expect(after[0]).toMatch(/^[0-9a-f-]{36}$/);
  expect(after[0]).not.toBe(first);
  expect(after[1]).toBeUndefined(); // not being deleted: destroy did not delete it again
});
