/**
 * The synthesized plans of dist/ through the runtime: install (the server comes up through its
 * startup probe), then upgrade with the facts its inspect Jobs print deciding the gates, and the
 * migration.
 */
import * as fs from 'fs';
import * as path from 'path';
import { readPlan } from '../../../src/plan/reader';
import { startSimulator, Simulator } from '../../sim';
import { cli, ROOT, spawnCli, tmpDir, until, writesTo } from './harness';
import { inspectJobs, putClaims } from './inspect-facts';

const dist = (p: string) => path.join(ROOT, 'dist', p);

let sim: Simulator;
afterEach(async () => {
  await sim?.stop();
});

describe('dist/install', () => {
  it('waits for Deployment uyuni through its startup probe (the first start sets the server up), then is done', async () => {
    // 2000 virtual ms per real ms; the server's pod stays Running-but-not-started until released.
    sim = await startSimulator({ clockSpeed: 2000, deployments: { uyuni: { startupMs: 'hold' }, db: {} } });
    const runDir = tmpDir();
    let finished = false;
    const running = cli('run', dist('install'), { kubeconfig: sim.kubeconfigPath, runDir, progressInterval: '1' }).finally(() => { finished = true; });
    const events = () => {
      const f = path.join(runDir, 'events.jsonl');
      return fs.existsSync(f) ? fs.readFileSync(f, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l)) : [];
    };
    await until('the server pod shown starting', () => events().some((e: any) => e.type === 'waiting' && e.step === 'server'
      && (e.pods ?? []).some((p: any) => p.phase === 'Running' && p.containers.some((c: any) => c.name === 'uyuni' && !c.started))));
    // Longer than a progress interval: the plain output shows the waiting pod too.
    await new Promise((r) => setTimeout(r, 1500));
    expect(finished).toBe(false);
    // The database runs before the server starts, and the server step allows the probe's 10 hours.
    expect(sim.get('apps/v1', 'Deployment', 'db', 'uyuni')?.status?.readyReplicas).toBe(1);
    expect(readPlan(dist('install')).steps.find((s) => s.name === 'server')?.timeoutSeconds).toBeGreaterThanOrEqual(36000);
    sim.passStartupProbe('uyuni');
    const r = await running;
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/server: waiting [^\n]*Deployment\/uyuni \(uyuni\)[^\n]*uyuni starting \(startup probe\)/);
  });
});

describe('dist/install then dist/upgrade', () => {
  it('upgrades when the inspect Job\'s facts pass every gate: server scaled down, upgrade Jobs run, server back', async () => {
    sim = await startSimulator({ jobs: inspectJobs() });
    putClaims(sim);
    expect((await cli('run', dist('install'), { kubeconfig: sim.kubeconfigPath })).code).toBe(0);
    const r = await cli('run', dist('upgrade'), { kubeconfig: sim.kubeconfigPath, yes: true });
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).toContain('facts: ');
    expect(r.out).toContain('current_pg_version=16');
    expect(r.out).toMatch(/scale to 0 Deployment\/uyuni \(uyuni\): done/);
    expect(r.out).toMatch(/scale to 0 Deployment\/db \(uyuni\): done/);
    expect(sim.get('v1', 'PersistentVolumeClaim', 'var-pgsql18', 'uyuni')).toBeDefined();
    const db = sim.get('apps/v1', 'Deployment', 'db', 'uyuni');
    expect(db?.spec?.replicas).toBe(1);
    expect(db?.spec?.template?.spec?.containers?.[0]?.image).toBe('registry.opensuse.org/uyuni/server-postgresql:2026.08');
    for (const s of readPlan(dist('upgrade')).steps) {
      for (const o of s.objects.filter((x) => x.kind === 'Job')) expect(sim.get(o.apiVersion, o.kind, o.name, o.namespace)?.status?.succeeded).toBe(1);
    }
    // The upgrade keeps the CA (upgrade.ca: keep): it prunes none of the install's TLS objects.
    for (const [kind, name] of [['Issuer', 'uyuni-root-issuer'], ['Certificate', 'uyuni-ca'], ['Issuer', 'uyuni-issuer'], ['Certificate', 'uyuni-cert'], ['Certificate', 'db-cert']]) {
      expect([kind, name, sim.get('cert-manager.io/v1', kind, name, 'uyuni')?.metadata?.name]).toEqual([kind, name, name]);
    }
  });

  it('refuses a PostgreSQL downgrade from the facts, before stopping the server', async () => {
    sim = await startSimulator({ jobs: inspectJobs({}, { image_pg_version: '13', current_pg_version: '16' }) });
    putClaims(sim);
    expect((await cli('run', dist('install'), { kubeconfig: sim.kubeconfigPath })).code).toBe(0);
    const mark = sim.requests.length;
    const r = await cli('run', dist('upgrade'), { kubeconfig: sim.kubeconfigPath, yes: true });
    expect(r.code).toBe(1);
    expect(r.out).toContain('gate REFUSED: the new server-postgresql image\'s PostgreSQL is older than the database\'s: PostgreSQL cannot be downgraded');
    expect(writesTo(sim.requests.slice(mark), '/deployments/uyuni')).toEqual([]);
    expect(writesTo(sim.requests.slice(mark), '/deployments/db')).toEqual([]);
    expect(sim.get('batch/v1', 'Job', 'uyuni-db-migrate', 'uyuni')).toBeUndefined();
  });
});

