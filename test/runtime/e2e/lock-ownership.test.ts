/**
 * Issue 21 items 5, 6, 8 on the simulator: the namespace lock (a concurrent run fails at once
 * naming the first, --lock-timeout waits, unlock, a dead holder's lease expires, Ctrl-C releases),
 * nothing taken over (another plan through -n, a Helm release, an existing namespace; --adopt),
 * destroy keeping what it did not create, and credentials following the data.
 */
import { spawnSync } from 'child_process';
import * as os from 'os';
import * as path from 'path';
import { startSimulator, Simulator } from '../../sim';
import { BIN, cli, ROOT, spawnCli, tmpDir, until } from './harness';
import { deployment, job, namespace, NS, pvc, service, writePlan } from '../plans';

let sim: Simulator;
afterEach(async () => {
  await sim?.stop();
});

const dist = (p: string) => path.join(ROOT, 'dist', p);
const LEASES = `/apis/coordination.k8s.io/v1/namespaces/${NS}/leases`;
const lease = () => sim.get('coordination.k8s.io/v1', 'Lease', 'uyuni-cdk-lock', NS);
/** Requests that wrote anything but the lock's Lease. */
const writesSince = (mark: number) => sim.requests.slice(mark).filter((q) => q.method !== 'GET' && !q.path.endsWith('/selfsubjectaccessreviews') && !q.path.includes('/leases') && !q.query.includes('dryRun'));

/** A plan whose `work` step's Job runs until the simulator's clock says so. */
const slowPlan = () => writePlan([
  { name: 'namespace', objects: [namespace()] },
  { name: 'work', objects: [job('work', 'sleep 60')], timeoutSeconds: 600 },
]);

/** The namespace as an earlier run of the fixture plan left it (ours: it carries the plan's selector). */
const ourNamespace = () => ({ ...namespace(), metadata: { name: NS, labels: { 'app.kubernetes.io/part-of': 'uyuni', 'app.kubernetes.io/managed-by': 'uyuni-cdk', 'uyuni-cdk.io/plan': 'install' } } });

/** A Lease as another uyuni-cdk on another host left it. */
function foreignLease(renewedSecondsAgo: number, runId = 'install-20261201T000000Z') {
  const t = new Date(Date.now() - renewedSecondsAgo * 1000).toISOString().replace(/Z$/, '000Z');
  return {
    apiVersion: 'coordination.k8s.io/v1', kind: 'Lease',
    metadata: {
      name: 'uyuni-cdk-lock', namespace: NS,
      annotations: {
        'uyuni-cdk.io/lock-run': runId, 'uyuni-cdk.io/lock-user': 'alice', 'uyuni-cdk.io/lock-host': 'admin-box-elsewhere',
        'uyuni-cdk.io/lock-pid': '4242', 'uyuni-cdk.io/lock-plan': 'install', 'uyuni-cdk.io/lock-verb': 'run', 'uyuni-cdk.io/lock-started': '2026-12-01T00:00:00Z',
      },
    },
    spec: { holderIdentity: runId, leaseDurationSeconds: 60, acquireTime: t, renewTime: t },
  };
}

