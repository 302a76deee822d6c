import { ApiObject, JsonPatch } from 'cdk8s';
import { k8s } from 'cdk8s-plus-28';
import { Construct } from 'constructs';
import type { UyuniConfig } from '../config/schema';
import { CocoDeployment } from '../constructs/coco-deployment';
import { DbDeployment } from '../constructs/db-deployment';
import { HubApiDeployment } from '../constructs/hub-api-deployment';
import { hashSpec, ScriptJob } from '../constructs/script-job';
import { ServerDeployment } from '../constructs/server-deployment';
import { serverPodParts } from '../constructs/server-pod';
import { TftpDeployment } from '../constructs/tftp-deployment';
import { claimMounts, claimVolumes } from '../constructs/claims';
import { CREDENTIALS, credentialRequirement } from '../model/credentials';
import { DATABASES, PG_MAJOR } from '../model/db';
import { commonLabels, Component, selectorLabels } from '../model/labels';
import {
  CERT_MODE, KEY_MODE, TLS_NAMES,
} from '../model/tls';
import {
  DB_VOLUME, LEGACY_DB_VOLUME, LEGACY_ROOT_VOLUME, LEGACY_SETUP_MARKER, MIGRATION_VOLUME, RELEASE_DIR, SETUP_MARKER, volumeNamed, VolumeSpec,
} from '../model/volumes';
import { ANNOTATIONS, Gate, ObjectRef } from '../plan/types';
import type { PlanApp } from './plan-app';
import { imageOf, serverPodProps } from './server-props';

/**
 * The data steps shared by the migrate and upgrade plans (docs/upstream.md):
 * inspect the data and the new images → [PostgreSQL major upgrade with server-database-migration,
 * old claim var-pgsql → var-pgsql18] → … → [db-finalize: the server image's finalize script,
 * once]. The gates decide from the inspected facts whether the data may be touched at all.
 */

/** The PostgreSQL versions of a flow (`migration.postgresql` or `upgrade.postgresql`). */
export interface PgVersions {
  readonly from: number;
  readonly to: number;
}

/** Job names: deterministic, so a re-run finds them. */
export const JOB_NAMES = {
  dataSync: 'uyuni-data-sync',
  dataPresync: 'uyuni-data-presync',
  importSecrets: 'uyuni-import-secrets',
  inspect: 'uyuni-inspect',
  inspectDb: 'uyuni-inspect-db',
  dbMigrate: 'uyuni-db-migrate',
  dbFinalize: 'uyuni-db-finalize',
  setupMarker: 'uyuni-move-setup-marker',
} as const;

/** The workloads that use the data, stopped before it is touched (the database last). */
export const DATA_USERS: readonly string[] = [
  ServerDeployment.NAME, CocoDeployment.NAME, HubApiDeployment.NAME, TftpDeployment.NAME, DbDeployment.NAME,
];

export function deploymentRefs(namespace: string, names: readonly string[] = DATA_USERS): ObjectRef[] {
  return names.map((name) => ({ apiVersion: 'apps/v1', kind: 'Deployment', name, namespace }));
}

/** The claim a flow's database is read from: var-pgsql18 when it is PostgreSQL 18 already, else the older var-pgsql. */
export function sourceDbVolume(pg: PgVersions): VolumeSpec {
  return pg.from === PG_MAJOR ? DB_VOLUME : LEGACY_DB_VOLUME;
}

/** A PostgreSQL major upgrade is needed. */
export const upgradesPg = (pg: PgVersions): boolean => pg.from < pg.to;

/** Root, explicitly: these Jobs chown, su to postgres and write every claim. */
const ROOT: k8s.SecurityContext = { runAsUser: 0, runAsGroup: 0, runAsNonRoot: false };

const literal = (value: number | string) => ({ value: String(value) });
const fact = (name: string) => ({ fact: name });

/**
 * The gates before the data is changed, from the inspect Jobs' facts. Versions compare
 * numerically (`9` < `16`, `5.1.0 Alpha1` is 5.1.0); a fact nobody printed makes a gate refuse.
 */
