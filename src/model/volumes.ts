/**
 * The claim table (server-helm 2026.08; docs/upstream.md), defined once: PVCs, the
 * server's mounts, `init-volumes`, the db Deployment and every step Job's mounts derive from it.
 * No `root` and no `var-pgsql` in the server pod any more: PostgreSQL 18 runs apart on
 * `var-pgsql18`, and the setup marker lives on var-spacewalk.
 */
import { WAL_ARCHIVE } from '../plan/types';

/** Which pod mounts a claim. */
export type VolumeOwner = 'server' | 'db' | 'flow';

export interface VolumeSpec {
  /** PVC name = volume name. */
  readonly name: string;
  /** Where its pod mounts it. */
  readonly mountPath: string;
  /** Default size (a Kubernetes quantity). */
  readonly size: string;
  readonly owner: VolumeOwner;
  /**
   * init-volumes seeds it from the image when it is empty. The chart leaves out var-spacewalk,
   * ca-certs and run-salt-master (mounted, never seeded). @default true for server claims
   */
  readonly seed?: boolean;
}

const server = (name: string, mountPath: string, size: string, seed = true): VolumeSpec =>
  ({ name, mountPath, size, owner: 'server', ...(seed ? {} : { seed: false }) });

/** The server's claims, in the chart's mount order. */
export const SERVER_VOLUMES: readonly VolumeSpec[] = [
  server('var-cobbler', '/var/lib/cobbler', '10Mi'),
  server('var-search', '/var/lib/rhn/search', '10Gi'),
  server('var-salt', '/var/lib/salt', '10Mi'),
  server('var-cache', '/var/cache', '10Gi'),
  server('var-spacewalk', '/var/spacewalk', '100Gi', false),
  server('var-log', '/var/log', '2Gi'),
  server('srv-salt', '/srv/salt', '10Mi'),
  server('srv-www', '/srv/www/', '100Gi'),
  server('srv-tftpboot', '/srv/tftpboot', '300Mi'),
  server('srv-formulametadata', '/srv/formula_metadata', '10Mi'),
  server('srv-pillar', '/srv/pillar', '10Mi'),
  server('srv-susemanager', '/srv/susemanager', '1Mi'),
  server('srv-spacewalk', '/srv/spacewalk', '10Mi'),
  server('ca-certs', '/etc/pki/trust/anchors/', '10Mi', false),
  server('run-salt-master', '/run/salt/master', '10Mi', false),
  server('etc-apache2', '/etc/apache2', '1Mi'),
  server('etc-systemd-multi', '/etc/systemd/system/multi-user.target.wants', '1Mi'),
  server('etc-systemd-sockets', '/etc/systemd/system/sockets.target.wants', '1Mi'),
  server('etc-salt', '/etc/salt', '1Mi'),
  server('etc-tomcat', '/etc/tomcat', '1Mi'),
  server('etc-cobbler', '/etc/cobbler', '1Mi'),
  server('etc-sysconfig', '/etc/sysconfig', '20Mi'),
  server('etc-postfix', '/etc/postfix', '1Mi'),
  server('etc-sssd', '/etc/sssd', '1Mi'),
  server('etc-rhn', '/etc/rhn', '1Mi'),
];

/** The PostgreSQL 18 data of Deployment db (volume name `var-pgsql`, as the chart names it). */
export const DB_VOLUME: VolumeSpec = { name: 'var-pgsql18', mountPath: '/var/lib/pgsql/data', size: '50Gi', owner: 'db' };
/** The pod volume name of DB_VOLUME in the db pod (the chart keeps the old name). */
export const DB_POD_VOLUME = 'var-pgsql';

/**
 * The database claim of the older generations (PostgreSQL 14/16: the chart's db before 2026, or
 * the server container's own PostgreSQL before 5.1.5, with data/ below). The source of a
 * PostgreSQL major upgrade; the migration copies the old host's /var/lib/pgsql into it.
 */
export const LEGACY_DB_VOLUME: VolumeSpec = { name: 'var-pgsql', mountPath: '/var/lib/pgsql', size: '50Gi', owner: 'flow' };

/**
 * The WAL archive of `db.archiving` (only when enabled): upstream's name and size (uyuni-tools
 * b6ad4452 `shared/utils/volumes.go` `VarPgsqlBackupVolumeMount`), mounted at WAL_ARCHIVE_DIR
 * (src/model/db.ts). Its size is `db.archiving.size`.
 */
export const WAL_ARCHIVE_VOLUME: VolumeSpec = { name: WAL_ARCHIVE.claim, mountPath: '/var/lib/pgsql/backup', size: '50Gi', owner: 'db' };

/** Every claim of a server install. */
export const INSTALL_VOLUMES: readonly VolumeSpec[] = [...SERVER_VOLUMES, DB_VOLUME];

/**
 * Where the data records which product and release last ran on it (on the etc-rhn claim):
 * init-volumes writes it at every server start, the next upgrade's inspection reads it to refuse
 * downgrades and product switches.
 */
export const RELEASE_DIR = '/etc/rhn/uyuni-cdk';

/** The migration's scratch claim: the extracted facts, the CA key and the DB password. */
export const MIGRATION_VOLUME: VolumeSpec = { name: 'migration-data', mountPath: '/var/lib/uyuni-tools', size: '10Mi', owner: 'flow' };

/** Every claim a configuration may override, by name. */
export const KNOWN_VOLUMES: readonly VolumeSpec[] = [...INSTALL_VOLUMES, LEGACY_DB_VOLUME, MIGRATION_VOLUME];

export function volumeNamed(name: string): VolumeSpec {
  const found = KNOWN_VOLUMES.find((x) => x.name === name);
  if (!found) throw new Error(`no volume named ${name}`);
  return found;
}

/** The setup's completion marker, where the current server image looks (entrypoint-lib.sh @ 18abb310). */
export const SETUP_MARKER = '/var/spacewalk/.MANAGER_SETUP_COMPLETE';

/**
 * The `root` claim of installs made before server 5.2.5 (the chart's and mgradm's, mounted at
 * /root): it holds the legacy setup marker, which an upgrade moves to SETUP_MARKER. Never made by
 * uyuni-cdk; only read and emptied of that marker.
 */
export const LEGACY_ROOT_VOLUME: VolumeSpec = { name: 'root', mountPath: '/root', size: '1Gi', owner: 'flow' };
export const LEGACY_SETUP_MARKER = `${LEGACY_ROOT_VOLUME.mountPath}/.MANAGER_SETUP_COMPLETE`;