describe('the lock: one run or destroy per namespace', () => {
  it('a second concurrent run exits 1 within seconds naming the first; --lock-timeout waits for it; the lock is gone after', async () => {
    sim = await startSimulator({ jobs: { work: { durationMs: 200_000 } } }); // 4 s
    const dir = slowPlan();
    const firstDir = tmpDir();
    const first = cli('run', dir, { kubeconfig: sim.kubeconfigPath, runDir: firstDir, output: 'json' });
    // (its Job applied: the first run writes nothing more while the second is tried)
    await until('the first run holds the lock, its Job running', () => lease() !== undefined && sim.get('batch/v1', 'Job', 'work', NS)?.status?.active === 1);
    const holder = lease().spec.holderIdentity;
    expect(holder).toMatch(/^install-\d{8}T\d{6}\.\d{3}Z$/);
    expect(lease().metadata.annotations).toMatchObject({ 'uyuni-cdk.io/lock-pid': String(process.pid), 'uyuni-cdk.io/lock-host': os.hostname(), 'uyuni-cdk.io/lock-plan': 'install', 'uyuni-cdk.io/lock-verb': 'run' });
    expect(lease().spec.leaseDurationSeconds).toBe(60);

    const mark = sim.requests.length;
    const t = Date.now();
    const second = await cli('run', dir, { kubeconfig: sim.kubeconfigPath });
    expect(Date.now() - t).toBeLessThan(5000);
    expect(second.code).toBe(1);
    expect(second.err).toContain(`namespace ${NS} is locked by run ${holder} (plan install) by ${os.userInfo().username}@${os.hostname()}, pid ${process.pid}`);
    expect(second.err).toContain(`uyuni-cdk unlock -n ${NS} ${holder}`);
    expect(writesSince(mark)).toEqual([]);
    // the second run's one write: its attempt to create the Lease (409)
    expect(sim.requests.slice(mark).filter((q) => q.method === 'POST' && q.path === LEASES).map((q) => q.status)).toEqual([409]);

    // A destroy is refused as well while the run holds the lock.
    const destroy = await cli('destroy', dir, { kubeconfig: sim.kubeconfigPath, yes: true });
    expect(destroy.code).toBe(1);
    expect(destroy.err).toContain(`is locked by run ${holder}`);
    expect(sim.get('batch/v1', 'Job', 'work', NS)).toBeDefined();

    const waiting = await cli('run', dir, { kubeconfig: sim.kubeconfigPath, lockTimeout: 30, output: 'json' });
    expect((await first).code).toBe(0);
    expect(waiting.code).toBe(0);
    const events = waiting.out.trim().split('\n').map((l) => JSON.parse(l));
    expect(events.find((e) => e.action === 'wait for lock')?.result).toContain(`held by run ${holder}`);
    expect(lease()).toBeUndefined();
  });

  it('a Lease renewed by a live holder elsewhere refuses the run; unlock with another run id changes nothing; with its run id removes it', async () => {
    sim = await startSimulator();
    const dir = slowPlan();
    sim.put(ourNamespace());
    sim.put(foreignLease(5));
    const refused = await cli('run', dir, { kubeconfig: sim.kubeconfigPath });
    expect(refused.code).toBe(1);
    expect(refused.err).toContain('is locked by run install-20261201T000000Z (plan install) by alice@admin-box-elsewhere, pid 4242, since 2026-12-01T00:00:00Z');

    const unlock = (runId: string, extra: string[] = []) => spawnCli(['unlock', '--kubeconfig', sim.kubeconfigPath, ...extra, runId]).done;
    const wrong = await unlock('install-20991231T000000Z', ['-n', NS]);
    expect(wrong.code).toBe(2);
    expect(wrong.err).toContain('locked by run install-20261201T000000Z');
    expect(lease()).toBeDefined();
    expect((await unlock('install-20261201T000000Z')).code).toBe(2); // -n is required

    const ok = await unlock('install-20261201T000000Z', ['-n', NS]);
    expect(ok.code).toBe(0);
    expect(ok.out).toContain(`removed the lock of namespace ${NS}: run install-20261201T000000Z`);
    expect(lease()).toBeUndefined();
    expect((await cli('run', dir, { kubeconfig: sim.kubeconfigPath })).code).toBe(0);
    expect((await unlock('install-20261201T000000Z', ['-n', NS])).err).toContain(`namespace ${NS} is not locked`);
  });

  it('a stale Lease (not renewed for longer than its leaseDurationSeconds) is taken over, and said so', async () => {
    sim = await startSimulator();
    const dir = slowPlan();
    sim.put(ourNamespace());
    sim.put(foreignLease(600));
    const r = await cli('run', dir, { kubeconfig: sim.kubeconfigPath, output: 'json' });
    expect(r.code).toBe(0);
    const took = r.out.trim().split('\n').map((l) => JSON.parse(l)).find((e) => e.action === 'lock');
    expect(took.result).toMatch(/^taken over from run install-20261201T000000Z \(plan install\) by alice@admin-box-elsewhere, pid 4242, .*: not renewed since/);
    expect(lease()).toBeUndefined();
  });

  it('a run killed with SIGKILL leaves its Lease, which the next run on this host takes over at once (its pid is gone)', async () => {
    sim = await startSimulator({ jobs: { work: { durationMs: 3_000_000 } } }); // a minute
    const dir = slowPlan();
    const { child, done } = spawnCli(['run', dir, '--kubeconfig', sim.kubeconfigPath, '--run-dir', tmpDir()]);
    await until('the child holds the lock and runs the Job', () => lease() !== undefined && sim.get('batch/v1', 'Job', 'work', NS)?.status?.active === 1);
    expect(lease().metadata.annotations['uyuni-cdk.io/lock-pid']).toBe(String(child.pid));
    child.kill('SIGKILL');
    await done;
    expect(lease()).toBeDefined();
    sim.setJob('work', { durationMs: 1000 });
    const t = Date.now();
    const r = await cli('run', dir, { kubeconfig: sim.kubeconfigPath, output: 'json', rerun: ['work'] });
    expect(Date.now() - t).toBeLessThan(20_000);
    expect(r.code).toBe(0);
    const took = r.out.trim().split('\n').map((l) => JSON.parse(l)).find((e) => e.action === 'lock');
    expect(took.result).toContain(`its holder, pid ${child.pid} on this host, is no longer running`);
  });

  it('the holder renews its Lease while it runs; unlock refuses it alive on this host; --force (asked) removes it, and the run stops before its next write', async () => {
    sim = await startSimulator({ jobs: { work: { durationMs: 1_000_000 } } }); // 20 s: three unlocks by the real CLI
    const dir = writePlan([
      { name: 'namespace', objects: [namespace()] },
      { name: 'work', objects: [job('work', 'sleep 60')], timeoutSeconds: 600 },
      { name: 'later', objects: [job('later')] },
    ]);
    // a 3 s lease: renewed every second
    const { done } = spawnCli(['run', dir, '--kubeconfig', sim.kubeconfigPath, '--run-dir', tmpDir()], { UYUNI_CDK_LOCK_LEASE_SECONDS: '3' });
    await until('the child holds the lock', () => lease() !== undefined);
    expect(lease().spec.leaseDurationSeconds).toBe(3);
    const first = lease().spec.renewTime;
    await until('a renewal', () => lease() !== undefined && lease().spec.renewTime !== first, 10_000);
    const holder = lease().spec.holderIdentity;
    const refused = await spawnCli(['unlock', '--kubeconfig', sim.kubeconfigPath, '-n', NS, holder]).done;
    expect(refused.code).toBe(2);
    expect(refused.err).toMatch(new RegExp(`run ${holder} \\(plan install\\) by [^,]+, pid \\d+, since [^ ]+ is alive: pid \\d+ runs on this host and renews the lock; nothing removed: .*--force \\(asks first\\)`));
    expect(lease()?.spec.holderIdentity).toBe(holder);
    const unasked = await spawnCli(['unlock', '--kubeconfig', sim.kubeconfigPath, '-n', NS, holder, '--force']).done;
    expect(unasked.code).toBe(2);
    expect(unasked.err).toContain('--force without a terminal to ask on: nothing removed; add --yes to remove it');
    expect(lease()?.spec.holderIdentity).toBe(holder);
    const unlock = await spawnCli(['unlock', '--kubeconfig', sim.kubeconfigPath, '-n', NS, holder, '--force', '--yes']).done;
    expect(unlock.code).toBe(0);
    expect(unlock.out).toContain('it was still being renewed');
    const r = await done;
    expect(r.code).toBe(1);
    expect(r.err).toContain(`run ${holder} stopped before step later: the lock was removed (uyuni-cdk unlock?)`);
    expect(sim.get('batch/v1', 'Job', 'later', NS)).toBeUndefined();
  });

  it('a run whose Lease another run took over writes nothing more: not even its record after its last step', async () => {
    sim = await startSimulator({ jobs: { work: { durationMs: 300_000 } } }); // 6 s
    const previous = process.env.UYUNI_CDK_LOCK_LEASE_SECONDS;
    process.env.UYUNI_CDK_LOCK_LEASE_SECONDS = '3';
    try {
      const running = cli('run', slowPlan(), { kubeconfig: sim.kubeconfigPath });
      await until('the run holds the lock, its Job running', () => lease() !== undefined && sim.get('batch/v1', 'Job', 'work', NS)?.status?.active === 1);
      // another run takes the Lease over (as one that found it stale would)
      sim.put({ ...foreignLease(0, 'install-20991231T000000Z'), metadata: { ...foreignLease(0, 'install-20991231T000000Z').metadata, resourceVersion: lease().metadata.resourceVersion } });
      const mark = sim.requests.length;
      const r = await running;
      expect(r.code).toBe(1);
      expect(r.err).toMatch(/run install-\d{8}T\d{6}\.\d{3}Z stopped before it would apply ConfigMap\/uyuni-cdk-history \(uyuni-test\): the lock was taken over by run install-20991231T000000Z \(plan install\) by alice@admin-box-elsewhere/);
      expect(writesSince(mark)).toEqual([]);
      expect(sim.get('v1', 'ConfigMap', 'uyuni-cdk-history', NS)).toBeUndefined();
      expect(lease().spec.holderIdentity).toBe('install-20991231T000000Z');
    } finally {
      if (previous === undefined) delete process.env.UYUNI_CDK_LOCK_LEASE_SECONDS;
      else process.env.UYUNI_CDK_LOCK_LEASE_SECONDS = previous;
    }
  });

  it('Ctrl-C releases the lock before the process exits 130', async () => {
    sim = await startSimulator({ jobs: { work: { durationMs: 3_000_000 } } });
    const dir = slowPlan();
    const { child, done } = spawnCli(['run', dir, '--kubeconfig', sim.kubeconfigPath, '--run-dir', tmpDir()]);
    await until('the child holds the lock', () => lease() !== undefined && sim.get('batch/v1', 'Job', 'work', NS) !== undefined);
    child.kill('SIGINT');
    const r = await done;
    expect(r.code).toBe(130);
    expect(lease()).toBeUndefined();
  });

  it('a first install takes the lock right after the namespace step, before any other', async () => {
    sim = await startSimulator();
    const dir = slowPlan();
    const r = await cli('run', dir, { kubeconfig: sim.kubeconfigPath, output: 'json' });
    expect(r.code).toBe(0);
    const writes = sim.requests.filter((q) => q.method !== 'GET' && !q.path.endsWith('/selfsubjectaccessreviews')).map((q) => `${q.method} ${q.path.replace(/\?.*/, '')}`);
    // the first create of the Lease finds no namespace (404); the namespace step; then the lock
    expect(writes.slice(0, 3)).toEqual([`POST ${LEASES}`, `PATCH /api/v1/namespaces/${NS}`, `POST ${LEASES}`]);
    expect(sim.requests.find((q) => q.method === 'POST' && q.path === LEASES)?.status).toBe(404);
  });
});