export function upgradeGates(config: UyuniConfig, pg: PgVersions, flow: 'migration' | 'upgrade'): Gate[] {
  const field = `${flow}.postgresql`;
  const claim = flow === 'migration' ? LEGACY_DB_VOLUME.name : sourceDbVolume(pg).name;
  return [
    {
      type: 'present', fact: 'current_pg_version',
      message: `no database data: ${claim} holds no PG_VERSION, there is nothing to upgrade`,
    },
    {
      type: 'compare-versions', left: fact('current_pg_version'), op: '==', right: literal(pg.from),
      message: `the database's PostgreSQL version differs from ${field}.from (${pg.from})`,
    },
    {
      type: 'compare-versions', left: fact('image_pg_version'), op: '>=', right: fact('current_pg_version'),
      message: 'the new server-postgresql image\'s PostgreSQL is older than the database\'s: PostgreSQL cannot be downgraded',
    },
    {
      type: 'compare-versions', left: fact('image_pg_version'), op: '==', right: literal(pg.to),
      message: `the new server-postgresql image's PostgreSQL version differs from ${field}.to (${pg.to})`,
    },
    {
      type: 'present', fact: 'current_release',
      message: flow === 'migration'
        ? 'cannot tell which product and release the old server runs: it has neither /etc/uyuni-release nor /etc/susemanager-release'
        : `cannot tell which product and release the data belongs to: no release file in ${RELEASE_DIR} (the server's init-volumes `
          + 'records it at every start from uyuni-cdk\'s first 2026 release on). Record the running server\'s with: '
          + `kubectl -n ${config.namespace} exec deploy/${ServerDeployment.NAME} -c ${ServerDeployment.CONTAINER} -- sh -c `
          + `'mkdir -p ${RELEASE_DIR} && cp /etc/uyuni-release ${RELEASE_DIR}/ || cp /etc/susemanager-release ${RELEASE_DIR}/'`,
    },
    {
      type: 'equals', left: fact('product'), right: fact('current_product'),
      message: 'the new image is another product than the data was made with: switching between Uyuni and SUSE Manager is not supported',
    },
    {
      type: 'compare-versions', left: fact('uyuni_release'), op: '>=', right: fact('current_release'),
      message: 'the new image is an older release than the data was made with: release downgrades are not supported',
    },
    {
      type: 'equals', left: fact('fqdn'), right: literal(config.fqdn),
      message: `the data belongs to another server name than fqdn ${config.fqdn} (java.hostname in rhn.conf): its clients would not find this one`,
    },
    {
      type: 'equals', left: fact('db_name'), right: literal(DATABASES.product.name),
      message: `the product database is not named ${DATABASES.product.name} (db_name in rhn.conf): the current images connect to `
        + `${DATABASES.product.name} (MANAGER_DB_NAME), and the image's finalize script (90-pgsqlFinalize.sh) checks that name's collations `
        + `and would reindex at every start. Rename it first (ALTER DATABASE <name> RENAME TO ${DATABASES.product.name}; `
        + `db_name = ${DATABASES.product.name} in /etc/rhn/rhn.conf)`,
    },
    // The manifests are written before the old server is seen: what the data sync learnt about it
    // checks the configuration instead of changing it behind the user's back.
    ...(flow === 'migration' ? migrationFactGates(config) : []),
  ];
}

function migrationFactGates(config: UyuniConfig): Gate[] {
  return [
    {
      type: 'equals', left: fact('timezone'), right: literal(config.timezone),
      message: `the old server runs in another timezone than timezone ${config.timezone}: set timezone to the old server's (fact timezone), so schedules keep their times`,
    },
    {
      type: 'equals', left: fact('has_hub'), right: literal(String(config.hubApi.replicas > 0)),
      message: `the old server ${config.hubApi.replicas > 0 ? 'has no' : 'runs the'} hub XML-RPC API (fact has_hub): set hubApi.replicas ${config.hubApi.replicas > 0 ? 'to 0' : 'to 1 or more'}`,
    },
    {
      type: 'equals', left: fact('debug_java'), right: literal(String(config.debugJava)),
      message: `the old server ${config.debugJava ? 'has no' : 'has'} Java debugging on (fact debug_java): set debugJava to ${!config.debugJava}`,
    },
    {
      type: 'equals', left: fact('tftp_enabled'), right: literal(String(config.tftp.enabled)),
      message: `the old server ${config.tftp.enabled ? 'serves no' : 'serves'} TFTP (fact tftp_enabled, its tftp.socket): set tftp.enabled to ${!config.tftp.enabled}`,
    },
    ...(config.tls.mode === 'migrated' ? [{
      type: 'equals' as const, left: fact('ca_fingerprint_match'), right: literal('true'),
      message: 'tls.mode migrated needs the old server\'s own CA, but its certificate was not issued by the CA in /root/ssl-build '
        + '(third-party certificates, fact ca_fingerprint_match): set tls.mode third-party and create Secrets uyuni-cert and db-cert '
        + `from the copied ${MIGRATION_VOLUME.mountPath}/ca/spacewalk.crt, spacewalk.key and deployed-ca.crt`,
    }] : []),
  ];
}

