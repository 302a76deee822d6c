/**
 * dist/proxy through the runtime against kube-apiserver, in a namespace of its own: the user's
 * objects from the proxy config tarball (proxy-configmap, httpd, ssh) made first, as the plan's
 * `requires` tell; the certificate and CA the certs Job makes from the tarball are made here too
 * (the fake kubelet runs no script), then the real Job, Deployment and PV controllers carry the
 * steps to done. The Secret proxy-cert is Opaque here: kube-apiserver warns on a kubernetes.io/tls
 * Secret whose tls.crt holds no PEM (the simulator does not look).
 */
import * as path from 'path';
import { readPlan } from '../../src/plan/reader';
import { cli } from '../runtime/e2e/harness';
import { plane, runOwn, writes } from './helpers';
import { auditSize, ROOT } from './plane/plane';

const p = plane();
const DIST = path.join(ROOT, 'dist', 'proxy');
const b64 = (s: string) => Buffer.from(s).toString('base64');

describe('dist/proxy against kube-apiserver', () => {
  const ns = p.namespace('proxy');
  const opts = { kubeconfig: p.kubeconfig, namespace: ns };
  const get = (kind: string, name: string) => p.get(ns, kind, name);

  beforeAll(async () => {
    // The keys test/proxy.test.ts lists for the proxy step's requires.
    const objects = [
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } },
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'proxy-configmap', namespace: ns }, data: { 'config.yaml': 'server: uyuni.example.com\n' } },
      { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'httpd', namespace: ns }, data: { 'httpd.yaml': b64('httpd: {}\n') } },
      { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'ssh', namespace: ns }, data: { 'ssh.yaml': b64('ssh: {}\n') } },
      { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'proxy-cert', namespace: ns }, data: { 'tls.crt': b64('cert'), 'tls.key': b64('key') } },
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'uyuni-ca', namespace: ns }, data: { 'ca.crt': 'ca' } },
    ];
    const r = await p.kubectl(['create', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }));
    expect({ code: r.code, err: r.err }).toEqual({ code: 0, err: '' });
  });

  afterAll(async () => {
    await p.kubectl(['delete', 'namespace', ns, '--wait=false']);
  });

  it('runs to done: the certs Job complete, the proxy and tftp Deployments available', async () => {
    const r = await cli('run', DIST, { ...opts, yes: true });
    expect({ code: r.code, err: r.err }).toEqual({ code: 0, err: expect.any(String) });
    expect(r.out).toMatch(/Run complete/);
    expect((await get('job', 'uyuni-proxy-certs'))?.status?.succeeded).toBe(1);
    for (const d of ['uyuni-proxy', 'uyuni-proxy-tftp']) expect([d, (await get('deployment', d))?.status?.availableReplicas]).toEqual([d, 1]);
    expect((await get('pvc', 'squid-cache'))?.status?.phase).toBe('Bound');
    // every object of the plan is there
    for (const s of readPlan(DIST).steps) {
      for (const o of s.objects.filter((x) => x.kind !== 'Namespace')) {
        expect([o.kind, o.name, (await p.kubectl(['-n', ns, 'get', o.kind, o.name])).code]).toEqual([o.kind, o.name, 0]);
      }
    }
  });

  it('plan then shows no change', async () => {
    const plan = await cli('plan', DIST, { ...opts, detailedExitcode: true });
    expect({ code: plan.code, out: plan.out }).toEqual({ code: 0, out: expect.stringContaining('unchanged') });
  });

  it('a second run writes nothing but its own lock and its record in the history', async () => {
    const mark = auditSize(p.dir);
    const again = await cli('run', DIST, { ...opts, yes: true });
    expect({ code: again.code, err: again.err }).toEqual({ code: 0, err: expect.any(String) });
    const sent = writes(p, mark, ns);
    expect(sent.filter((w) => / leases\//.test(w)).length).toBeGreaterThanOrEqual(2);
    expect(sent.filter((w) => !runOwn(w))).toEqual([]);
  });
});