describe('nothing is taken over: dist/proxy -n uyuni over an installed server', () => {
  it('is refused before any write, naming each object and its owner; plan lists them', async () => {
    sim = await startSimulator();
    expect((await cli('run', dist('install'), { kubeconfig: sim.kubeconfigPath })).code).toBe(0);
    const web = sim.get('v1', 'Service', 'web', 'uyuni');
    const mark = sim.requests.length;
    const r = await cli('run', dist('proxy'), { kubeconfig: sim.kubeconfigPath, namespace: 'uyuni' });
    expect(r.code).toBe(1);
    expect(r.err).toContain('ConfigMap/uyuni-applyset (uyuni) belongs to uyuni-cdk plan uyuni (part-of uyuni)');
    expect(r.err).toContain('Namespace/uyuni belongs to uyuni-cdk plan install (part-of uyuni) (part-of uyuni, not uyuni-proxy)');
    expect(r.err).toContain('Service/web (uyuni) belongs to uyuni-cdk plan install (part-of uyuni)');
    expect(r.err).toContain('Service/salt (uyuni)');
    expect(writesSince(mark)).toEqual([]);
    expect(sim.get('v1', 'Service', 'web', 'uyuni')).toEqual(web);

    // --adopt does not put a plan into another plan's namespace either
    const adopt = await cli('run', dist('proxy'), { kubeconfig: sim.kubeconfigPath, namespace: 'uyuni', adopt: true });
    expect(adopt.code).toBe(1);
    expect(adopt.err).toContain('holds the ApplySet of another plan');
    expect(writesSince(mark)).toEqual([]);

    const plan = await cli('plan', dist('proxy'), { kubeconfig: sim.kubeconfigPath, namespace: 'uyuni' });
    expect(plan.out).toMatch(/refuse {2}Service\/web \(uyuni\) {2}owner: uyuni-cdk plan install \(part-of uyuni\)/);
    const detailed = await cli('plan', dist('proxy'), { kubeconfig: sim.kubeconfigPath, namespace: 'uyuni', detailedExitcode: true });
    expect(detailed.code).toBe(1);
    const destroy = await cli('destroy', dist('proxy'), { kubeconfig: sim.kubeconfigPath, namespace: 'uyuni', yes: true, purgeVolumes: true });
    expect(destroy.code).toBe(0);
    expect(sim.get('v1', 'Namespace', 'uyuni')).toBeDefined();
    expect(sim.get('v1', 'Service', 'web', 'uyuni')).toBeDefined();
  });
});