export function jobBase(config: UyuniConfig, component: 'server' | 'db' | 'dbMigration') {
  const image = imageOf(config, component);
  return {
    namespace: config.namespace,
    image: image.image,
    imagePullPolicy: image.pullPolicy,
    imagePullSecrets: image.pullSecrets ? [...image.pullSecrets] : undefined,
    securityContext: ROOT,
  };
}

/**
 * Run on the node of a running component's pod: only there can a second pod mount its
 * ReadWriteOnce claims (elsewhere it would hang on Multi-Attach). Required, not preferred.
 */
export function onNodeOf(job: ApiObject, component: Component): void {
  withAffinity(job, { requiredDuringSchedulingIgnoredDuringExecution: [affinityTerm(component)] });
}

/**
 * Prefer the node of a component's pod: for Jobs that run while it is stopped (backup, restore),
 * whose claims are then free, but best attached where they last were.
 */
export function preferNodeOf(job: ApiObject, component: Component): void {
  withAffinity(job, { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 100, podAffinityTerm: affinityTerm(component) }] });
}

const affinityTerm = (component: Component) => ({ labelSelector: { matchLabels: selectorLabels('uyuni', component) }, topologyKey: 'kubernetes.io/hostname' });

function withAffinity(job: ApiObject, podAffinity: object): void {
  job.addJsonPatch(JsonPatch.add('/spec/template/spec/affinity', { podAffinity }));
  // The spec-hash must cover the affinity too.
  job.metadata.addAnnotation(ANNOTATIONS.specHash, hashSpec(job.toJson().spec));
}

const readOnly = (mounts: k8s.VolumeMount[]) => mounts.map((m) => ({ ...m, readOnly: true }));

export interface InspectStepOptions {
  /** The migration: read the facts uyuni-data-sync wrote on migration-data. @default read etc-rhn of the running server */
  readonly fromMigrationData?: boolean;
  /** An upgrade: look for the setup marker on var-spacewalk, and on the legacy root claim when there is one. */
  readonly setupMarker?: { readonly rootClaim: boolean };
  /** An upgrade that keeps the CA: print the fingerprint of the CA of Secret uyuni-cert (mounted optional). */
  readonly caFingerprint?: boolean;
}

/** Where uyuni-inspect sees uyuni-cert's CA. */
const INSPECT_CA_DIR = '/inspect/uyuni-cert';

/** Step `inspect`: Job uyuni-inspect (the new server image) prints the release and name facts the gates use. */
export function addInspectStep(plan: PlanApp, config: UyuniConfig, opts: InspectStepOptions = {}): void {
  const marker = opts.setupMarker;
  const mounts = opts.fromMigrationData
    ? [MIGRATION_VOLUME]
    : [volumeNamed('etc-rhn'), ...(marker ? [volumeNamed('var-spacewalk')] : []), ...(marker?.rootClaim ? [LEGACY_ROOT_VOLUME] : [])];
  const caVolume: k8s.Volume[] = opts.caFingerprint
    ? [{ name: 'uyuni-cert', secret: { secretName: TLS_NAMES.serverCert, optional: true, items: [{ key: 'ca.crt', path: 'ca.crt' }] } }]
    : [];
  const job: ObjectRef = { apiVersion: 'batch/v1', kind: 'Job', name: JOB_NAMES.inspect, namespace: config.namespace };
  plan.addStep('inspect', {
    description: `inspect the ${opts.fromMigrationData ? 'migrated data' : 'server\'s data'} and the new server image (Job ${JOB_NAMES.inspect})`,
    factsFrom: job,
  }, (chart) => {
    const inspect = new ScriptJob(chart, 'Inspect', {
      ...jobBase(config, 'server'),
      name: JOB_NAMES.inspect,
      script: 'inspect.sh',
      env: [
        { name: 'RELEASE_DIR', value: RELEASE_DIR },
        ...(opts.fromMigrationData ? [{ name: 'MIGRATION_DATA', value: `${MIGRATION_VOLUME.mountPath}/data` }] : []),
        ...(marker ? [{ name: 'SETUP_MARKER', value: SETUP_MARKER }] : []),
        ...(marker?.rootClaim ? [{ name: 'LEGACY_SETUP_MARKER', value: LEGACY_SETUP_MARKER }] : []),
        ...(opts.caFingerprint ? [{ name: 'CA_CERT', value: `${INSPECT_CA_DIR}/ca.crt` }] : []),
      ],
      volumes: [...claimVolumes(mounts), ...caVolume],
      // Read-only: inspecting never changes the data.
      volumeMounts: readOnly([...claimMounts(mounts), ...caVolume.map((v) => ({ name: v.name, mountPath: INSPECT_CA_DIR }))]),
    });
    // The server may still run (an upgrade inspects before it stops anything).
    if (!opts.fromMigrationData) onNodeOf(inspect.job, 'server');
  });
}

