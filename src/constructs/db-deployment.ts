import { k8s } from 'cdk8s-plus-28';
import { Construct } from 'constructs';
import { CREDENTIALS, credentialEnv } from '../model/credentials';
import {
  ARCHIVE_STATUS_CONTAINER, ARCHIVE_STATUS_INTERVAL_SECONDS, PG_PORT, PODS_CIDR_ENV, POSTGRES_UID, STOP_GRACE_SECONDS, WAL_ARCHIVE_DIR, archiveSettings,
} from '../model/db';
import type { ImageRef } from '../model/images';
import type { ContainerPort } from '../model/ports';
import {
  CERT_MODE, DB_TLS_ITEMS, KEY_MODE, PKI_DIR, TLS_NAMES,
} from '../model/tls';
import { DB_POD_VOLUME, DB_VOLUME, WAL_ARCHIVE_VOLUME } from '../model/volumes';
import { componentDeployment } from './component-deployment';
import { readScript } from './script-job';

export interface DbDeploymentProps {
  readonly namespace: string;
  /** The server-postgresql image. */
  readonly image: ImageRef;
  readonly timezone: string;
  /** The data claim. @default 'var-pgsql18' */
  readonly claim?: string;
  /** The TLS Secret with tls.crt, tls.key and ca.crt. @default 'db-cert' */
  readonly certSecret?: string;
  /** Container ports. @default none */
  readonly ports?: readonly ContainerPort[];
  /**
   * The network allowed plain-text connections (server-helm `db.podsCIDR`), written into
   * pg_hba_custom.conf by init container pods-cidr. @default the image's own rule only
   */
  readonly podsCIDR?: string;
  /**
   * Continuous archiving (`db.archiving`): the WAL archive claim is mounted at WAL_ARCHIVE_DIR
   * and init container archiving writes archive_mode and archive_command into postgresql.conf.
   * @default no archiving
   */
  readonly archiving?: boolean;
  /** Annotations of the pod (a CA rotation's phase: a change restarts the pod, which reads its certificate at its start). @default none */
  readonly podAnnotations?: Readonly<Record<string, string>>;
}

/** The settings of `db.archiving` as postgresql.conf lines (init container archiving), archiving into `dir`. */
export function archiveSettingLines(dir: string = WAL_ARCHIVE_DIR): string {
  return Object.entries(archiveSettings(dir)).map(([k, v]) => `${k} = ${v}`).join('\n');
}

/**
 * The db container's preStop: `pg_ctl stop -m fast` on the data directory (the image's PGDATA,
 * the claim's mount), as the postgres user (src/scripts/db-stop.sh).
 */
export const DB_PRE_STOP = ['/bin/sh', '-c', readScript('db-stop.sh'), 'db-stop', DB_VOLUME.mountPath];

/** The image's own check: disk usage, no upgrade hook running, pg_isready (docs/upstream.md). */
const HEALTHCHECK = ['/usr/bin/healthcheck.sh'];

/** A root init container of the image on the data directory (PGDATA), with its script. */
function dataInit(props: DbDeploymentProps, name: string, script: string, env: k8s.EnvVar[], extraMounts: k8s.VolumeMount[] = []): k8s.Container {
  return {
    name,
    image: props.image.image,
    imagePullPolicy: props.image.pullPolicy,
    command: ['sh', '-c', readScript(script)],
    env: [{ name: 'PGDATA', value: DB_VOLUME.mountPath }, ...env],
    volumeMounts: [{ name: DB_POD_VOLUME, mountPath: DB_VOLUME.mountPath }, ...extraMounts],
    securityContext: { runAsUser: 0, runAsGroup: 0, runAsNonRoot: false },
  };
}

/** data-dir always; pods-cidr with db.podsCIDR; archiving with db.archiving. */
function initContainers(props: DbDeploymentProps): k8s.Container[] {
  return [
    // A new ext4 claim holds lost+found, which initdb refuses (docs/flows.md, "ext4 volumes").
    dataInit(props, 'data-dir', 'db-data-dir.sh', []),
    // The image reads no variable for it: the rule goes where its pg_hba.conf includes
    // the admin's own (docs/upstream.md, decision m).
    ...(props.podsCIDR ? [dataInit(props, 'pods-cidr', 'db-pods-cidr.sh', [{ name: PODS_CIDR_ENV, value: props.podsCIDR },
      // Plan db-basebackup's pg_basebackup connects from a Job's pod (a replication connection).
      ...(props.archiving ? [{ name: 'REPLICATION', value: 'on' }] : [])])] : []),
    // As upstream's `mgradm backup db enable`, in postgresql.conf (docs/backup.md, "Continuous archiving").
    ...(props.archiving ? [dataInit(props, 'archiving', 'db-archiving.sh', [
      { name: 'ARCHIVE_DIR', value: WAL_ARCHIVE_DIR },
      { name: 'ARCHIVE_SETTINGS', value: archiveSettingLines() },
    ], [{ name: WAL_ARCHIVE_VOLUME.name, mountPath: WAL_ARCHIVE_DIR }])] : []),
  ];
}

