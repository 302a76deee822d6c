import type { MigrationConfig, UyuniConfig } from '../config/schema';
import { claimMounts, claimVolumes } from '../constructs/claims';
import { ScriptJob } from '../constructs/script-job';
import {
  INSTALL_VOLUMES, LEGACY_DB_VOLUME, MIGRATION_VOLUME, SERVER_VOLUMES,
} from '../model/volumes';
import { CREDENTIALS, credentialRequirement } from '../model/credentials';
import type { ObjectRef, Requirement } from '../plan/types';
import {
  addDbFinalizeStep, addDbUpgradeStep, addInspectDbStep, addInspectStep, deploymentRefs, flowRecord, JOB_NAMES, upgradeGates,
} from './db-steps';
import {
  addDatabaseStep, addIngressStep, addNamespaceStep, addServerStep, addServicesStep, addTlsStep, addVolumesStep, serverPlan,
} from './install';
import type { PlanApp } from './plan-app';
import { imageOf } from './server-props';

/** The user-provided ssh material of the migration: referenced by name, never synthesized. */
export const MIGRATION_SSH = {
  keySecret: 'uyuni-migration-key',
  configMap: 'uyuni-migration-ssh',
  /** Where the data-sync container sees them. */
  dir: '/root/.ssh',
} as const;

/** Where the data-sync container mounts the server volumes: `<prefix><path>`, so rsync never writes over its own /root or /etc. */
export const SYNC_TARGET_ROOT = '/mnt';

/** The commands that create the ssh Secret and ConfigMap (shown when they are missing; docs/flows.md). */
export function migrationSshCommands(namespace: string): { secret: string; configMap: string } {
  return {
    secret: `kubectl -n ${namespace} create secret generic ${MIGRATION_SSH.keySecret} --from-file=key=<passwordless private key> --from-file=key.pub=<its public key>`,
    configMap: `kubectl -n ${namespace} create configmap ${MIGRATION_SSH.configMap} --from-file=config=<ssh config> --from-file=known_hosts=<known_hosts holding the source host>`,
  };
}

export function migrationRequirements(config: UyuniConfig, m: MigrationConfig): Requirement[] {
  const ns = config.namespace;
  const cmd = migrationSshCommands(ns);
  return [
    {
      kind: 'Secret', name: MIGRATION_SSH.keySecret, namespace: ns, keys: ['key', 'key.pub'], ifMissing: 'fail',
      message: `the passwordless ssh key that logs in to ${m.source.fqdn} as ${m.source.user}: create it with: ${cmd.secret}`,
    },
    {
      kind: 'ConfigMap', name: MIGRATION_SSH.configMap, namespace: ns, keys: ['config', 'known_hosts'], ifMissing: 'fail',
      message: `the ssh config and the known_hosts that holds ${m.source.fqdn}: create it with: ${cmd.configMap} (ssh-keyscan -p ${m.source.port} ${m.source.fqdn} > known_hosts)`,
    },
  ];
}

/**
 * Step `data-sync`: Job uyuni-data-sync copies the old server's volumes over ssh (rsync through
 * sudo) into the new claims, mounted under /mnt, and the facts into migration-data. The ssh
 * key (mode 0600), config and known_hosts are mounted file by file into /root/.ssh/.
 */
/**
 * What the data sync fills: every server claim but ca-certs (the CA files come from the TLS
 * step; custom anchors are copied by the script), and the old database into var-pgsql.
 */
export const SYNCED_VOLUMES = [...SERVER_VOLUMES.filter((v) => v.name !== 'ca-certs'), LEGACY_DB_VOLUME];

export function addDataSyncStep(plan: PlanApp, config: UyuniConfig, m: MigrationConfig): void {
  const volumes = SYNCED_VOLUMES;
  const stop = deploymentRefs(config.namespace);
  plan.addStep('data-sync', {
    description: `copy the data of ${m.source.fqdn} (Job ${JOB_NAMES.dataSync})`,
    timeoutSeconds: config.timeouts.dataSyncSeconds,
    // Checked before hours of copying: the ssh material and the old database credentials.
    requires: [...migrationRequirements(config, m), ...migrationDatabaseRequirements(config)],
    // Nothing may run on the claims while they are filled (a server left from an earlier try).
    actions: stop.map((object) => ({ type: 'scale' as const, object, replicas: 0 })),
  }, (chart) => {
    const image = imageOf(config, 'server');
    new ScriptJob(chart, 'DataSync', {
      name: JOB_NAMES.dataSync,
      namespace: config.namespace,
      image: image.image,
      imagePullPolicy: image.pullPolicy,
      imagePullSecrets: image.pullSecrets ? [...image.pullSecrets] : undefined,
      script: 'data-sync.sh',
      env: [
        { name: 'SOURCE_FQDN', value: m.source.fqdn },
        { name: 'SOURCE_USER', value: m.source.user },
        { name: 'SOURCE_PORT', value: String(m.source.port) },
        { name: 'VOLUME_PATHS', value: volumes.map((v) => v.mountPath).join(' ') },
        { name: 'TARGET_ROOT', value: SYNC_TARGET_ROOT },
        { name: 'OLD_PG_VERSION', value: String(m.postgresql.from) },
        { name: 'NEW_PG_VERSION', value: String(m.postgresql.to) },
        { name: 'MIGRATION_DIR', value: MIGRATION_VOLUME.mountPath },
      ],
      volumes: [
        ...claimVolumes([...volumes, MIGRATION_VOLUME]),
        {
          name: 'ssh-key',
          secret: {
            secretName: MIGRATION_SSH.keySecret,
            defaultMode: 0o600,
            items: [{ key: 'key', path: 'key', mode: 0o600 }, { key: 'key.pub', path: 'key.pub', mode: 0o644 }],
          },
        },
        {
          name: 'ssh-config',
          configMap: {
            name: MIGRATION_SSH.configMap,
            defaultMode: 0o644,
            items: [{ key: 'config', path: 'config' }, { key: 'known_hosts', path: 'known_hosts' }],
          },
        },
      ],
      volumeMounts: [
        ...claimMounts(volumes, SYNC_TARGET_ROOT),
        ...claimMounts([MIGRATION_VOLUME]),
        ...['key', 'key.pub'].map((f) => ({ name: 'ssh-key', mountPath: `${MIGRATION_SSH.dir}/${f}`, subPath: f, readOnly: true })),
        ...['config', 'known_hosts'].map((f) => ({ name: 'ssh-config', mountPath: `${MIGRATION_SSH.dir}/${f}`, subPath: f, readOnly: true })),
      ],
      securityContext: { runAsUser: 0, runAsGroup: 0, runAsNonRoot: false },
    });
  });
}

