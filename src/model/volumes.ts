/**
 * The server's volume table (uyuni-server.md §2), defined once: PVCs, the server's mounts,
 * `init-volumes` and every step Job's mounts derive from it.
 */

/** Which configurable size/class group a volume belongs to. */
export type VolumeGroup = 'database' | 'packages' | 'www' | 'cache' | 'other';

export interface VolumeSpec {
  /** PVC name = volume name. */
  readonly name: string;
  /** Where the server container mounts it. */
  readonly mountPath: string;
  /** Default size (a Kubernetes quantity). */
  readonly size: string;
  readonly group: VolumeGroup;
}

const v = (name: string, mountPath: string, size: string, group: VolumeGroup = 'other'): VolumeSpec =>
  ({ name, mountPath, size, group });

/** The 27 volumes of the server, in the spec's order. */
export const SERVER_VOLUMES: readonly VolumeSpec[] = [
  v('var-pgsql', '/var/lib/pgsql', '50Gi', 'database'),
  v('var-spacewalk', '/var/spacewalk', '100Gi', 'packages'),
  v('srv-www', '/srv/www/', '100Gi', 'www'),
  v('var-cache', '/var/cache', '10Gi', 'cache'),
  v('var-search', '/var/lib/rhn/search', '10Gi'),
  v('var-log', '/var/log', '2Gi'),
  v('srv-tftpboot', '/srv/tftpboot', '300Mi'),
  v('etc-sysconfig', '/etc/sysconfig', '20Mi'),
  v('var-cobbler', '/var/lib/cobbler', '10Mi'),
  v('var-salt', '/var/lib/salt', '10Mi'),
  v('srv-salt', '/srv/salt', '10Mi'),
  v('srv-formulametadata', '/srv/formula_metadata', '10Mi'),
  v('srv-pillar', '/srv/pillar', '10Mi'),
  v('srv-spacewalk', '/srv/spacewalk', '10Mi'),
  v('run-salt-master', '/run/salt/master', '10Mi'),
  v('root', '/root', '1Mi'),
  v('srv-susemanager', '/srv/susemanager', '1Mi'),
  v('etc-rhn', '/etc/rhn', '1Mi'),
  v('etc-tls', '/etc/pki/tls', '1Mi'),
  v('etc-apache2', '/etc/apache2', '1Mi'),
  v('etc-systemd-multi', '/etc/systemd/system/multi-user.target.wants', '1Mi'),
  v('etc-systemd-sockets', '/etc/systemd/system/sockets.target.wants', '1Mi'),
  v('etc-salt', '/etc/salt', '1Mi'),
  v('etc-tomcat', '/etc/tomcat', '1Mi'),
  v('etc-cobbler', '/etc/cobbler', '1Mi'),
  v('etc-postfix', '/etc/postfix', '1Mi'),
  v('etc-sssd', '/etc/sssd', '1Mi'),
];

/** Where the db container mounts `var-pgsql`. */
export const DB_DATA_PATH = '/var/lib/pgsql/data';

/**
 * Where the server's data records which product and release it belongs to (on the etc-rhn
 * volume): written by the install's setup and by uyuni-post-upgrade, read by the next upgrade's
 * inspection to refuse downgrades and product switches.
 */
export const RELEASE_DIR = '/etc/rhn/uyuni-cdk';

/** The migration's scratch volume: holds the extracted facts, the CA key and DB password. */
export const MIGRATION_VOLUME: VolumeSpec = v('migration-data', '/var/lib/uyuni-tools', '10Mi');

export function volumeNamed(name: string): VolumeSpec {
  const found = [...SERVER_VOLUMES, MIGRATION_VOLUME].find((x) => x.name === name);
  if (!found) throw new Error(`no volume named ${name}`);
  return found;
}