/** PostgreSQL itself: the credentials, the data, the TLS files (and the WAL archive), its readiness and its fast stop. */
function dbContainer(props: DbDeploymentProps): k8s.Container {
  return {
    name: 'db',
    image: props.image.image,
    imagePullPolicy: props.image.pullPolicy,
    ports: props.ports?.map((p) => ({ ...p })),
    env: [
      { name: 'TZ', value: props.timezone },
      ...credentialEnv(CREDENTIALS.dbAdmin),
      ...credentialEnv(CREDENTIALS.db),
      ...credentialEnv(CREDENTIALS.reportdb),
    ],
    volumeMounts: [
      { name: DB_POD_VOLUME, mountPath: DB_VOLUME.mountPath },
      { name: TLS_NAMES.dbCert, mountPath: PKI_DIR },
      ...(props.archiving ? [{ name: WAL_ARCHIVE_VOLUME.name, mountPath: WAL_ARCHIVE_DIR }] : []),
    ],
    // The chart has none; without one a Service would send clients to a database that
    // is still creating itself or running its upgrade hooks.
    readinessProbe: { exec: { command: HEALTHCHECK }, periodSeconds: 10, timeoutSeconds: 10, failureThreshold: 3 },
    // The image stops on SIGTERM, PostgreSQL's smart shutdown, which waits for every
    // session: a fast shutdown first, so the pod never ends killed with postmaster.pid left.
    lifecycle: { preStop: { exec: { command: DB_PRE_STOP } } },
  };
}

/**
 * What `uyuni-cdk status` shows of the archiving: one line in its log every
 * ARCHIVE_STATUS_INTERVAL_SECONDS (src/scripts/db-archive-status.sh, src/runtime/verbs/archive-status.ts).
 */
function archiveStatusContainer(props: DbDeploymentProps): k8s.Container {
  return {
    name: ARCHIVE_STATUS_CONTAINER,
    image: props.image.image,
    imagePullPolicy: props.image.pullPolicy,
    command: ['sh', '-c', readScript('db-archive-status.sh')],
    env: [
      { name: 'PGHOST', value: '127.0.0.1' },
      { name: 'PGPORT', value: String(PG_PORT) },
      { name: 'ARCHIVE_DIR', value: WAL_ARCHIVE_DIR },
      { name: 'STATUS_INTERVAL', value: String(ARCHIVE_STATUS_INTERVAL_SECONDS) },
      ...credentialEnv(CREDENTIALS.dbAdmin),
    ],
    volumeMounts: [{ name: WAL_ARCHIVE_VOLUME.name, mountPath: WAL_ARCHIVE_DIR, readOnly: true }],
  };
}

/** The data claim, the WAL archive's (db.archiving), the TLS Secret's files with the key at mode 0400. */
function volumes(props: DbDeploymentProps): k8s.Volume[] {
  return [
    { name: DB_POD_VOLUME, persistentVolumeClaim: { claimName: props.claim ?? DB_VOLUME.name } },
    ...(props.archiving ? [{ name: WAL_ARCHIVE_VOLUME.name, persistentVolumeClaim: { claimName: WAL_ARCHIVE_VOLUME.name } }] : []),
    {
      name: TLS_NAMES.dbCert,
      secret: {
        secretName: props.certSecret ?? TLS_NAMES.dbCert,
        defaultMode: CERT_MODE,
        items: [
          { key: 'tls.crt', path: DB_TLS_ITEMS.cert },
          { key: 'tls.key', path: DB_TLS_ITEMS.key, mode: KEY_MODE },
          { key: 'ca.crt', path: DB_TLS_ITEMS.ca },
        ],
      },
    },
  ];
}

/**
 * Deployment `db` (component db): PostgreSQL 18 of the server-postgresql image, for the product
 * and the report database (Services db and reportdb select it). Its entrypoint creates the
 * databases on an empty claim and runs the upgrade hooks after an image change; the key is
 * mode 0400 for the postgres group (fsGroup 999), where the image's config script looks. Its
 * init container data-dir clears a new ext4 volume's empty lost+found, which initdb refuses;
 * pods-cidr writes db.podsCIDR into pg_hba_custom.conf; archiving (db.archiving) sets up WAL archiving.
 */
export class DbDeployment extends Construct {
  public static readonly NAME = 'db';
  public readonly deployment: k8s.KubeDeployment;

  constructor(scope: Construct, id: string, props: DbDeploymentProps) {
    super(scope, id);
    this.deployment = componentDeployment(this, 'Resource', {
      name: DbDeployment.NAME,
      namespace: props.namespace,
      partOf: 'uyuni',
      component: 'db',
      replicas: 1,
      recreate: true,
      ...(props.podAnnotations ? { podAnnotations: { ...props.podAnnotations } } : {}),
      pod: {
        securityContext: { fsGroup: POSTGRES_UID },
        // Upstream's TimeoutStopSec=180: the fast shutdown below has time to finish.
        terminationGracePeriodSeconds: STOP_GRACE_SECONDS,
        imagePullSecrets: props.image.pullSecrets ? [...props.image.pullSecrets] : undefined,
        initContainers: initContainers(props),
        containers: [dbContainer(props), ...(props.archiving ? [archiveStatusContainer(props)] : [])],
        volumes: volumes(props),
      },
    });
  }
}