describe('nothing is taken over: objects of other tools', () => {
  const plan = () => writePlan([
    { name: 'namespace', objects: [namespace()] },
    { name: 'server', objects: [service('uyuni'), deployment('uyuni')] },
  ]);

  it('a Service of a Helm release is refused naming the release; plan lists it; --adopt takes it over and marks it', async () => {
    sim = await startSimulator();
    sim.put(namespace());
    sim.put({ ...service('uyuni'), metadata: { name: 'uyuni', namespace: NS, labels: { 'app.kubernetes.io/managed-by': 'Helm' }, annotations: { 'meta.helm.sh/release-name': 'uyuni', 'meta.helm.sh/release-namespace': NS } } });
    const dir = plan();
    const mark = sim.requests.length;
    const r = await cli('run', dir, { kubeconfig: sim.kubeconfigPath });
    expect(r.code).toBe(1);
    expect(r.err).toContain(`Service/uyuni (${NS}) belongs to Helm release ${NS}/uyuni (no app.kubernetes.io/managed-by=uyuni-cdk)`);
    expect(r.err).toContain(`Namespace/${NS} belongs to nobody known`);
    expect(r.err).toContain('run with --adopt to take them over');
    expect(writesSince(mark)).toEqual([]);

    const json = JSON.parse((await cli('plan', dir, { kubeconfig: sim.kubeconfigPath, output: 'json', adopt: true })).out);
    expect(json.takeovers).toContainEqual({
      object: `Service/uyuni (${NS})`, id: { kind: 'Service', name: 'uyuni', namespace: NS }, owner: `Helm release ${NS}/uyuni`, reason: 'no app.kubernetes.io/managed-by=uyuni-cdk', adoptable: true,
      // with --adopt: what run does with it, in the one verdict
      action: 'adopt',
    });

    const adopted = await cli('run', dir, { kubeconfig: sim.kubeconfigPath, adopt: true });
    expect(adopted.code).toBe(0);
    expect(adopted.out).toContain(`adopt Service/uyuni (${NS}): taken over from Helm release ${NS}/uyuni`);
    const svc = sim.get('v1', 'Service', 'uyuni', NS);
    expect(svc.metadata.annotations['uyuni-cdk.io/adopted-from']).toBe(`Helm release ${NS}/uyuni`);
    expect(svc.metadata.labels['app.kubernetes.io/managed-by']).toBe('uyuni-cdk');
    // ours now: the next run needs no --adopt
    expect((await cli('run', dir, { kubeconfig: sim.kubeconfigPath })).code).toBe(0);
  });

  it('an upgrade takes over the install it upgrades (the chart\'s Helm release) by design: plan lists it, run asks first, then marks it', async () => {
    sim = await startSimulator();
    sim.put({ ...namespace(), metadata: { name: NS, labels: { 'app.kubernetes.io/managed-by': 'Helm' } } });
    sim.put({ ...service('uyuni'), metadata: { name: 'uyuni', namespace: NS, labels: { 'app.kubernetes.io/managed-by': 'Helm' }, annotations: { 'meta.helm.sh/release-name': 'uyuni', 'meta.helm.sh/release-namespace': NS } } });
    const dir = writePlan([{ name: 'server', objects: [service('uyuni'), deployment('uyuni')] }], { name: 'upgrade', flow: { kind: 'upgrade' } });
    const planned = await cli('plan', dir, { kubeconfig: sim.kubeconfigPath });
    expect(planned.out).toMatch(new RegExp(`adopt\\s+Service/uyuni \\(${NS}\\)\\s+owner: Helm release ${NS}/uyuni[^\\n]*the upgrade takes over the install it upgrades, asked first`));
    // no terminal, no --yes: asked, so refused, nothing written (not even the mark)
    const mark = sim.requests.length;
    const refused = await cli('run', dir, { kubeconfig: sim.kubeconfigPath });
    expect(refused.code).toBe(2);
    expect(refused.out).toMatch(new RegExp(`adopt\\s+Service/uyuni \\(${NS}\\)`));
    expect(writesSince(mark)).toEqual([]);
    expect(sim.get('v1', 'Service', 'uyuni', NS).metadata.annotations['uyuni-cdk.io/adopted-from']).toBeUndefined();
    const r = await cli('run', dir, { kubeconfig: sim.kubeconfigPath, yes: true });
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(sim.get('v1', 'Service', 'uyuni', NS).metadata.annotations['uyuni-cdk.io/adopted-from']).toBe(`Helm release ${NS}/uyuni`);
  });

  it('an existing namespace with another team in it: refused without --adopt; destroy --purge-volumes leaves the namespace and their objects', async () => {
    sim = await startSimulator();
    const shared = 'shared';
    sim.put(namespace(shared));
    sim.put({ ...deployment('their-app'), metadata: { name: 'their-app', namespace: shared } });
    sim.put({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'their-secret', namespace: shared }, data: { k: 'dg==' } });
    const dir = writePlan([
      { name: 'namespace', objects: [namespace()] },
      { name: 'volumes', objects: [pvc('var-pgsql')] },
      { name: 'server', objects: [service('uyuni'), deployment('uyuni')] },
    ]);
    const refused = await cli('run', dir, { kubeconfig: sim.kubeconfigPath, namespace: shared });
    expect(refused.code).toBe(1);
    expect(refused.err).toContain(`Namespace/${shared} belongs to nobody known`);
    expect(sim.get('v1', 'Namespace', shared).metadata.labels?.['app.kubernetes.io/managed-by']).toBeUndefined();

    expect((await cli('run', dir, { kubeconfig: sim.kubeconfigPath, namespace: shared, adopt: true })).code).toBe(0);
    const dry = await cli('destroy', dir, { kubeconfig: sim.kubeconfigPath, namespace: shared, purgeVolumes: true });
    expect(dry.out).toMatch(new RegExp(`kept\\s+Namespace/${shared}\\s+\\(not created by this plan \\(adopted from nobody known`));
    const r = await cli('destroy', dir, { kubeconfig: sim.kubeconfigPath, namespace: shared, yes: true, purgeVolumes: true });
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/deleted\s+Deployment\/uyuni/);
    expect(r.out).toMatch(/deleted\s+PersistentVolumeClaim\/var-pgsql/);
    expect(sim.get('v1', 'Namespace', shared)).toBeDefined();
    expect(sim.get('apps/v1', 'Deployment', 'their-app', shared)).toBeDefined();
    expect(sim.get('v1', 'Secret', 'their-secret', shared)).toBeDefined();
    expect(sim.get('apps/v1', 'Deployment', 'uyuni', shared)).toBeUndefined();
  });

  it('a namespace made by hand for the plan (kubectl create namespace, then its Secrets, as the README has it) is adopted without --adopt and never deleted', async () => {
    sim = await startSimulator();
    sim.put(namespace());
    sim.put({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'uyuni-migration-key', namespace: NS }, data: { key: 'aw==' } });
    const dir = writePlan([
      { name: 'namespace', objects: [namespace()] },
      { name: 'server', objects: [deployment('uyuni')], requires: [{ kind: 'Secret', name: 'uyuni-migration-key', namespace: NS, keys: ['key'], ifMissing: 'fail' }] },
    ]);
    const plan = await cli('plan', dir, { kubeconfig: sim.kubeconfigPath });
    expect(plan.out).toMatch(new RegExp(`adopt\\s+Namespace/${NS}\\s+owner: nobody known[^\\n]*a namespace made by hand for the plan`));
    const r = await cli('run', dir, { kubeconfig: sim.kubeconfigPath });
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(sim.get('v1', 'Namespace', NS).metadata.annotations?.['uyuni-cdk.io/adopted-from']).toMatch(/nobody known/);
    expect((await cli('destroy', dir, { kubeconfig: sim.kubeconfigPath, yes: true, purgeVolumes: true })).code).toBe(0);
    expect(sim.get('v1', 'Namespace', NS)).toBeDefined();
  });

  it('destroy never deletes a namespace it created once another team put objects in it, and lists them', async () => {
    sim = await startSimulator();
    const dir = plan();
    expect((await cli('run', dir, { kubeconfig: sim.kubeconfigPath })).code).toBe(0);
    sim.put({ ...deployment('their-app'), metadata: { name: 'their-app', namespace: NS } });
    const r = await cli('destroy', dir, { kubeconfig: sim.kubeconfigPath, yes: true, purgeVolumes: true });
    expect(r.code).toBe(0);
    expect(r.out).toMatch(new RegExp(`kept\\s+Namespace/${NS}\\s+\\(holds 1 object\\(s\\) not of this plan, which deleting it would delete: Deployment/their-app`));
    expect(sim.get('apps/v1', 'Deployment', 'their-app', NS)).toBeDefined();
    expect(sim.get('apps/v1', 'Deployment', 'uyuni', NS)).toBeUndefined();
  });
});

