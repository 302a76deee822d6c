/**
 * What docs/runtime.md claims of the verbs beyond install and upgrade, shown once on
 * kube-apiserver (issue 37 point 6): the lock (one run per namespace, through the real Lease
 * create's 409; unlock), pruning with the ApplySet (the hub scenario: a configuration that drops
 * objects, kubectl's refusal of our parent), and `logs` of a step through the real pods/log.
 */
import { spawnSync } from 'child_process';
import * as os from 'os';
import * as path from 'path';
import { defaultConfigWith, synthYaml } from '../helpers/synth';
import { cli, spawnCli, tmpDir } from '../runtime/e2e/harness';
import { job, namespace, writePlan } from '../runtime/plans';
import { plane, runOwn, until, writes } from './helpers';
import { auditEvents, auditSize, ROOT } from './plane/plane';

const p = plane();

describe('the lock, against kube-apiserver', () => {
  const ns = p.namespace('lock');
  const opts = { kubeconfig: p.kubeconfig, namespace: ns };
  afterAll(async () => {
    await p.kubectl(['delete', 'namespace', ns, '--wait=false']);
  });

  it('a second run while one runs exits 1 naming it, its one write a Lease create refused 409; destroy too; --lock-timeout waits; unlock', async () => {
    p.scenario({ jobs: { work: { durationMs: 12_000, logs: ['working'] } } }, ns);
    const dir = writePlan([
      { name: 'namespace', objects: [namespace()] },
      { name: 'work', objects: [job('work', 'sleep 12')], timeoutSeconds: 300 },
    ]);
    const first = cli('run', dir, { ...opts, yes: true });
    const lease = async () => {
      const r = await p.kubectl(['-n', ns, 'get', 'lease', 'uyuni-cdk-lock', '-o', 'json']);
      return r.code === 0 ? JSON.parse(r.out) : undefined;
    };
    const held = await until('the first run holds the lock, its Job running', async () => {
      const l = await lease();
      const j = await p.kubectl(['-n', ns, 'get', 'job', 'work', '-o', 'jsonpath={.status.active}']);
      return l && j.out === '1' && l;
    });
    const holder = held.spec.holderIdentity as string;
    expect(held.metadata.annotations).toMatchObject({ 'uyuni-cdk.io/lock-pid': String(process.pid), 'uyuni-cdk.io/lock-host': os.hostname(), 'uyuni-cdk.io/lock-verb': 'run' });

    const mark = auditSize(p.dir);
    const second = await cli('run', dir, { ...opts, yes: true });
    expect(second.code).toBe(1);
    expect(second.err).toContain(`namespace ${ns} is locked by run ${holder} (plan install)`);
    expect(second.err).toContain(`uyuni-cdk unlock -n ${ns} ${holder}`);
    // what the refused run sent that changes anything: its attempt to create the Lease, which the
    // API server refused as AlreadyExists (creating an object is atomic: of two runs one wins)
    expect(writes(p, mark, ns)).toEqual(['create leases/uyuni-cdk-lock 409']);
    const destroy = await cli('destroy', dir, { ...opts, yes: true });
    expect(destroy.code).toBe(1);
    expect(destroy.err).toContain(`is locked by run ${holder}`);

    const waiting = await cli('run', dir, { ...opts, yes: true, lockTimeout: 120 });
    expect((await first).code).toBe(0);
    expect(waiting.code).toBe(0);
    expect(await lease()).toBeUndefined();

    // A Lease another host holds and renews: refused; unlock with its run id removes it.
    const now = new Date().toISOString().replace(/Z$/, '000Z');
    const foreign = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'uyuni-cdk-lock', namespace: ns, annotations: {
      'uyuni-cdk.io/lock-run': 'install-20261201T000000Z', 'uyuni-cdk.io/lock-user': 'alice', 'uyuni-cdk.io/lock-host': 'admin-box-elsewhere',
      'uyuni-cdk.io/lock-pid': '4242', 'uyuni-cdk.io/lock-plan': 'install', 'uyuni-cdk.io/lock-verb': 'run', 'uyuni-cdk.io/lock-started': '2026-12-01T00:00:00Z',
    } }, spec: { holderIdentity: 'install-20261201T000000Z', leaseDurationSeconds: 600, acquireTime: now, renewTime: now } };
    expect((await p.kubectl(['create', '-f', '-'], JSON.stringify(foreign))).code).toBe(0);
    const refused = await cli('run', dir, { ...opts, yes: true });
    expect(refused.code).toBe(1);
    expect(refused.err).toContain(`is locked by run install-20261201T000000Z (plan install) by alice@admin-box-elsewhere, pid 4242`);
    const unlock = await spawnCli(['unlock', '--kubeconfig', p.kubeconfig, '-n', ns, 'install-20261201T000000Z']).done;
    expect({ code: unlock.code, err: unlock.err }).toEqual({ code: 0, err: '' });
    expect(unlock.out).toContain(`removed the lock of namespace ${ns}: run install-20261201T000000Z`);
    expect(await lease()).toBeUndefined();
  }, 180_000);
});