/**
 * Step `cleanup`, after the server runs: deletes the migration-data claim (it held the copied
 * facts of the old server; upstream left it behind) and records the finished migration in
 * ConfigMap uyuni-migration. The delete is an action, so it runs before the record is applied.
 */
export function addCleanupStep(plan: PlanApp, config: UyuniConfig, m: MigrationConfig): void {
  const claim: ObjectRef = { apiVersion: 'v1', kind: 'PersistentVolumeClaim', name: MIGRATION_VOLUME.name, namespace: config.namespace };
  const record: ObjectRef = { apiVersion: 'v1', kind: 'ConfigMap', name: 'uyuni-migration', namespace: config.namespace };
  plan.addStep('cleanup', {
    description: `delete the ${MIGRATION_VOLUME.name} claim, record the migration (ConfigMap ${record.name})`,
    actions: [{ type: 'delete', object: claim }],
    waits: [{ object: claim, for: 'deleted' }, { object: record, for: 'exists' }],
  }, (chart) => {
    flowRecord(chart, 'Record', config.namespace, record.name, migrationRecord(m));
  });
}

function migrationRecord(m: MigrationConfig): Record<string, string> {
  return {
    source: m.source.fqdn,
    postgresql: `${m.postgresql.from} -> ${m.postgresql.to}`,
  };
}

/**
 * The migrated databases keep the old server's users and passwords (rhn.conf points the server
 * at them): the Secrets must carry those, so they are the user's to create, never generated.
 */
export function migrationDatabaseRequirements(config: UyuniConfig): Requirement[] {
  const ns = config.namespace;
  const m = config.migration!;
  const fromOld = (c: { secret: string; role: string }, user: string, pass: string): Requirement => ({
    kind: 'Secret',
    name: c.secret,
    namespace: ns,
    keys: ['username', 'password'],
    ifMissing: 'fail',
    message: `the migrated database keeps the old server's credentials for ${c.role}: read ${user} and ${pass} on the old server `
      + `(ssh ${m.source.user}@${m.source.fqdn} sudo grep -E '^(${user}|${pass}) ' /etc/rhn/rhn.conf), then: kubectl -n ${ns} create secret generic `
      + `${c.secret} --type=kubernetes.io/basic-auth --from-literal=username=<${user}> --from-literal=password=<${pass}>`,
  });
  return [
    fromOld(CREDENTIALS.db, 'db_user', 'db_password'),
    fromOld(CREDENTIALS.reportdb, 'report_db_user', 'report_db_password'),
  ];
}

/**
 * The migrate plan (docs/upstream.md): namespace → claims (with var-pgsql for the old
 * database and migration-data) → TLS (the db certificate is needed by the PostgreSQL upgrade) →
 * data-sync → inspect the copied data and the new images → gates, PostgreSQL major upgrade into
 * var-pgsql18 → Services → database → db-finalize (REINDEX, the migration's rewrites) →
 * Ingresses → server → cleanup. No server runs before its data is upgraded: its Deployment is
 * applied last.
 */
export function migratePlan(config: UyuniConfig): PlanApp {
  const m = config.migration;
  if (!m) throw new Error('the migrate plan needs a migration section');
  const plan = serverPlan(config, 'migrate',
    `Migrate Uyuni from ${m.source.fqdn} to ${config.fqdn} in namespace ${config.namespace} (PostgreSQL ${m.postgresql.from} → ${m.postgresql.to})`);
  addNamespaceStep(plan, config);
  addVolumesStep(plan, config, [...INSTALL_VOLUMES, LEGACY_DB_VOLUME, MIGRATION_VOLUME]);
  addTlsStep(plan, config);
  addDataSyncStep(plan, config, m);
  addInspectStep(plan, config, { fromMigrationData: true });
  addInspectDbStep(plan, config, LEGACY_DB_VOLUME, { nearDb: false });
  addDbUpgradeStep(plan, config, m.postgresql, upgradeGates(config, m.postgresql, 'migration'));
  addServicesStep(plan, config);
  addDatabaseStep(plan, config, [credentialRequirement(CREDENTIALS.dbAdmin, config.namespace), ...migrationDatabaseRequirements(config)]);
  addDbFinalizeStep(plan, config, { reindex: true, migration: true });
  addIngressStep(plan, config);
  addServerStep(plan, config);
  if (!m.keepMigrationData) addCleanupStep(plan, config, m);
  return plan;
}
