/**
 * db.archiving's install against kube-apiserver (its Deployment, ReplicaSet and PV controllers,
 * the fake kubelet running the pods): the WAL claim is made, bound and mounted in the db pod
 * beside the data claim, with the init container that writes the archiving settings.
 */
import * as fs from 'fs';
import { cli } from '../runtime/e2e/harness';
import { lines } from '../runtime/e2e/inspect-facts';
import { defaultConfigWith, synthYaml } from '../helpers/synth';
import { plane } from './helpers';

const p = plane();
describe('an install with db.archiving against kube-apiserver', () => {
  const ns = p.namespace('archiving');
  const synthesized = synthYaml(defaultConfigWith({ db: { archiving: { enabled: true, size: '5Gi', restoreTo: '2026-12-03T11:00:00Z' } } }));
  const opts = { kubeconfig: p.kubeconfig, namespace: ns };
  /** What the db pod's archive-status container printed last (src/scripts/db-archive-status.sh). */
  const REPORT = `archive-status checked=${new Date().toISOString().slice(0, 19)}Z last_wal=000000010000000000000007 last_time=2026-12-03T10:00:00Z `
    + 'failed_count=1 last_failed_wal=000000010000000000000005 size_kib=5242880 used_kib=81920';

  beforeAll(() => {
    p.scenario({
      deployments: { db: { containerLogs: { 'archive-status': ['archive-status checked=2026-12-03T09:59:00Z size_kib=5242880 used_kib=0 error=psql: not yet', REPORT] } } },
      jobs: {
        'uyuni-db-pitr-restore': { logs: lines({ pitr_base: '20261203T100000Z', pitr_target: '2026-12-03T11:00:00Z' }) },
        'uyuni-db-pitr-recovery': { logs: ['db-recovery-wait: recovery ended after 5s', ...lines({ recovered: 'true' })] },
        'uyuni-db-basebackup': { logs: ['db-basebackup: base backup 20261203T120000Z', ...lines({ base_backup: '20261203T120000Z', base_start_wal: '000000010000000000000009', pruned_wal: '8', pruned_base: '', archive_wal: '1' })] } },
    }, ns);
  });

  afterAll(async () => {
    await p.kubectl(['delete', 'namespace', ns, '--wait=false']);
    fs.rmSync(synthesized.root, { recursive: true, force: true });
  });

  it('runs to an available database with claim var-pgsql-walbackup bound and mounted at /var/lib/pgsql/backup', async () => {
    const run = await cli('run', synthesized.install.dir, { kubeconfig: p.kubeconfig, namespace: ns, yes: true });
    expect({ code: run.code, err: run.err }).toEqual({ code: 0, err: expect.any(String) });
    const claim = JSON.parse((await p.kubectl(['-n', ns, 'get', 'pvc', 'var-pgsql-walbackup', '-o', 'json'])).out);
    expect(claim.spec.resources.requests.storage).toBe('5Gi');
    expect(claim.status.phase).toBe('Bound');
    const db = JSON.parse((await p.kubectl(['-n', ns, 'get', 'deployment', 'db', '-o', 'json'])).out);
    expect(db.status.availableReplicas).toBe(1);
    const spec = db.spec.template.spec;
    expect(spec.initContainers.map((c: any) => c.name)).toEqual(['data-dir', 'pods-cidr', 'archiving']);
    expect(spec.containers[0].volumeMounts).toContainEqual({ name: 'var-pgsql-walbackup', mountPath: '/var/lib/pgsql/backup' });
    const pods = JSON.parse((await p.kubectl(['-n', ns, 'get', 'pods', '-l', 'app.kubernetes.io/component=db', '-o', 'json'])).out).items;
    expect(pods.map((x: any) => x.spec.volumes.find((v: any) => v.name === 'var-pgsql-walbackup')?.persistentVolumeClaim.claimName)).toEqual(['var-pgsql-walbackup']);
  });

  it('status shows the archiving from the db pod\'s container archive-status, through pods/log, in text and JSON', async () => {
    const text = await cli('status', synthesized.install.dir, opts);
    expect(text.code).toBe(0);
    expect(text.out).toMatch(/^archiving \(var-pgsql-walbackup, pod db-[a-z0-9]+-[a-z0-9]+, checked \S+\)$/m);
    expect(text.out).toMatch(/^ {2}newest archived WAL {2}000000010000000000000007 at 2026-12-03T10:00:00Z \(\S+ (s|min|h|days) ago\)$/m);
    expect(text.out).toContain('  failed attempts      1 (last: 000000010000000000000005)');
    expect(text.out).toContain('  archive claim        80.0 MiB used of 5.0 GiB (2%)');
    const json = await cli('status', synthesized.install.dir, { ...opts, output: 'json' });
    expect(JSON.parse(json.out).archiving).toEqual({
      pod: expect.stringMatching(/^db-/), checked: expect.any(String), lastArchivedWal: '000000010000000000000007', lastArchivedTime: '2026-12-03T10:00:00Z',
      ageSeconds: expect.any(Number), failedCount: 1, lastFailedWal: '000000010000000000000005', usedBytes: 81920 * 1024, sizeBytes: 5242880 * 1024,
    });
  });

  it('plan db-basebackup is refused without confirmation, writing nothing, then runs to done with its Job', async () => {
    const dir = synthesized['db-basebackup'].dir;
    const refused = await cli('run', dir, opts);
    expect(refused.code).not.toBe(0);
    // The step's Jobs delete the older base backups and WAL: not done without --yes, and `plan` lists it.
    expect(refused.err).toContain('1 destructive change and no terminal to ask on: nothing was done');
    const shown = await cli('plan', dir, opts);
    expect(shown.out).toContain('deletes   the base backups in var-pgsql-walbackup older than the new one');
    expect((await p.kubectl(['-n', ns, 'get', 'job', 'uyuni-db-basebackup'])).code).not.toBe(0);
    expect((await p.kubectl(['-n', ns, 'get', 'configmap', 'uyuni-db-basebackup'])).code).not.toBe(0);
    const run = await cli('run', dir, { ...opts, yes: true });
    expect({ code: run.code, err: run.err }).toEqual({ code: 0, err: expect.any(String) });
    expect(run.out).toContain('facts: base_backup=20261203T120000Z base_start_wal=000000010000000000000009 pruned_wal=8');
    const job = JSON.parse((await p.kubectl(['-n', ns, 'get', 'job', 'uyuni-db-basebackup', '-o', 'json'])).out);
    expect(job.status.succeeded).toBe(1);
    expect(job.metadata.labels['app.kubernetes.io/part-of']).toBe('uyuni-db-archive');
    const status = await cli('status', dir, opts);
    expect(status.code).toBe(0);
    expect(status.out).toMatch(/^basebackup +done/m);
  });

  it('plan db-pitr is refused without confirmation, the server running on, then stops server and database, restores, and starts them again', async () => {
    const dir = synthesized['db-pitr'].dir;
    const shown = await cli('plan', dir, opts);
    expect(shown.out).toContain('deletes   the database on var-pgsql18: everything written after 2026-12-03T11:00:00Z is lost');
    const refused = await cli('run', dir, opts);
    expect(refused.err).toMatch(/destructive changes? and no terminal to ask on: nothing was done/);
    expect(refused.code).not.toBe(0);
    const replicas = async (d: string) => JSON.parse((await p.kubectl(['-n', ns, 'get', 'deployment', d, '-o', 'json'])).out).spec.replicas;
    expect([await replicas('uyuni'), await replicas('db')]).toEqual([1, 1]);
    expect((await p.kubectl(['-n', ns, 'get', 'job', 'uyuni-db-pitr-restore'])).code).not.toBe(0);

    const run = await cli('run', dir, { ...opts, yes: true });
    expect({ code: run.code, err: run.err }).toEqual({ code: 0, err: expect.any(String) });
    expect(run.out).toContain('facts: pitr_base=20261203T100000Z pitr_target=2026-12-03T11:00:00Z');
    expect(run.out).toContain('facts: recovered=true');
    // In order: the server stopped before the database, the restore with both stopped, the database first back.
    const order = ['stop-server', 'stop-db', 'pitr-restore', 'start-db', 'recovery', 'start-server'].map((step) => run.out.indexOf(`] ${step}: done`));
    expect(order.every((x, i) => x >= 0 && (i === 0 || x > order[i - 1]))).toBe(true);
    expect([await replicas('uyuni'), await replicas('db')]).toEqual([1, 1]);
    const job = JSON.parse((await p.kubectl(['-n', ns, 'get', 'job', 'uyuni-db-pitr-restore', '-o', 'json'])).out);
    expect(job.status.succeeded).toBe(1);
    const status = await cli('status', dir, opts);
    expect({ code: status.code, out: status.out }).toEqual({ code: 0, out: expect.stringMatching(/^start-server +done/m) });
  });
});