/** Where uyuni-inspect-db sees the database claim. */
const INSPECT_DATA_DIR = '/inspect/pgsql';

/**
 * Step `inspect-db`: Job uyuni-inspect-db (the new server-postgresql image) prints the data's
 * PostgreSQL version and the image's, reading the claim read-only (next to the running db when
 * there is one).
 */
export function addInspectDbStep(plan: PlanApp, config: UyuniConfig, claim: VolumeSpec, opts: { nearDb: boolean }): void {
  const job: ObjectRef = { apiVersion: 'batch/v1', kind: 'Job', name: JOB_NAMES.inspectDb, namespace: config.namespace };
  plan.addStep('inspect-db', {
    description: `inspect the database on ${claim.name} and the new PostgreSQL image (Job ${JOB_NAMES.inspectDb})`,
    factsFrom: job,
  }, (chart) => {
    const inspect = new ScriptJob(chart, 'InspectDb', {
      ...jobBase(config, 'db'),
      name: JOB_NAMES.inspectDb,
      script: 'inspect-db.sh',
      env: [{ name: 'DATA_DIR', value: INSPECT_DATA_DIR }],
      volumes: claimVolumes([claim]),
      volumeMounts: [{ name: claim.name, mountPath: INSPECT_DATA_DIR, readOnly: true }],
    });
    if (opts.nearDb) onNodeOf(inspect.job, 'db');
  });
}

/** Where the migration image's script expects the data (docs/upstream.md). */
const MIGRATION_PATHS = { old: '/migration/old', source: '/migration/source', target: '/migration/target', certs: '/run/uyuni-cdk/db-cert' } as const;

/**
 * Step `db-upgrade`: Job uyuni-db-migrate (server-database-migration) copies the old claim's
 * database into var-pgsql18 with pg_upgrade (copy mode: the old claim is left as it was, so a
 * failed upgrade is retried from the same data). The db certificate goes where the old
 * server's postgresql.conf looks for it.
 */
export function addDbUpgradeStep(plan: PlanApp, config: UyuniConfig, pg: PgVersions, gates: readonly Gate[] = []): void {
  const source = sourceDbVolume(pg);
  plan.addStep('db-upgrade', {
    description: `PostgreSQL ${pg.from} → ${pg.to}: ${source.name} copied into ${DB_VOLUME.name} with pg_upgrade (Job ${JOB_NAMES.dbMigrate})`,
    timeoutSeconds: config.timeouts.dbUpgradeSeconds,
    gates,
  }, (chart) => {
    new ScriptJob(chart, 'DbMigrate', {
      ...jobBase(config, 'dbMigration'),
      name: JOB_NAMES.dbMigrate,
      script: 'db-migrate.sh',
      env: [
        { name: 'OLD_DATA', value: MIGRATION_PATHS.old },
        { name: 'SOURCE_LINK', value: MIGRATION_PATHS.source },
        { name: 'TARGET', value: MIGRATION_PATHS.target },
        { name: 'OLD_PG_VERSION', value: String(pg.from) },
        { name: 'NEW_PG_VERSION', value: String(pg.to) },
        { name: 'POSTGRES_LANG', value: 'en_US.UTF-8' },
        { name: 'CERT_DIR', value: MIGRATION_PATHS.certs },
      ],
      volumes: [
        { name: source.name, persistentVolumeClaim: { claimName: source.name } },
        { name: DB_VOLUME.name, persistentVolumeClaim: { claimName: DB_VOLUME.name } },
        {
          name: TLS_NAMES.dbCert,
          secret: {
            secretName: TLS_NAMES.dbCert,
            defaultMode: CERT_MODE,
            items: [{ key: 'tls.crt', path: 'tls.crt' }, { key: 'tls.key', path: 'tls.key', mode: KEY_MODE }],
          },
        },
      ],
      volumeMounts: [
        { name: source.name, mountPath: MIGRATION_PATHS.old },
        { name: DB_VOLUME.name, mountPath: MIGRATION_PATHS.target },
        { name: TLS_NAMES.dbCert, mountPath: MIGRATION_PATHS.certs, readOnly: true },
      ],
    });
  });
}

