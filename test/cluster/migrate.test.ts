/**
 * dist/migrate through the runtime against kube-apiserver, every data step scripted through the
 * fake kubelet's scenario (the Jobs' logs and exit codes; the inspections print the old server's
 * facts as the simulator's scenarios do). What the user makes first (README: the ssh key Secret
 * and ConfigMap, the CA password Secret) is made with the plane's kubectl.
 */
import * as path from 'path';
import { readPlan } from '../../src/plan/reader';
import { cli } from '../runtime/e2e/harness';
import { inspectJobs } from '../runtime/e2e/inspect-facts';
import { plane, runOwn, until, writes } from './helpers';
import { auditSize, ROOT } from './plane/plane';

const p = plane();
const DIST = path.join(ROOT, 'dist', 'migrate');
const b64 = (t: string) => Buffer.from(t).toString('base64');

describe('dist/migrate against kube-apiserver', () => {
  const ns = p.namespace('migrate');
  const opts = { kubeconfig: p.kubeconfig, namespace: ns };
  const get = (kind: string, name: string) => p.get(ns, kind, name);
  const secret = (name: string, data: Record<string, string>, type = 'Opaque') => p.kubectl(['create', '-f', '-'], JSON.stringify({
    apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: ns }, type, data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, b64(v)])),
  }));

  beforeAll(async () => {
    p.scenario({
      jobs: {
        ...inspectJobs({
          fqdn: 'old-server.example.com', current_release: '2024.10', timezone: 'Europe/Berlin', has_hub: 'false', debug_java: 'false',
          tftp_enabled: 'true', ca_fingerprint_match: 'true',
        }, { current_pg_version: '14' }),
        'uyuni-data-sync': { logs: ['uyuni-data-sync: stopping spacewalk on old-server.example.com', 'uyuni-data-sync: copying /var/spacewalk'] },
        // Runs long enough for the test to make what its script makes (below).
        'uyuni-import-secrets': { durationMs: 4000, logs: ['uyuni-import-secrets: CA and database credentials imported'] },
      },
    }, ns);
    // As README says, before the run: the namespace, the ssh key and config, the CA password.
    expect((await p.kubectl(['create', 'namespace', ns])).code).toBe(0);
    expect((await secret('uyuni-migration-key', { key: 'k', 'key.pub': 'p' })).code).toBe(0);
    expect((await p.kubectl(['-n', ns, 'create', 'configmap', 'uyuni-migration-ssh', '--from-literal=config=Host *', '--from-literal=known_hosts=old-server.example.com ssh-ed25519 AAAA'])).code).toBe(0);
    expect((await secret('uyuni-ca-password', { password: 'pw' })).code).toBe(0);
  });

  afterAll(async () => {
    await p.kubectl(['delete', 'namespace', ns, '--wait=false']);
  });

  it('runs every data step to done', async () => {
    const running = cli('run', DIST, { ...opts, yes: true });
    // The fake kubelet runs no container: what uyuni-import-secrets' script makes in the cluster
    // from the copied data (the migrated CA, the database credentials), the test makes while the
    // Job's pod runs, with the plane's kubectl.
    await until('the import Job running', async () => (await get('job', 'uyuni-import-secrets'))?.status?.active === 1, 90_000);
    expect((await secret('uyuni-ca', { 'tls.crt': 'c', 'tls.key': 'k' }, 'kubernetes.io/tls')).code).toBe(0);
    for (const name of ['db-credentials', 'reportdb-credentials']) expect((await secret(name, { username: 'u', password: 'p' }, 'kubernetes.io/basic-auth')).code).toBe(0);
    const r = await running;
    expect({ code: r.code, err: r.err }).toEqual({ code: 0, err: expect.any(String) });
    expect(r.out).toContain('uyuni-data-sync: copying /var/spacewalk');
    // Every step Job ran to done; the cleanup deleted the Jobs that mounted migration-data with
    // it (pvc-protection keeps a claim while a Succeeded pod references it), the others stay.
    const removed = ['uyuni-data-sync', 'uyuni-inspect', 'uyuni-import-secrets', 'uyuni-db-finalize'];
    for (const s of readPlan(DIST).steps) {
      for (const o of s.objects.filter((x) => x.kind === 'Job')) {
        expect(r.out).toMatch(new RegExp(`\\[\\d+/\\d+\\] ${s.name}: done`));
        expect([o.name, (await get('job', o.name))?.status?.succeeded]).toEqual([o.name, removed.includes(o.name) ? undefined : 1]);
      }
    }
    await until('uyuni available', async () => (await get('deployment', 'uyuni'))?.status?.availableReplicas === 1);
    // The cleanup took the migration data and the importer's rights away; the user's objects stay.
    expect(await get('pvc', 'migration-data')).toBeUndefined();
    expect(await get('role', 'uyuni-migration-importer')).toBeUndefined();
    expect(await get('secret', 'uyuni-migration-key')).toBeDefined();
  });

  it('plan then shows what the docs say of a finished migration: run would refuse it before any write', async () => {
    const plan = await cli('plan', DIST, { ...opts, detailedExitcode: true });
    expect(plan.code).toBe(1);
    expect(plan.out).toMatch(/run would refuse before any write:[\s\S]*finished migration never runs again/);
  });

  it('a second run is refused and writes nothing to the plan\'s objects', async () => {
    const mark = auditSize(p.dir);
    const again = await cli('run', DIST, { ...opts, yes: true });
    expect(again.code).toBe(1);
    expect(again.out + again.err).toMatch(/finished migration never runs again/);
    expect(writes(p, mark, ns).filter((w) => !runOwn(w))).toEqual([]);
  });
});