describe('dist/migrate', () => {
  it('refuses before any write while user-made objects are missing, naming them all at once, then resumes and migrates once all exist', async () => {
    sim = await startSimulator({ jobs: inspectJobs({
      fqdn: 'old-server.example.com', current_release: '2024.10', timezone: 'Europe/Berlin', has_hub: 'false', debug_java: 'false',
      tftp_enabled: 'true', ca_fingerprint_match: 'true',
    }, { current_pg_version: '14' }) });
    const b64 = (t: string) => Buffer.from(t).toString('base64');
    const stopsAt = async (text: string) => {
      const stopped = await cli('run', dist('migrate'), { kubeconfig: sim.kubeconfigPath, yes: true });
      expect(stopped.code).toBe(1);
      expect(stopped.out + stopped.err).toContain(text);
    };
    // Before hours of copying, all at once: the ssh key and config, and the migrated CA's password.
    await stopsAt('kubectl -n uyuni create secret generic uyuni-migration-key');
    await stopsAt('kubectl -n uyuni create secret generic uyuni-ca-password');
    expect(sim.get('v1', 'Namespace', 'uyuni')).toBeUndefined();
    sim.put({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'uyuni-migration-key', namespace: 'uyuni' }, data: { key: b64('k'), 'key.pub': b64('p') } });
    sim.put({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'uyuni-migration-ssh', namespace: 'uyuni' }, data: { config: 'Host *', known_hosts: 'old-server.example.com ssh-ed25519 AAAA' } });
    await stopsAt('kubectl -n uyuni create secret generic uyuni-ca-password');
    expect(sim.get('batch/v1', 'Job', 'uyuni-data-sync', 'uyuni')).toBeUndefined();
    sim.put({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'uyuni-ca-password', namespace: 'uyuni' }, data: { password: b64('pw') } });
    // The simulated uyuni-import-secrets makes nothing: the TLS step names the missing CA Secret.
    await stopsAt('Secret uyuni/uyuni-ca is missing: migrated CA: Job uyuni-import-secrets');
    const synced = sim.get('batch/v1', 'Job', 'uyuni-data-sync', 'uyuni');
    expect(synced?.status?.succeeded).toBe(1);
    expect(sim.get('batch/v1', 'Job', 'uyuni-import-secrets', 'uyuni')?.spec?.template?.spec?.serviceAccountName).toBe('uyuni-migration-importer');
    // What the real Job makes from the copied data; the run resumes after the completed steps.
    sim.put({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'uyuni-ca', namespace: 'uyuni' }, type: 'kubernetes.io/tls', data: { 'tls.crt': b64('c'), 'tls.key': b64('k') } });
    for (const name of ['db-credentials', 'reportdb-credentials']) {
      sim.put({ apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: 'uyuni' }, type: 'kubernetes.io/basic-auth', data: { username: b64('u'), password: b64('p') } });
    }
    const mark = sim.requests.length;
    const r = await cli('run', dist('migrate'), { kubeconfig: sim.kubeconfigPath, yes: true });
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    // The cleanup deletes the Jobs that mounted migration-data with it (kube-controller-manager's
    // pvc-protection keeps the claim while their Succeeded pods reference it); the others stay.
    const mounting = ['uyuni-data-sync', 'uyuni-inspect', 'uyuni-import-secrets', 'uyuni-db-finalize'];
    for (const s of readPlan(dist('migrate')).steps) {
      for (const o of s.objects.filter((x) => x.kind === 'Job')) {
        expect([o.name, sim.get(o.apiVersion, o.kind, o.name, o.namespace)?.status?.succeeded]).toEqual([o.name, mounting.includes(o.name) ? undefined : 1]);
      }
    }
    expect(sim.get('apps/v1', 'Deployment', 'uyuni', 'uyuni')).toBeDefined();
    // Resumed, not redone: the data sync of the first run was not created again, only deleted at the cleanup.
    expect(synced?.metadata?.uid).toBeDefined();
    expect(writesTo(sim.requests.slice(mark), '/jobs/uyuni-data-sync').map((w) => w.method)).toEqual(['DELETE']);
    // The cleanup took the migration data and the importer's rights away.
    expect(sim.get('v1', 'PersistentVolumeClaim', 'migration-data', 'uyuni')).toBeUndefined();
    expect(sim.get('rbac.authorization.k8s.io/v1', 'Role', 'uyuni-migration-importer', 'uyuni')).toBeUndefined();
  });

  it('resumes after the runtime was killed during the data sync: attaches to the running Job, copies nothing twice', async () => {
    const facts = inspectJobs({
      fqdn: 'old-server.example.com', current_release: '2024.10', timezone: 'Europe/Berlin', has_hub: 'false', debug_java: 'false',
      tftp_enabled: 'true', ca_fingerprint_match: 'true',
    }, { current_pg_version: '14' });
    // The copy runs 3 s of real time (150 s virtual at the simulator's 50x).
    sim = await startSimulator({ jobs: { ...facts, 'uyuni-data-sync': { durationMs: 150_000, logs: ['uyuni-data-sync: copying /var/spacewalk'] } } });
    const b64 = (t: string) => Buffer.from(t).toString('base64');
    const secret = (name: string, data: Record<string, string>, type = 'Opaque') =>
      sim.put({ apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: 'uyuni' }, type, data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, b64(v)])) });
    secret('uyuni-migration-key', { key: 'k', 'key.pub': 'p' });
    sim.put({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'uyuni-migration-ssh', namespace: 'uyuni' }, data: { config: 'Host *', known_hosts: 'x' } });
    secret('uyuni-ca-password', { password: 'pw' });
    // What the real uyuni-import-secrets makes (the simulated Job runs no script).
    secret('uyuni-ca', { 'tls.crt': 'c', 'tls.key': 'k' }, 'kubernetes.io/tls');
    for (const name of ['db-credentials', 'reportdb-credentials']) secret(name, { username: 'u', password: 'p' }, 'kubernetes.io/basic-auth');

    const first = spawnCli(['run', dist('migrate'), '--yes', '--kubeconfig', sim.kubeconfigPath, '--run-dir', tmpDir()]);
    await until('the data sync pod running', () => sim.list('v1', 'Pod', 'uyuni').some((p) => p.metadata.name.startsWith('uyuni-data-sync-') && p.status?.phase === 'Running'));
    first.child.kill('SIGKILL');
    await first.done;
    const syncUid = sim.get('batch/v1', 'Job', 'uyuni-data-sync', 'uyuni').metadata.uid;
    const mark = sim.requests.length;

    const r = await cli('run', dist('migrate'), { kubeconfig: sim.kubeconfigPath, yes: true });
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).toContain('Job/uyuni-data-sync (uyuni): already running with the same spec: attached');
    // Attached, not created again; deleted at the cleanup with the claim it mounted.
    expect(writesTo(sim.requests.slice(mark), '/jobs/uyuni-data-sync').map((w) => `${w.method} ${w.path}`)).toEqual(['DELETE /apis/batch/v1/namespaces/uyuni/jobs/uyuni-data-sync']);
    expect(syncUid).toBeDefined();
    expect(r.out).toMatch(/data-sync: done/);
    expect(sim.get('apps/v1', 'Deployment', 'uyuni', 'uyuni')).toBeDefined();
  });
});
