import { ApiObject, JsonPatch } from 'cdk8s';
import { k8s } from 'cdk8s-plus-28';
import { Construct } from 'constructs';
import type { UyuniConfig } from '../config/schema';
import { CocoDeployment } from '../constructs/coco-deployment';
import { hashSpec, ScriptJob } from '../constructs/script-job';
import { ServerDeployment } from '../constructs/server-deployment';
import { ROOT_CONTAINER, ROOT_POD, serverVolumesOf } from '../constructs/server-pod';
import { claimMounts, claimVolumes } from '../constructs/server-volumes';
import { image, IMAGES, pullSecrets } from '../model/images';
import { commonLabels, selectorLabels } from '../model/labels';
import { RELEASE_DIR, volumeNamed } from '../model/volumes';
import { ANNOTATIONS, Gate, ObjectRef } from '../plan/types';
import type { PlanApp } from './plan-app';

/**
 * The database steps shared by the migrate and upgrade plans (uyuni-server.md §6): inspect →
 * [db-upgrade] → db-finalize → post-upgrade, plus the gates that decide from the inspected facts
 * whether the data may be upgraded at all.
 */

/** The PostgreSQL versions of a flow (`migration.postgresql` or `upgrade.postgresql`). */
export interface PgVersions {
  readonly from: number;
  readonly to: number;
}

export { RELEASE_DIR };

/** Job names: deterministic, so a re-run finds them. */
export const JOB_NAMES = {
  dataSync: 'uyuni-data-sync',
  inspect: 'uyuni-inspect',
  dbUpgrade: 'uyuni-db-upgrade',
  dbFinalize: 'uyuni-db-finalize',
  postUpgrade: 'uyuni-post-upgrade',
} as const;

/** The workloads that use the database: stopped before the data is touched. */
export const DATABASE_USERS: readonly ObjectRef[] = [ServerDeployment.NAME, CocoDeployment.NAME]
  .map((name) => ({ apiVersion: 'apps/v1', kind: 'Deployment', name }));

export function deploymentRefs(namespace: string): ObjectRef[] {
  return DATABASE_USERS.map((d) => ({ ...d, namespace }));
}

/** What every step Job of these flows shares: root (the scripts run as postgres via runuser), pull secret. */
function jobBase(config: UyuniConfig) {
  return {
    namespace: config.namespace,
    imagePullPolicy: config.images.pullPolicy,
    imagePullSecrets: pullSecrets(config),
    securityContext: ROOT_CONTAINER,
    podSecurityContext: ROOT_POD,
  };
}

/** The server volumes at their own paths (the server's view of the data). */
function serverMounts(config: UyuniConfig) {
  const volumes = serverVolumesOf(config);
  return { volumes: claimVolumes(volumes), volumeMounts: claimMounts(volumes) };
}

const literal = (value: number | string) => ({ value: String(value) });
const fact = (name: string) => ({ fact: name });

/**
 * The gates before the data is changed, from the inspect Job's facts. Versions compare
 * numerically (`9` < `16`, `5.1.0 Alpha1` is 5.1.0); a fact nobody printed makes a gate refuse.
 */