describe('pruning with the ApplySet, against kube-apiserver', () => {
  const ns = p.namespace('prune');
  const opts = { kubeconfig: p.kubeconfig, namespace: ns };
  afterAll(async () => {
    await p.kubectl(['delete', 'namespace', ns, '--wait=false']);
  });
  const withHub = synthYaml(defaultConfigWith({ hubApi: { replicas: 1 } })).install.dir;
  const withoutHub = synthYaml(defaultConfigWith({ hubApi: { replicas: 0 } })).install.dir;
  const exists = async (kind: string, name: string) => (await p.kubectl(['-n', ns, 'get', kind, name])).code === 0;

  it('a configuration without the hub: plan lists its objects as delete, run asks, then deletes them; the claims stay', async () => {
    const first = await cli('run', withHub, { ...opts, yes: true });
    expect({ code: first.code, err: first.err }).toEqual({ code: 0, err: expect.any(String) });
    expect(await exists('deployment', 'uyuni-hub-xmlrpc')).toBe(true);
    const parent = JSON.parse((await p.kubectl(['-n', ns, 'get', 'configmap', 'uyuni-applyset', '-o', 'json'])).out);
    expect(parent.metadata.annotations['applyset.kubernetes.io/contains-group-kinds']).toContain('Deployment.apps');

    const plan = await cli('plan', withoutHub, opts);
    expect(plan.code).toBe(0);
    const deletes = plan.out.split('\n').filter((l) => /^\s+delete\s/.test(l)).map((l) => l.trim().split(/\s+/)[1]).sort();
    expect(deletes).toEqual(['Deployment/uyuni-hub-xmlrpc', 'Ingress/hubapi-ingress-ssl', 'Service/hub-xmlrpc']);

    const mark = auditSize(p.dir);
    const refused = await cli('run', withoutHub, opts);
    expect(refused.code).toBe(2);
    expect(refused.err).toContain('3 destructive changes and no terminal to ask on: nothing was done');
    expect(writes(p, mark, ns).filter((w) => !runOwn(w))).toEqual([]);

    const run = await cli('run', withoutHub, { ...opts, yes: true });
    expect(run.code).toBe(0);
    expect(run.out).toMatch(/prune \(propagationPolicy Background\) Deployment\/uyuni-hub-xmlrpc \([^)]*\): deleted/);
    await until('the hub gone', async () => !(await exists('deployment', 'uyuni-hub-xmlrpc')) && !(await exists('service', 'hub-xmlrpc')));
    expect(await exists('ingress', 'hubapi-ingress-ssl')).toBe(false);
    expect(JSON.parse((await p.kubectl(['-n', ns, 'get', 'pvc', '-o', 'json'])).out).items.length).toBeGreaterThan(20);
    expect((await cli('plan', withoutHub, { ...opts, detailedExitcode: true })).code).toBe(0);
  }, 180_000);

  it('kubectl apply --prune --applyset refuses our parent (tooling uyuni-cdk) and deletes nothing', async () => {
    const mark = auditSize(p.dir);
    const svc = { apiVersion: 'v1', kind: 'Service', metadata: { name: 'extra', namespace: ns }, spec: { ports: [{ port: 80 }] } };
    // ApplySets are still behind kubectl's alpha switch in 1.34 (KUBECTL_APPLYSET=true)
    const r = spawnSync(path.join(p.state.bin, 'kubectl'), ['--kubeconfig', p.kubeconfig, '-n', ns, 'apply', '--server-side', '--prune', '--applyset=configmaps/uyuni-applyset', '-f', '-'],
      { input: JSON.stringify(svc), encoding: 'utf8', env: { ...process.env, KUBECTL_APPLYSET: 'true' }, timeout: 30_000 });
    expect(r.error).toBeUndefined();
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain('is managed by tooling "uyuni-cdk"');
    const deletes = auditEvents(p.dir, mark).filter((e) => e.verb === 'delete' && e.objectRef?.namespace === ns);
    expect(deletes).toEqual([]);
  }, 60_000);
});

describe('logs of a step, against kube-apiserver', () => {
  const ns = p.namespace('logs');
  const opts = { kubeconfig: p.kubeconfig, namespace: ns };
  afterAll(async () => {
    await p.kubectl(['delete', 'namespace', ns, '--wait=false']);
  });

  it('prints each container\'s lines through pods/log, prefixed [pod/container]', async () => {
    p.scenario({ deployments: { uyuni: { logs: ['uyuni: setting the server up'] }, db: { logs: ['db: ready to accept connections'] } } }, ns);
    const run = await cli('run', path.join(ROOT, 'dist', 'install'), { ...opts, yes: true, runDir: tmpDir() });
    expect(run.code).toBe(0);
    const logs = await spawnCli(['logs', path.join(ROOT, 'dist', 'install'), 'database', '--kubeconfig', p.kubeconfig, '-n', ns]).done;
    expect({ code: logs.code, err: logs.err }).toEqual({ code: 0, err: '' });
    expect(logs.out).toMatch(/^\[db-[a-z0-9]+-[a-z0-9]+\/[a-z-]+\] db: ready to accept connections$/m);
  }, 120_000);
});
