/**
 * dist/install through the runtime against kube-apiserver: the real Deployment, ReplicaSet,
 * PV and namespace controllers behind it, the fake kubelet running the pods and writing what
 * cert-manager would. What the plane's audit log records is what the runtime sent.
 */
import * as path from 'path';
import { cli } from '../runtime/e2e/harness';
import { plane, until, writes as writesOf } from './helpers';
import { auditSize, ROOT } from './plane/plane';

const p = plane();
const writes = (mark: number, ns: string) => writesOf(p, mark, ns);
const DIST = path.join(ROOT, 'dist', 'install');
describe('dist/install against kube-apiserver', () => {
  const ns = p.namespace('install');
  const opts = { kubeconfig: p.kubeconfig, namespace: ns };

  afterAll(async () => {
    await p.kubectl(['delete', 'namespace', ns, '--wait=false']);
  });

  it('runs to an available server, and plan then shows no change', async () => {
    const first = await cli('run', DIST, { ...opts, yes: true });
    expect({ code: first.code, err: first.err }).toEqual({ code: 0, err: expect.any(String) });
    expect(first.out).toMatch(/Run complete/);
    const deploy = JSON.parse((await p.kubectl(['-n', ns, 'get', 'deployment', 'uyuni', '-o', 'json'])).out);
    expect(deploy.status.availableReplicas).toBe(1);
    const claims = JSON.parse((await p.kubectl(['-n', ns, 'get', 'pvc', '-o', 'json'])).out).items;
    expect(claims.length).toBe(26);

    const plan = await cli('plan', DIST, { ...opts, detailedExitcode: true });
    expect({ code: plan.code, out: plan.out }).toEqual({ code: 0, out: expect.stringContaining('unchanged') });
  });

  it('a second run writes nothing but its own lock and its record in the history', async () => {
    const mark = auditSize(p.dir);
    const again = await cli('run', DIST, { ...opts, yes: true });
    expect(again.code).toBe(0);
    const sent = writes(mark, ns);
    // The lock: a Lease created, renewed while the run lasts, deleted at the end.
    expect(sent.filter((w) => / leases\//.test(w)).length).toBeGreaterThanOrEqual(2);
    // The run's records in ConfigMap uyuni-cdk-history, one write for the finished run and the
    // server's identity together, and their copy on the Namespace (an annotation: docs/runtime.md
    // "Safety"); no object of the plan.
    expect(sent.filter((w) => !/ leases\//.test(w)).sort()).toEqual([
      'patch configmaps/uyuni-cdk-history 200', `patch namespaces/${ns} (records copy) 200`,
    ]);
  });

  it('shows a kubectl scale and a kubectl label as drift, and run takes them back', async () => {
    expect((await p.kubectl(['-n', ns, 'scale', 'deployment', 'uyuni', '--replicas=0'])).code).toBe(0);
    expect((await p.kubectl(['-n', ns, 'label', 'service', 'web', 'app.kubernetes.io/component=edited', '--overwrite'])).code).toBe(0);
    const plan = await cli('plan', DIST, { ...opts, detailedExitcode: true });
    expect(plan.code).toBe(2);
    expect(plan.out).toMatch(/Deployment\/uyuni[\s\S]*replicas/);
    expect(plan.out).toMatch(/Service\/web/);
    const run = await cli('run', DIST, { ...opts, yes: true });
    expect(run.code).toBe(0);
    await until('uyuni back at 1 replica', async () => JSON.parse((await p.kubectl(['-n', ns, 'get', 'deployment', 'uyuni', '-o', 'json'])).out).status.availableReplicas === 1);
    const svc = JSON.parse((await p.kubectl(['-n', ns, 'get', 'service', 'web', '-o', 'json'])).out);
    expect(svc.metadata.labels['app.kubernetes.io/component']).toBe('server');
    expect((await cli('plan', DIST, { ...opts, detailedExitcode: true })).code).toBe(0);
  });

  it('refuses, in plan and in run, a Service whose part-of label now names another owner, and writes nothing', async () => {
    expect((await p.kubectl(['-n', ns, 'label', 'service', 'web', 'app.kubernetes.io/part-of=someone-else', '--overwrite'])).code).toBe(0);
    const plan = await cli('plan', DIST, { ...opts, detailedExitcode: true });
    expect(plan.code).toBe(1);
    expect(plan.out).toMatch(/refuse\s+Service\/web .*part-of someone-else/);
    const mark = auditSize(p.dir);
    const run = await cli('run', DIST, { ...opts, yes: true });
    expect(run.code).not.toBe(0);
    expect(writes(mark, ns).filter((w) => !/ leases\//.test(w))).toEqual([]);
    await p.kubectl(['-n', ns, 'label', 'service', 'web', 'app.kubernetes.io/part-of=uyuni', '--overwrite']);
  });

  it('destroy --yes deletes what the plan made and keeps the claims, as documented', async () => {
    const dry = await cli('destroy', DIST, opts);
    expect(dry.code).toBe(0);
    // the database goes last, once the server's pods are gone (docs/upstream.md, decision n)
    expect(dry.out).toContain(`would delete  Deployment/db (${ns})  (after the pods of `);
    const done = await cli('destroy', DIST, { ...opts, yes: true });
    expect({ code: done.code, err: done.err }).toEqual({ code: 0, err: expect.any(String) });
    expect(done.out.split('\n').find((l) => l.includes('Deployment/db'))).toMatch(/^ {2}deleted {7}Deployment\/db \(\S+\) {2}\(after the pods of .*Deployment\/uyuni .* were gone \(\d+s\): the database stops last\)$/);
    expect((await p.kubectl(['-n', ns, 'get', 'deployment', 'uyuni'])).code).not.toBe(0);
    const claims = JSON.parse((await p.kubectl(['-n', ns, 'get', 'pvc', '-o', 'json'])).out).items;
    expect(claims.length).toBe(26);
  });
});