export function upgradeGates(config: UyuniConfig, pg: PgVersions, flow: 'migration' | 'upgrade'): Gate[] {
  const field = `${flow}.postgresql`;
  return [
    {
      type: 'present', fact: 'current_pg_version',
      message: 'no database data: var-pgsql holds no data/PG_VERSION, there is nothing to upgrade',
    },
    {
      type: 'compare-versions', left: fact('current_pg_version'), op: '==', right: literal(pg.from),
      message: `the database's PostgreSQL version differs from ${field}.from (${pg.from})`,
    },
    {
      type: 'compare-versions', left: fact('image_pg_version'), op: '>=', right: fact('current_pg_version'),
      message: 'the new image\'s PostgreSQL is older than the database\'s: PostgreSQL cannot be downgraded',
    },
    {
      type: 'compare-versions', left: fact('image_pg_version'), op: '==', right: literal(pg.to),
      message: `the new image's PostgreSQL version differs from ${field}.to (${pg.to})`,
    },
    {
      type: 'present', fact: 'current_release',
      message: flow === 'migration'
        ? 'cannot tell which product and release the old server runs: it has neither /etc/uyuni-release nor /etc/susemanager-release'
        : `cannot tell which product and release the data belongs to: no release file in ${RELEASE_DIR} (uyuni-setup and uyuni-post-upgrade keep one; `
          + 'a server set up otherwise has none). Record the running server\'s with: '
          + `kubectl -n ${config.namespace} exec deploy/${ServerDeployment.NAME} -c uyuni -- sh -c 'mkdir -p ${RELEASE_DIR} && cp /etc/uyuni-release ${RELEASE_DIR}/ || cp /etc/susemanager-release ${RELEASE_DIR}/'`,
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
  ];
}

export interface InspectStepOptions {
  /** The migration: read the facts uyuni-data-sync wrote on migration-data. @default read the server volumes */
  readonly fromMigrationData?: boolean;
}

/** Step `inspect`: Job uyuni-inspect (the new server image) prints the facts the gates use. */
export function addInspectStep(plan: PlanApp, config: UyuniConfig, opts: InspectStepOptions = {}): void {
  const migrationData = volumeNamed('migration-data');
  const mounts = opts.fromMigrationData
    ? [migrationData]
    : [volumeNamed('var-pgsql'), volumeNamed('etc-rhn')];
  const job: ObjectRef = { apiVersion: 'batch/v1', kind: 'Job', name: JOB_NAMES.inspect, namespace: config.namespace };
  plan.addStep('inspect', {
    description: `inspect the ${opts.fromMigrationData ? 'migrated data' : 'server volumes'} and the new image (Job ${JOB_NAMES.inspect})`,
    factsFrom: job,
  }, (chart) => {
    const inspect = new ScriptJob(chart, 'Inspect', {
      ...jobBase(config),
      name: JOB_NAMES.inspect,
      image: image(config, IMAGES.server),
      script: 'inspect.sh',
      env: [
        { name: 'RELEASE_DIR', value: RELEASE_DIR },
        ...(opts.fromMigrationData ? [{ name: 'MIGRATION_DATA', value: `${migrationData.mountPath}/data` }] : []),
      ],
      volumes: claimVolumes(mounts),
      // Read-only: inspecting never changes the data.
      volumeMounts: claimMounts(mounts).map((m) => ({ ...m, readOnly: true })),
    });
    // The server may still run (an upgrade inspects before it stops anything): its claims are
    // ReadWriteOnce, so prefer its node, where a second pod can mount them.
    if (!opts.fromMigrationData) {
      inspect.job.addJsonPatch(JsonPatch.add('/spec/template/spec/affinity', {
        podAffinity: {
          preferredDuringSchedulingIgnoredDuringExecution: [{
            weight: 100,
            podAffinityTerm: { labelSelector: { matchLabels: selectorLabels('uyuni', 'server') }, topologyKey: 'kubernetes.io/hostname' },
          }],
        },
      }));
      // The spec-hash must cover the affinity too.
      inspect.job.metadata.addAnnotation(ANNOTATIONS.specHash, hashSpec(inspect.job.toJson().spec));
    }
  });
}

export interface DbStepsOptions {
  readonly pg: PgVersions;
  /** Gates on the first of these steps (the one that first changes the data). */
  readonly gates: readonly Gate[];
  /** REINDEX in db-finalize (a migration: the old host's collation may differ). */
  readonly reindex: boolean;
}

/**
 * db-upgrade (only when the PostgreSQL major changes) → db-finalize → post-upgrade. The server
 * must be stopped (or never started) before these run.
 */
export function addDbSteps(plan: PlanApp, config: UyuniConfig, opts: DbStepsOptions): void {
  const { pg } = opts;
  const upgrading = pg.from < pg.to;
  const pgEnv = [{ name: 'OLD_PG_VERSION', value: String(pg.from) }, { name: 'NEW_PG_VERSION', value: String(pg.to) }];
  if (upgrading) {
    const pgsql = [volumeNamed('var-pgsql')];
    plan.addStep('db-upgrade', {
      description: `PostgreSQL ${pg.from} → ${pg.to} with pg_upgrade --link (Job ${JOB_NAMES.dbUpgrade})`,
      timeoutSeconds: config.timeouts.dbUpgradeSeconds,
      gates: opts.gates,
    }, (chart) => {
      new ScriptJob(chart, 'DbUpgrade', {
        ...jobBase(config),
        name: JOB_NAMES.dbUpgrade,
        image: image(config, IMAGES.migration(pg.from, pg.to)),
        script: 'db-upgrade.sh',
        env: [...pgEnv, { name: 'DB_LOCALE', value: 'en_US.UTF-8' }],
        // Only the database: pg_upgrade needs nothing else, and touches nothing else.
        volumes: claimVolumes(pgsql),
        volumeMounts: claimMounts(pgsql),
      });
    });
  }
  plan.addStep('db-finalize', {
    description: `database finalization: ${opts.reindex ? 'REINDEX, ' : ''}${upgrading ? 'statistics, ' : ''}schema check (Job ${JOB_NAMES.dbFinalize})`,
    timeoutSeconds: config.timeouts.dbFinalizeSeconds,
    gates: upgrading ? [] : opts.gates,
  }, (chart) => {
    new ScriptJob(chart, 'DbFinalize', {
      ...jobBase(config),
      name: JOB_NAMES.dbFinalize,
      image: image(config, IMAGES.server),
      script: 'db-finalize.sh',
      env: [
        { name: 'TZ', value: config.timezone },
        ...pgEnv,
        { name: 'REINDEX', value: String(opts.reindex) },
        { name: 'ANALYZE', value: String(upgrading) },
      ],
      ...serverMounts(config),
    });
  });
  plan.addStep('post-upgrade', { description: `record the new release on the data (Job ${JOB_NAMES.postUpgrade})` }, (chart) => {
    new ScriptJob(chart, 'PostUpgrade', {
      ...jobBase(config),
      name: JOB_NAMES.postUpgrade,
      image: image(config, IMAGES.server),
      script: 'post-upgrade.sh',
      env: [{ name: 'TZ', value: config.timezone }, { name: 'RELEASE_DIR', value: RELEASE_DIR }, ...pgEnv],
      ...serverMounts(config),
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
