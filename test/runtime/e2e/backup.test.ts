/**
 * dist/backup and dist/restore through the runtime against the API simulator: the order of the
 * stop, the copy and the restart (also when the copy fails), the backups `status` lists, and a
 * restore that refuses claims holding data unless restore.force.
 */
import * as fs from 'fs';
import * as path from 'path';
import { startSimulator, Simulator } from '../../sim';
import { BACKUP_COPIED, BACKUP_INSPECTED, backupPruned, PINNED, restoreChecked } from './backup-facts';
import { cli, ROOT, tmpDir } from './harness';
import { lines, putClaims } from './inspect-facts';

const dist = (p: string) => path.join(ROOT, 'dist', p);
const NS = 'uyuni';

const inspected = { ...BACKUP_INSPECTED, ...backupPruned(['20261130T203000Z 2026-11-30T20:30:00Z 5368709000 unverified']) };
const copied = BACKUP_COPIED;
const failed = { 'uyuni-backup': { logs: ['uyuni-backup: backup FAILED', ...lines({ backup_ok: 'false', backup_error: 'the backup claim is full' })] } };

let sim: Simulator;
afterEach(async () => {
  await sim?.stop();
});

function events(runDir: string): any[] {
  return fs.readFileSync(path.join(runDir, 'events.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
}
/** Index of the first event matching. */
const at = (ev: any[], pred: (e: any) => boolean) => {
  const i = ev.findIndex(pred);
  if (i < 0) throw new Error('no such event');
  return i;
};
const scaled = (name: string, to: number) => (e: any) => e.type === 'action' && e.action === `scale to ${to}` && e.object.kind === 'Deployment' && e.object.name === name && e.object.namespace === NS;
const applied = (job: string) => (e: any) => e.type === 'apply' && e.object.kind === 'Job' && e.object.name === job && e.object.namespace === NS;

describe('dist/backup', () => {
  it('stops the server and the database, copies, starts them again, then prunes; status lists the backups', async () => {
    sim = await startSimulator({ jobs: { ...inspected, ...copied } });
    expect((await cli('run', dist('install'), { kubeconfig: sim.kubeconfigPath })).code).toBe(0);
    const runDir = tmpDir();
    const r = await cli('run', dist('backup'), { kubeconfig: sim.kubeconfigPath, runDir, yes: true });
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    const ev = events(runDir);
    // What it is taken with is recorded while the server still runs.
    expect(at(ev, (e) => e.type === 'step-done' && e.step === 'record')).toBeLessThan(at(ev, scaled('uyuni', 0)));
    expect(at(ev, applied('uyuni-backup-record'))).toBeLessThan(at(ev, scaled('uyuni', 0)));
    const order = [
      at(ev, scaled('uyuni', 0)), at(ev, scaled('db', 0)), at(ev, applied('uyuni-backup')),
      at(ev, scaled('db', 1)), at(ev, scaled('uyuni', 1)), at(ev, applied('uyuni-backup-prune')),
    ];
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    // The copy starts only once nothing runs any more.
    const stopDone = at(ev, (e) => e.type === 'step-done' && e.step === 'stop-server');
    expect(stopDone).toBeLessThan(order[2]);
    for (const d of ['uyuni', 'db']) expect(sim.get('apps/v1', 'Deployment', d, NS)?.spec?.replicas).toBe(1);
    expect(sim.get('apps/v1', 'Deployment', 'uyuni', NS)?.status?.readyReplicas).toBe(1);
    // The backup claim is not the server's: destroy of dist/install never selects it.
    expect(sim.get('v1', 'PersistentVolumeClaim', 'uyuni-backup', NS)?.metadata?.labels?.['app.kubernetes.io/part-of']).toBe('uyuni-backup');

    const s = await cli('status', dist('backup'), { kubeconfig: sim.kubeconfigPath });
    expect(s.out).not.toMatch(/waiting|failed/);
    expect(s.code).toBe(0);
    expect(s.out).toMatch(/BACKUP +CREATED +SIZE +VERIFIED/);
    expect(s.out).toMatch(/20261201T203000Z +2026-12-01T20:30:00Z +5\.0 GiB +yes/);
    expect(s.out).toMatch(/20261130T203000Z +2026-11-30T20:30:00Z +5\.0 GiB +no/);

    // The next run is a new backup: the last run's Jobs are deleted first, not skipped.
    const again = await cli('run', dist('backup'), { kubeconfig: sim.kubeconfigPath, yes: true });
    expect(again.code).toBe(0);
    expect(again.out).toMatch(/delete Job\/uyuni-backup \(uyuni\): deleting/);
    expect(again.out).not.toMatch(/backup: skipped|step-skip/);
  }, 120_000);

  it('starts the server again when the copy failed, then fails the run at the prune gate without pruning', async () => {
    sim = await startSimulator({ jobs: { ...inspected, ...failed } });
    expect((await cli('run', dist('install'), { kubeconfig: sim.kubeconfigPath })).code).toBe(0);
    const r = await cli('run', dist('backup'), { kubeconfig: sim.kubeconfigPath, yes: true });
    expect(r.code).toBe(1);
    expect(r.out + r.err).toContain('the copy failed (fact backup_error');
    for (const d of ['uyuni', 'db']) expect(sim.get('apps/v1', 'Deployment', d, NS)?.spec?.replicas).toBe(1);
    expect(sim.get('apps/v1', 'Deployment', 'uyuni', NS)?.status?.readyReplicas).toBe(1);
    expect(sim.get('batch/v1', 'Job', 'uyuni-backup-prune', NS)).toBeUndefined();
  }, 120_000);

  it('refuses before stopping anything when the data is of another server name', async () => {
    sim = await startSimulator({ jobs: { ...inspected, 'uyuni-backup-inspect': { logs: lines({ current_release: '2026.08', fqdn: 'other.example.com' }) } } });
    expect((await cli('run', dist('install'), { kubeconfig: sim.kubeconfigPath })).code).toBe(0);
    const r = await cli('run', dist('backup'), { kubeconfig: sim.kubeconfigPath, yes: true });
    expect(r.code).toBe(1);
    expect(r.out + r.err).toContain('the data belongs to another server name');
    expect(sim.get('apps/v1', 'Deployment', 'uyuni', NS)?.spec?.replicas).toBe(1);
    expect(sim.get('batch/v1', 'Job', 'uyuni-backup', NS)).toBeUndefined();
  }, 120_000);
});

const imagesOf = (d: any) => [...d?.spec?.template?.spec?.initContainers ?? [], ...d?.spec?.template?.spec?.containers ?? []].map((c: any) => c.image);

const checked = restoreChecked;

describe('dist/restore', () => {
  it('refuses claims that hold data (restore.force is false): the restore Job never made, the server and db it stopped started again', async () => {
    sim = await startSimulator({ jobs: checked({ target_empty: 'false', target_with_data: 'var-spacewalk var-pgsql18' }) });
    putClaims(sim, NS, ['uyuni-backup']); // the backup claim, which restore's check Job mounts
    expect((await cli('run', dist('install'), { kubeconfig: sim.kubeconfigPath })).code).toBe(0);
    const replicas = () => Object.fromEntries(['uyuni', 'db'].map((d) => [d, sim.get('apps/v1', 'Deployment', d, NS)?.spec?.replicas]));
    const before = replicas();
    expect(before).toEqual({ uyuni: 1, db: 1 });
    const runDir = tmpDir();
    const r = await cli('run', dist('restore'), { kubeconfig: sim.kubeconfigPath, runDir, yes: true });
    expect(r.code).toBe(1);
    expect(r.out + r.err).toMatch(/claims hold data \(fact target_with_data\): a restore replaces it; set restore.force: true/);
    expect(r.out + r.err).toContain('started again what this run stopped: Deployment/db (uyuni) to 1, Deployment/uyuni (uyuni) to 1');
    expect(sim.get('batch/v1', 'Job', 'uyuni-restore', NS)).toBeUndefined();
    expect(replicas()).toEqual(before);
    // the stop came first (the claims can only be looked at once nothing runs on them), the start again after the refusal
    const ev = events(runDir);
    expect(at(ev, scaled('db', 0))).toBeLessThan(at(ev, (e) => e.type === 'gate' && e.step === 'restore' && !e.ok));
    expect(at(ev, (e) => e.type === 'gate' && e.step === 'restore' && !e.ok)).toBeLessThan(at(ev, (e) => e.type === 'action' && e.action === 'scale back to 1' && e.object.name === 'db'));
  }, 120_000);

  it('restores into empty claims: the database first, then the server, waited for', async () => {
    sim = await startSimulator({ jobs: checked({ target_empty: 'true' }) });
    putClaims(sim, NS, ['uyuni-backup']); // the backup claim, which restore's check Job mounts
    const runDir = tmpDir();
    const r = await cli('run', dist('restore'), { kubeconfig: sim.kubeconfigPath, runDir, yes: true });
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    const ev = events(runDir);
    const job = at(ev, (e) => e.type === 'step-done' && e.step === 'restore');
    const db = at(ev, (e) => e.type === 'step-done' && e.step === 'database');
    const server = at(ev, (e) => e.type === 'step-done' && e.step === 'server');
    expect(job).toBeLessThan(db);
    expect(db).toBeLessThan(server);
    expect(sim.get('apps/v1', 'Deployment', 'uyuni', NS)?.status?.readyReplicas).toBe(1);
    // What the backup was taken with runs, by digest, init containers too; plan said so and run showed it.
    const serverImages = imagesOf(sim.get('apps/v1', 'Deployment', 'uyuni', NS));
    expect(serverImages.length).toBeGreaterThan(0);
    expect(new Set(serverImages)).toEqual(new Set([PINNED.server]));
    expect(new Set(imagesOf(sim.get('apps/v1', 'Deployment', 'db', NS)))).toEqual(new Set([PINNED.db]));
    expect(r.out).toContain(`registry.opensuse.org/uyuni/server:2026.08 → ${PINNED.server}`);
    const plan = await cli('plan', dist('restore'), { kubeconfig: sim.kubeconfigPath });
    expect(plan.out).toMatch(new RegExp(`image +container uyuni of Deployment/uyuni \\(uyuni\\): registry.opensuse.org/uyuni/server:2026.08 → ${PINNED.server.replace(/[.]/g, '\\.')}`));
  }, 120_000);

  it('refuses what the backup\'s record refuses (here an image it cannot pin) before stopping anything; plan names the gate', async () => {
    const refusal = 'the images the backup was taken with cannot all be pinned (server: the backup recorded registry.opensuse.org/uyuni/server:2026.08 '
      + 'without a registry digest (imageID sha256:1234): it cannot be pinned): set restore.allowNewerImages: true to restore with the configured ones';
    sim = await startSimulator({ jobs: { ...checked({ target_empty: 'true' }), 'uyuni-restore-check': { logs: lines({
      backup_verified: 'true', backup_fqdn: 'uyuni.example.com', backup_product: 'uyuni', backup_release: '2026.08',
      backup_pg_version: '18', backup_tls_mode: 'generated', product: 'uyuni', uyuni_release: '2026.08',
      backup_record: 'present', 'record_image_diff.1': 'server: the backup recorded registry.opensuse.org/uyuni/server:2026.08 without a registry digest (imageID sha256:1234): it cannot be pinned',
      record_images_pinned: 'false', record_config_same: 'true', record_ok: 'false', record_refusal: refusal,
    }) } } });
    putClaims(sim, NS, ['uyuni-backup']); // the backup claim, which restore's check Job mounts
    expect((await cli('run', dist('install'), { kubeconfig: sim.kubeconfigPath })).code).toBe(0);
    const plan = await cli('plan', dist('restore'), { kubeconfig: sim.kubeconfigPath });
    expect(plan.out).toContain('the backup\'s record of what it was taken with refuses this restore (fact record_refusal');
    const r = await cli('run', dist('restore'), { kubeconfig: sim.kubeconfigPath, yes: true });
    expect(r.code).toBe(1);
    expect(r.out + r.err).toContain('the backup\'s record of what it was taken with refuses this restore');
    expect(r.out + r.err).toMatch(/record_ok/);
    expect(sim.get('apps/v1', 'Deployment', 'uyuni', NS)?.spec?.replicas).toBe(1);
    expect(sim.get('apps/v1', 'Deployment', 'db', NS)?.spec?.replicas).toBe(1);
    expect(sim.get('batch/v1', 'Job', 'uyuni-stop-server', NS)).toBeUndefined();
    expect(sim.get('batch/v1', 'Job', 'uyuni-restore', NS)).toBeUndefined();
    // status shows why, from the check's facts
    const s = await cli('status', dist('restore'), { kubeconfig: sim.kubeconfigPath });
    expect(s.out).toContain('record_refusal=the images the backup was taken with cannot all be pinned');
  }, 120_000);

  it('refuses a backup of a newer release than the images, before stopping anything', async () => {
    sim = await startSimulator({ jobs: { ...checked({ target_empty: 'true' }), 'uyuni-restore-check': { logs: lines({
      backup_verified: 'true', backup_fqdn: 'uyuni.example.com', backup_product: 'uyuni', backup_release: '2026.11',
      backup_pg_version: '18', backup_tls_mode: 'generated', product: 'uyuni', uyuni_release: '2026.08',
    }) } } });
    putClaims(sim, NS, ['uyuni-backup']); // the backup claim, which restore's check Job mounts
    expect((await cli('run', dist('install'), { kubeconfig: sim.kubeconfigPath })).code).toBe(0);
    const r = await cli('run', dist('restore'), { kubeconfig: sim.kubeconfigPath, yes: true });
    expect(r.code).toBe(1);
    expect(r.out + r.err).toContain('the backup is of a newer release than the server image');
    expect(sim.get('apps/v1', 'Deployment', 'uyuni', NS)?.spec?.replicas).toBe(1);
  }, 120_000);
});