export interface DbFinalizeOptions {
  /**
   * A migration: the distributions' paths in the database are pointed at where uyuni-data-sync
   * copied them (its list on migration-data), and the system overview refresh is queued.
   */
  readonly migration: boolean;
}

/**
 * Step `db-finalize`: Job uyuni-db-finalize, with the database up and the server stopped, runs
 * the server image's finalize script once (uyuni server-image 90-pgsqlFinalize.sh @ 17708150:
 * it reads no switch and reindexes by itself when the collation versions changed, so the hours
 * a REINDEX takes are a step of their own), then, for a migration, does the rewrite that script's
 * MIGRATION block did up to @ d701b96b: rhnKickstartableTree.base_path → /srv/www/distributions/….
 */
export function addDbFinalizeStep(plan: PlanApp, config: UyuniConfig, opts: DbFinalizeOptions): void {
  plan.addStep('db-finalize', {
    // The Job runs with the server's environment: it reads admin-credentials too.
    requires: [credentialRequirement(CREDENTIALS.admin, config.namespace)],
    description: `database finalization: the image's collation check and REINDEX${opts.migration ? ', the distributions\' new paths' : ''} (Job ${JOB_NAMES.dbFinalize})`,
    timeoutSeconds: config.timeouts.dbFinalizeSeconds,
  }, (chart) => {
    const parts = serverPodParts(serverPodProps(config));
    const waiter = parts.initContainers.find((c) => c.name === 'db-waiter')!;
    const migrationData = opts.migration ? [MIGRATION_VOLUME] : [];
    new ScriptJob(chart, 'DbFinalize', {
      ...jobBase(config, 'server'),
      name: JOB_NAMES.dbFinalize,
      script: 'db-finalize.sh',
      env: [
        ...(parts.container.env ?? []),
        ...(opts.migration ? [{ name: 'MIGRATION_DIR', value: MIGRATION_VOLUME.mountPath }] : []),
      ],
      initContainers: [waiter],
      volumes: [...parts.volumes, ...claimVolumes(migrationData)],
      volumeMounts: [...(parts.container.volumeMounts ?? []), ...claimMounts(migrationData)],
    });
  });
}

/**
 * Step `setup-marker` (an upgrade of an install made before server 5.2.5, with the server
 * stopped): Job uyuni-setup-marker moves /root/.MANAGER_SETUP_COMPLETE from the root claim to
 * var-spacewalk, where the current image looks (entrypoint-lib.sh @ 18abb310: it moves the legacy
 * marker only when /root holds it, and the current Deployment mounts no /root). Without it the new
 * server would run its setup (spacewalk-setup --clear-db) on the live database.
 */
export function addSetupMarkerStep(plan: PlanApp, config: UyuniConfig): void {
  const mounts = [LEGACY_ROOT_VOLUME, volumeNamed('var-spacewalk')];
  plan.addStep('setup-marker', {
    description: `move the setup marker of the ${LEGACY_ROOT_VOLUME.name} claim to ${SETUP_MARKER} (Job ${JOB_NAMES.setupMarker})`,
  }, (chart) => {
    new ScriptJob(chart, 'SetupMarker', {
      ...jobBase(config, 'server'),
      name: JOB_NAMES.setupMarker,
      script: 'setup-marker.sh',
      env: [{ name: 'SETUP_MARKER', value: SETUP_MARKER }, { name: 'LEGACY_SETUP_MARKER', value: LEGACY_SETUP_MARKER }],
      volumes: claimVolumes(mounts),
      volumeMounts: claimMounts(mounts),
    });
  });
}

/**
 * A small ConfigMap that records a flow's parameters in the cluster (readable history, and the
 * object a step of actions needs: a step file must hold at least one object).
 */
export function flowRecord(scope: Construct, id: string, namespace: string, name: string, data: Record<string, string>): ApiObject {
  return new k8s.KubeConfigMap(scope, id, {
    metadata: { name, namespace, labels: commonLabels('uyuni', 'step') },
    data,
  });
}
