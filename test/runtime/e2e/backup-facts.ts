/**
 * What the Jobs of dist/backup and dist/restore print, for the suites that run those plans on the
 * simulator (backup.test.ts) and on kube-apiserver (test/cluster/backup-restore.test.ts,
 * rbac.test.ts): `key=value` lines of a server that passes every gate, as the scripts print them
 * (src/scripts/backup*.sh, restore*.sh).
 */
import { lines } from './inspect-facts';

/** The facts of the backup's inspect Jobs: the current product, a database of the image's major. */
export const BACKUP_INSPECTED = {
  'uyuni-backup-inspect': { logs: lines({ product: 'uyuni', uyuni_release: '2026.08', current_product: 'uyuni', current_release: '2026.08', fqdn: 'uyuni.example.com' }) },
  'uyuni-backup-inspect-db': { logs: lines({ current_pg_version: '18', image_pg_version: '18' }) },
};

/** The copy done: one claim's progress line, then its facts. */
export const BACKUP_COPIED = { 'uyuni-backup': { logs: ['uyuni-backup: claim 1/26 var-cobbler: 10.0 KiB in 0s (0.0 MiB/s)', ...lines({ backup_ok: 'true', backup_id: '20261201T203000Z', backup_bytes: '5368709120' })] } };

/** The prune's list of what is kept: the new backup (verified) and the given older ones. */
export const backupPruned = (older: string[] = []) => ({
  'uyuni-backup-prune': { logs: ['uyuni-backup-prune: backup 20261201T203000Z verified', ...lines({
    backups: String(1 + older.length), 'backup.1': '20261201T203000Z 2026-12-01T20:30:00Z 5368709120 verified',
    ...Object.fromEntries(older.map((b, i) => [`backup.${i + 2}`, b])),
  })] },
});

/** The images the backup recorded, by digest, as restore-check prints them. */
export const PINNED = {
  server: `registry.opensuse.org/uyuni/server@sha256:${'ab'.repeat(32)}`,
  db: `registry.opensuse.org/uyuni/server-postgresql@sha256:${'cd'.repeat(32)}`,
};

/** restore's check (a verified backup of this server, its record present and pinned), its database major, and what the target claims hold. */
export const restoreChecked = (target: Record<string, string>) => ({
  'uyuni-restore-check': { logs: lines({
    backup_id: '20261201T203000Z', backup_verified: 'true', backup_fqdn: 'uyuni.example.com', backup_product: 'uyuni', backup_release: '2026.08',
    backup_pg_version: '18', backup_tls_mode: 'generated', product: 'uyuni', uyuni_release: '2026.08',
    backup_record: 'present', record_images_pinned: 'true', record_config_same: 'true', record_ok: 'true',
    'restore_image.server': PINNED.server, 'restore_image.db': PINNED.db,
  }) },
  'uyuni-restore-inspect-db': { logs: lines({ image_pg_version: '18' }) },
  'uyuni-restore-target': { logs: lines(target) },
});