describe('credentials follow the data', () => {
  const credential = { kind: 'Secret' as const, name: 'db-credentials', namespace: NS, keys: ['username', 'password'], ifMissing: 'generate' as const, generate: { username: { literal: 'spacewalk' }, password: { random: { length: 32 } } }, secretType: 'kubernetes.io/basic-auth' };
  const ca = {
    apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { name: 'uyuni-ca', namespace: NS },
    spec: { isCA: true, secretName: 'uyuni-ca', commonName: 'uyuni.example.com', issuerRef: { name: 'uyuni-root-issuer', kind: 'Issuer' } },
  };
  const plan = () => writePlan([
    { name: 'namespace', objects: [namespace()] },
    { name: 'volumes', objects: [pvc('var-pgsql')] },
    { name: 'tls', objects: [{ apiVersion: 'cert-manager.io/v1', kind: 'Issuer', metadata: { name: 'uyuni-root-issuer', namespace: NS }, spec: { selfSigned: {} } }, ca] },
    { name: 'database', objects: [service('db'), deployment('db')], requires: [credential] },
  ]);
  const password = () => sim.get('v1', 'Secret', 'db-credentials', NS)?.data?.password;

  it('destroy --yes keeps the claims, the credential Secrets and the CA Secret; the next run uses them; --purge-volumes removes them all', async () => {
    sim = await startSimulator();
    const dir = plan();
    expect((await cli('run', dir, { kubeconfig: sim.kubeconfigPath })).code).toBe(0);
    const before = password();
    expect(before).toBeDefined();
    const caSecret = sim.get('v1', 'Secret', 'uyuni-ca', NS);
    expect(caSecret?.metadata?.annotations?.['cert-manager.io/certificate-name']).toBe('uyuni-ca');

    const r = await cli('destroy', dir, { kubeconfig: sim.kubeconfigPath, yes: true });
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/kept\s+Secret\/db-credentials \(uyuni-test\)\s+\(a credential of the kept data/);
    expect(r.out).toMatch(/kept\s+Certificate\/uyuni-ca \(uyuni-test\)\s+\(issues the kept CA Secret/);
    expect(sim.get('apps/v1', 'Deployment', 'db', NS)).toBeUndefined();
    expect(sim.get('v1', 'PersistentVolumeClaim', 'var-pgsql', NS)).toBeDefined();
    expect(password()).toBe(before);
    expect(sim.get('v1', 'Secret', 'uyuni-ca', NS)?.data).toEqual(caSecret.data);

    expect((await cli('run', dir, { kubeconfig: sim.kubeconfigPath })).code).toBe(0);
    expect(password()).toBe(before);

    const purge = await cli('destroy', dir, { kubeconfig: sim.kubeconfigPath, yes: true, purgeVolumes: true });
    expect(purge.code).toBe(0);
    expect(purge.out).toMatch(/deleted\s+Secret\/db-credentials/);
    expect(purge.out).toMatch(/deleted\s+Secret\/uyuni-ca/);
    expect(sim.get('v1', 'Secret', 'uyuni-ca', NS)).toBeUndefined();
    expect(password()).toBeUndefined();
  });

  it('a run that finds the database claim Bound but its credentials gone refuses to generate new ones, before any write, and says how to restore them', async () => {
    sim = await startSimulator();
    const dir = plan();
    expect((await cli('run', dir, { kubeconfig: sim.kubeconfigPath })).code).toBe(0);
    expect((await fetch(`${sim.url}/api/v1/namespaces/${NS}/secrets/db-credentials`, { method: 'DELETE' })).status).toBe(200);
    const mark = sim.requests.length;
    const r = await cli('run', dir, { kubeconfig: sim.kubeconfigPath });
    expect(r.code).toBe(1);
    expect(r.err).toContain(`Secret db-credentials (${NS}) is missing, but the data made with it is kept (claims var-pgsql are Bound; run install-`);
    expect(r.err).toContain(`Restore the Secret from your backup (kubectl -n ${NS} apply -f db-credentials.yaml, keys username, password)`);
    expect(writesSince(mark)).toEqual([]);
    expect(password()).toBeUndefined();
    const p = await cli('plan', dir, { kubeconfig: sim.kubeconfigPath });
    expect(p.out).toContain('Refused: Secret db-credentials (uyuni-test) is missing');
  });
});

describe('the CLI', () => {
  it('unlock --help explains the lock; run and destroy --help show --lock-timeout, run and plan --adopt', () => {
    const help = (...args: string[]) => spawnSync(process.execPath, [BIN, ...args, '--help'], { encoding: 'utf8' });
    const unlock = help('unlock');
    expect(unlock.status).toBe(0);
    expect(unlock.stdout).toContain('Usage: uyuni-cdk unlock [options] <runId>');
    expect(unlock.stdout).toMatch(/terraform\s+force-unlock/);
    expect(unlock.stdout).toContain('Lease uyuni-cdk-lock');
    expect(help('run').stdout).toMatch(/--lock-timeout <duration>[\s\S]*--adopt|--adopt[\s\S]*--lock-timeout <duration>/);
    expect(help('destroy').stdout).toContain('--lock-timeout <duration>');
    expect(help('plan').stdout).toContain('--adopt');
    const bad = spawnSync(process.execPath, [BIN, 'run', '/nonexistent', '--lock-timeout', 'soon'], { encoding: 'utf8' });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain('must be a duration');
  });
});
