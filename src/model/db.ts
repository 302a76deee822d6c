import { WAL_ARCHIVE } from '../plan/types';
import { WAL_ARCHIVE_VOLUME } from './volumes';

/**
 * The database endpoints (docs/upstream.md), defined once: the ConfigMap
 * uyuni-config, the server's environment, the db-waiter, the Services and the certificate's
 * names all read them from here.
 */
export const PG_PORT = 5432;

export const DATABASES = {
  /** The product database. */
  product: { host: 'db', name: 'susemanager' },
  /** The report database (same PostgreSQL, its own Service name). */
  report: { host: 'reportdb', name: 'reportdb' },
} as const;

/** The PostgreSQL major version of the current server-postgresql image (5.2.5 and later). */
export const PG_MAJOR = 18;

/**
 * The PostgreSQL user and group (999) of the server-postgresql image and of the
 * server-database-migration image that runs pg_upgrade (its Dockerfile @ 07f6499e).
 */
export const POSTGRES_UID = 999;

/**
 * The grace of the server's and the database's pods: upstream's `TimeoutStopSec=180` of both
 * services (uyuni-tools mgradm/shared/templates/serviceTemplate.go and pgsqlServiceTemplate.go;
 * docs/upstream.md). Kubernetes' default, 30 s, kills a busy PostgreSQL before it has shut down.
 */
export const STOP_GRACE_SECONDS = 180;

/**
 * The environment variable that carries `db.podsCIDR` (server-helm README: "The IP range to use
 * for the plain text connections on the database can be configured using the db.podsCIDR
 * value", default 10.42.0.0/16) into the db pod's init container pods-cidr
 * (src/scripts/db-pods-cidr.sh), which writes it into `$PGDATA/pg_hba_custom.conf`. No image
 * script reads a variable for it: 01-pg_hba.sh (@ 5387ff36, d8520ca6, f8787c43) allows plain
 * text from the db pod's own /16 only and includes pg_hba_custom.conf first, the place it names
 * for custom rules (docs/upstream.md, decision m).
 */
export const PODS_CIDR_ENV = 'PODS_CIDR';

/**
 * Where continuous archiving (`db.archiving`) keeps the WAL: a claim of its own, named and mounted
 * as upstream's (uyuni-tools b6ad4452 `shared/utils/volumes.go` `VarPgsqlBackupVolumeMount`:
 * `var-pgsql-walbackup` at /var/lib/pgsql/backup, 50Gi), never on the data claim.
 */
export const WAL_ARCHIVE_DIR = WAL_ARCHIVE_VOLUME.mountPath;

/**
 * PostgreSQL's `archive_command` for `db.archiving` (run by `sh -c`; %p is the segment's path
 * relative to PGDATA, %f its name). It never overwrites: an archived segment of the same name is
 * accepted only when it is byte for byte the same (a copy finished before a crash, as
 * PostgreSQL's documentation asks), any other refused (non-zero: PostgreSQL keeps the segment and
 * retries). The copy goes to a `.tmp` name first and is renamed on the same volume, so a
 * half-written segment is never taken for an archived one. Upstream runs the image's
 * `smdba-pgarchive --source "%p" --destination "<dir>/%f"` (uyuni-tools b6ad4452
 * `mgradm/cmd/backup/db/types.go` `ArchiveCommand`), which does the same copy, removes an
 * existing destination and fails; ours keeps it. It uses only sh, coreutils and sed: the
 * openSUSE postgres base image's package list (SUSE/BCI-dockerfile-generator
 * src/bci_build/package/postgres.py @ 0126875b) names coreutils, findutils, sed and util-linux,
 * neither diffutils (cmp) nor awk; whether the image has those otherwise is unverified. No single
 * quote inside: it goes into postgresql.conf as a quoted string.
 */
export function archiveCommand(dir: string = WAL_ARCHIVE_DIR): string {
  if (/['\s]/.test(dir)) throw new Error(`archive directory ${dir} must not contain quotes or spaces`);
  const dest = `${dir}/%f`;
  // The comparison: the archived copy's SHA-1 checked against %p (`sha1sum -c`); an unreadable
  // copy gives no checksum line, which -c refuses. No `$`: it travels in a container's env.
  return `if [ -f ${dest} ]; then sha1sum ${dest} | sed "s#  .*#  %p#" | sha1sum --status -c; else cp %p ${dest}.tmp && mv ${dest}.tmp ${dest}; fi`;
}

/**
 * The db pod's container that reports the archiving (db.archiving): PostgreSQL's pg_stat_archiver
 * and the archive claim's use, one line in its log each ARCHIVE_STATUS_INTERVAL_SECONDS, which
 * `uyuni-cdk status` reads through the API (src/scripts/db-archive-status.sh).
 */
export const ARCHIVE_STATUS_CONTAINER = WAL_ARCHIVE.statusContainer;
export const ARCHIVE_STATUS_INTERVAL_SECONDS = 60;

/** The settings `db.archiving` adds to postgresql.conf (upstream's `mgradm backup db enable` sets the same three). */
export function archiveSettings(dir: string = WAL_ARCHIVE_DIR): Readonly<Record<string, string>> {
  return { wal_level: 'replica', archive_mode: 'on', archive_command: `'${archiveCommand(dir)}'` };
}
