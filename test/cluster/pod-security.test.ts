/**
 * dist/install in namespaces labelled `pod-security.kubernetes.io/enforce=baseline` and
 * `=restricted` (issue 37, point 5, "PodSecurity"), against kube-apiserver v1.34.4's PodSecurity
 * admission. What the real server does: it accepts the Deployments (a `Warning` header `would
 * violate PodSecurity "baseline:latest": ...`, also with only an enforce label) and refuses their
 * pods, so the ReplicaSet controller's creates fail (FailedCreate events) and the rollout never
 * starts. Under baseline only the server's pod is refused (capability SYS_ADMIN); under restricted
 * the database's too. plan lists what would be refused; run says it on stderr before its lock.
 */
import * as fs from 'fs';
import * as path from 'path';
import { cli, tmpDir } from '../runtime/e2e/harness';
import { plane } from './helpers';
import { ROOT } from './plane/plane';

const p = plane();
const DIST = path.join(ROOT, 'dist', 'install');

async function labelled(ns: string, level: string): Promise<void> {
  expect((await p.kubectl(['create', 'namespace', ns])).code).toBe(0);
  expect((await p.kubectl(['label', 'namespace', ns, `pod-security.kubernetes.io/enforce=${level}`])).code).toBe(0);
}

describe('PodSecurity admission, enforce=baseline', () => {
  const ns = p.namespace('psa-baseline');
  const opts = { kubeconfig: p.kubeconfig, namespace: ns };
  afterAll(async () => {
    await p.kubectl(['delete', 'namespace', ns, '--wait=false']);
  });

  it('plan names the server\'s Deployment, whose pods baseline refuses (SYS_ADMIN), and not the database\'s', async () => {
    await labelled(ns, 'baseline');
    const plan = await cli('plan', DIST, opts);
    expect(plan.code).toBe(0);
    expect(plan.out).toContain(`pod security: namespace ${ns} (pod-security.kubernetes.io/enforce=baseline)\n`
      + '  kube-apiserver\'s PodSecurity admission would refuse the pods of (run would apply them, then wait until its deadline for pods that are never created):\n'
      + `    Deployment/uyuni (${ns}): violates "baseline:latest": non-default capabilities (container "uyuni" must not include "SYS_ADMIN" in securityContext.capabilities.add)\n`);
    expect(plan.out).not.toMatch(/Deployment\/db .*violates/);
  });

  it('run says so on stderr before its lock; the server\'s pods are then refused and the run stops at its deadline', async () => {
    const runDir = tmpDir();
    const run = await cli('run', DIST, { ...opts, yes: true, adopt: true, timeout: 30, runDir });
    expect(run.code).toBe(1);
    expect(run.err).toContain(`uyuni-cdk: warning: pod security: namespace ${ns} (pod-security.kubernetes.io/enforce=baseline)`);
    const events = fs.readFileSync(path.join(runDir, 'events.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    const at = (pred: (e: any) => boolean) => events.findIndex(pred);
    expect(at((e) => e.type === 'pod-security')).toBeGreaterThan(-1);
    expect(at((e) => e.type === 'pod-security')).toBeLessThan(at((e) => e.type === 'action' && e.action === 'lock'));
    // what the real server did: the database runs, the server's pods are forbidden
    expect(run.err).toMatch(/pods "uyuni-[a-z0-9]+-[a-z0-9]+" is forbidden: violates PodSecurity "baseline:latest": non-default capabilities/);
    const db = JSON.parse((await p.kubectl(['-n', ns, 'get', 'deployment', 'db', '-o', 'json'])).out);
    expect(db.status.availableReplicas).toBe(1);
    const pods = JSON.parse((await p.kubectl(['-n', ns, 'get', 'pods', '-l', 'app.kubernetes.io/component=server', '-o', 'json'])).out).items;
    expect(pods.filter((x: any) => x.metadata.name.startsWith('uyuni-'))).toEqual([]);
  }, 120_000);
});

describe('PodSecurity admission, enforce=restricted', () => {
  const ns = p.namespace('psa-restricted');
  afterAll(async () => {
    await p.kubectl(['delete', 'namespace', ns, '--wait=false']);
  });

  it('plan names both Deployments: the database runs as root, neither drops its capabilities nor sets a seccomp profile', async () => {
    await labelled(ns, 'restricted');
    const plan = await cli('plan', DIST, { kubeconfig: p.kubeconfig, namespace: ns });
    expect(plan.code).toBe(0);
    expect(plan.out).toContain(`    Deployment/db (${ns}): violates "restricted:latest": allowPrivilegeEscalation != false`);
    expect(plan.out).toMatch(/Deployment\/db .*runAsUser=0 \(containers "data-dir", "pods-cidr" must not set runAsUser=0\)/);
    expect(plan.out).toMatch(/Deployment\/uyuni .*violates "restricted:latest": .*container "uyuni" must not include "SYS_ADMIN"/);
    expect(plan.out).toMatch(/Deployment\/uyuni .*seccompProfile \(pod or containers "init-volumes", "db-waiter", "uyuni" must set securityContext\.seccompProfile\.type to "RuntimeDefault" or "Localhost"\)/);
  });
});
