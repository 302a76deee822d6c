import type { MigrationConfig, UyuniConfig } from '../config/schema';
import { claimMounts, claimVolumes } from '../constructs/claims';
import { ScriptJob } from '../constructs/script-job';
import { stepAccount } from '../constructs/step-account';
import {
  INSTALL_VOLUMES, LEGACY_DB_VOLUME, MIGRATION_VOLUME, SERVER_VOLUMES, volumeNamed,
} from '../model/volumes';
import { CREDENTIALS, credentialRequirement } from '../model/credentials';
import { POSTGRES_UID } from '../model/db';
import { TLS_NAMES } from '../model/tls';
import { LABELS, MANAGED_BY, ObjectRef, Requirement } from '../plan/types';
import {
  addDbFinalizeStep, addDbUpgradeStep, addInspectDbStep, addInspectStep, flowRecord, JOB_NAMES, upgradeGates,
} from './db-steps';
import {
  addDatabaseStep, addIngressStep, addNamespaceStep, addServerStep, addServicesStep, addTlsStep, addVolumesStep, installVolumes, serverPlan,
} from './install';
import type { PlanApp } from './plan-app';
import { serverNotes } from './notes';
import { addStopSteps } from './stop-steps';
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

/** The trust anchors' claim: not copied, but the old server's custom CAs are put there. */
const CA_CERTS = volumeNamed('ca-certs');

/**
 * What the data sync fills: every server claim but ca-certs (the CA files come from the TLS
 * step; custom anchors are copied by the script), and the old database into var-pgsql.
 */
export const SYNCED_VOLUMES = [...SERVER_VOLUMES.filter((v) => v.name !== CA_CERTS.name), LEGACY_DB_VOLUME];

/**
 * Step `data-sync` (or `data-presync`): Job uyuni-data-sync copies the old server's volumes over
 * ssh (rsync through sudo) into the new claims, mounted under /mnt, and the facts, credentials
 * and CA files into migration-data. The ssh key (mode 0600), config and known_hosts are mounted
 * file by file into /root/.ssh/. The pre-sync (Job uyuni-data-presync, PREPARE=true) copies
 * while the old server keeps running, without its database, so the final sync's downtime only
 * covers the delta.
 */
export function addDataSyncStep(plan: PlanApp, config: UyuniConfig, m: MigrationConfig, opts: { prepare?: boolean } = {}): void {
  const volumes = SYNCED_VOLUMES;
  const name = opts.prepare ? JOB_NAMES.dataPresync : JOB_NAMES.dataSync;
  plan.addStep(opts.prepare ? 'data-presync' : 'data-sync', {
    description: opts.prepare
      ? `copy the data of ${m.source.fqdn} while it keeps running, without its database (Job ${name})`
      : `stop ${m.source.fqdn} and copy its data (Job ${name})`,
    timeoutSeconds: config.timeouts.dataSyncSeconds,
    // Checked before hours of copying: the ssh material and, for a migrated CA, its password.
    requires: [...migrationRequirements(config, m), ...(config.tls.mode === 'migrated' && !opts.prepare ? [caPasswordRequirement(config)] : [])],
    // Nothing may run on the claims while they are filled: the migrate plan's stop steps stopped a
    // server left from an earlier try before this one; the pre-sync stops nothing (it copies while
    // the old server runs, and no new one runs yet).
  }, (chart) => {
    const image = imageOf(config, 'server');
    new ScriptJob(chart, 'DataSync', {
      name,
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
        { name: 'PREPARE', value: String(opts.prepare ?? false) },
        { name: 'ANCHORS_DIR', value: `${SYNC_TARGET_ROOT}${CA_CERTS.mountPath}` },
        { name: 'PG_OWNER', value: `${POSTGRES_UID}:${POSTGRES_UID}` },
      ],
      volumes: [
        ...claimVolumes([...volumes, CA_CERTS, MIGRATION_VOLUME]),
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
        ...claimMounts([...volumes, CA_CERTS], SYNC_TARGET_ROOT),
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
  // The Jobs whose pods mount the claim go first: kube-controller-manager's pvc-protection keeps a
  // claim while any scheduled pod references it, finished (Succeeded) ones included, so with the
  // Jobs kept the claim stayed Terminating and the step timed out (seen on kube-apiserver 1.34).
  // Their logs are in the run's log directory; the flow's record, not the Jobs, keeps the
  // migration from running again.
  const jobs: ObjectRef[] = [JOB_NAMES.dataSync, JOB_NAMES.inspect, JOB_NAMES.importSecrets, JOB_NAMES.dbFinalize]
    .map((name) => ({ apiVersion: 'batch/v1', kind: 'Job', name, namespace: config.namespace }));
  // The importer's rights go with the data they were for.
  const gone = [...jobs, claim, ...importerRefs(config.namespace)];
  plan.addStep('cleanup', {
    description: `delete the ${MIGRATION_VOLUME.name} claim with the Jobs that mounted it and the importer's service account, record the migration (ConfigMap ${record.name})`,
    actions: gone.map((object) => ({ type: 'delete' as const, object })),
    waits: [...gone.map((object) => ({ object, for: 'deleted' as const })), { object: record, for: 'exists' }],
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
 * at them): the Secrets must carry those. uyuni-import-secrets makes them from the old rhn.conf
 * (or the user did before); they are never generated.
 */
export function migrationDatabaseRequirements(config: UyuniConfig): Requirement[] {
  const ns = config.namespace;
  const fromOld = (c: { secret: string; role: string }, user: string, pass: string): Requirement => ({
    kind: 'Secret',
    name: c.secret,
    namespace: ns,
    keys: ['username', 'password'],
    ifMissing: 'fail',
    madeBy: IMPORT_SECRETS_STEP,
    message: `the migrated database keeps the old server's credentials for ${c.role}, which Job ${JOB_NAMES.importSecrets} `
      + `makes from ${user} and ${pass} of the old rhn.conf: see its log (kubectl -n ${ns} logs job/${JOB_NAMES.importSecrets})`,
  });
  return [
    fromOld(CREDENTIALS.db, 'db_user', 'db_password'),
    fromOld(CREDENTIALS.reportdb, 'report_db_user', 'report_db_password'),
  ];
}

/** The step whose Job makes the migrated database credentials and CA (their requirements' `madeBy`). */
const IMPORT_SECRETS_STEP = 'import-secrets';

/** The CA password of a migrated CA: the user's Secret, read by uyuni-import-secrets only. */
export const CA_PASSWORD_SECRET = { name: 'uyuni-ca-password', key: 'password' } as const;

export function caPasswordRequirement(config: UyuniConfig): Requirement {
  const ns = config.namespace;
  return {
    kind: 'Secret', name: CA_PASSWORD_SECRET.name, namespace: ns, keys: [CA_PASSWORD_SECRET.key], ifMissing: 'fail',
    message: `tls.mode migrated: the old CA's key is encrypted with the CA password (the one rhn-ssl-tool asked for): `
      + `create the Secret with: kubectl -n ${ns} create secret generic ${CA_PASSWORD_SECRET.name} --from-file=${CA_PASSWORD_SECRET.key}=<file holding the CA password>`,
  };
}

/** The service account of uyuni-import-secrets: it may read and create Secrets in the namespace, nothing else. */
const IMPORTER = 'uyuni-migration-importer';

/**
 * Step `import-secrets`: Job uyuni-import-secrets makes, in the cluster, the Secrets the old
 * server's data needs (db-credentials and reportdb-credentials from the old rhn.conf; with a
 * migrated CA, uyuni-ca, its key decrypted with the user's CA password), so no password or key
 * ever passes through dist/, the runtime or a log. It carries the gates: the first step that
 * changes anything after the data is known.
 */
export function addImportSecretsStep(plan: PlanApp, config: UyuniConfig, m: MigrationConfig): void {
  const ns = config.namespace;
  const importCa = config.tls.mode === 'migrated';
  const image = imageOf(config, 'server');
  plan.addStep(IMPORT_SECRETS_STEP, {
    description: `create the database credentials${importCa ? ' and the old CA' : ''} from the copied data (Job ${JOB_NAMES.importSecrets})`,
    gates: upgradeGates(config, m.postgresql, 'migration'),
  }, (chart) => {
    // create cannot be limited to names; get can, to the Secrets it makes.
    stepAccount(chart, ns, IMPORTER, 'uyuni', [
      { apiGroups: [''], resources: ['secrets'], verbs: ['get'], resourceNames: [CREDENTIALS.db.secret, CREDENTIALS.reportdb.secret, TLS_NAMES.ca] },
      { apiGroups: [''], resources: ['secrets'], verbs: ['create'] },
    ]);
    new ScriptJob(chart, 'ImportSecrets', {
      name: JOB_NAMES.importSecrets,
      namespace: ns,
      image: image.image,
      imagePullPolicy: image.pullPolicy,
      imagePullSecrets: image.pullSecrets ? [...image.pullSecrets] : undefined,
      serviceAccountName: IMPORTER,
      script: 'import-secrets.sh',
      env: [
        { name: 'MIGRATION_DIR', value: MIGRATION_VOLUME.mountPath },
        { name: 'NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
        { name: 'IMPORT_CA', value: String(importCa) },
        // The plan's selector labels: destroy finds them like the Secrets the runtime generates.
        { name: 'SECRET_LABELS', value: JSON.stringify({ [LABELS.partOf]: 'uyuni', [LABELS.managedBy]: MANAGED_BY }) },
        ...(importCa ? [{ name: 'CA_PASSWORD', valueFrom: { secretKeyRef: { name: CA_PASSWORD_SECRET.name, key: CA_PASSWORD_SECRET.key } } }] : []),
      ],
      volumes: claimVolumes([MIGRATION_VOLUME]),
      volumeMounts: claimMounts([MIGRATION_VOLUME]).map((mt) => ({ ...mt, readOnly: true })),
      securityContext: { runAsUser: 0, runAsGroup: 0, runAsNonRoot: false },
    });
  });
}

/** The RBAC objects of the import, removed with the migration data. */
export function importerRefs(namespace: string): ObjectRef[] {
  return [
    { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', name: IMPORTER, namespace },
    { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', name: IMPORTER, namespace },
    { apiVersion: 'v1', kind: 'ServiceAccount', name: IMPORTER, namespace },
  ];
}

/**
 * The pre-sync plan (`dist/migrate-prepare/`): the claims and one copy of the old server's data
 * while it keeps running, as often as wanted before the migration; `dist/migrate` then stops it
 * and copies only what changed since.
 */
export function migratePreparePlan(config: UyuniConfig): PlanApp {
  const m = config.migration;
  if (!m) throw new Error('the migrate-prepare plan needs a migration section');
  const plan = serverPlan(config, 'migrate-prepare',
    `Copy the data of ${m.source.fqdn} ahead of its migration, while it keeps running (namespace ${config.namespace})`);
  addNamespaceStep(plan, config);
  addVolumesStep(plan, config, installVolumes(config, MIGRATE_VOLUMES));
  addDataSyncStep(plan, config, m, { prepare: true });
  // Repeatable before the migration, never after it (over the live claims).
  return plan.markOneShot('migration', 'data-presync');
}

/** The claims of a migration: the install's, the old database's and the migration data. */
const MIGRATE_VOLUMES = [...INSTALL_VOLUMES, LEGACY_DB_VOLUME, MIGRATION_VOLUME];

/**
 * The migrate plan (docs/flows.md): namespace → claims (with var-pgsql for the old database and
 * migration-data) → stop-server, stop-db (a server of an earlier try, its database last) →
 * data-sync (the old server stopped) → inspect the copied data and the new
 * images → gates, import-secrets (credentials, the old CA) → TLS → PostgreSQL major upgrade into
 * var-pgsql18 → Services → database → db-finalize (REINDEX, the migration's rewrites) →
 * Ingresses → server → cleanup. No server runs before its data is upgraded: its Deployment is
 * applied last.
 */
export function migratePlan(config: UyuniConfig): PlanApp {
  const m = config.migration;
  if (!m) throw new Error('the migrate plan needs a migration section');
  const plan = serverPlan(config, 'migrate',
    `Migrate Uyuni from ${m.source.fqdn} to ${config.fqdn} in namespace ${config.namespace} (PostgreSQL ${m.postgresql.from} → ${m.postgresql.to})`,
    { flow: { kind: 'migration', source: m.source.fqdn }, notes: serverNotes(config, { migratedFrom: m.source.fqdn }) });
  addNamespaceStep(plan, config);
  addVolumesStep(plan, config, installVolumes(config, MIGRATE_VOLUMES));
  // A server left from an earlier try: its server first, then its database (docs/upstream.md, decision n).
  addStopSteps(plan, config, { why: 'left from an earlier try, before the claims are filled', partOf: 'uyuni' });
  addDataSyncStep(plan, config, m);
  addInspectStep(plan, config, { fromMigrationData: true });
  addInspectDbStep(plan, config, LEGACY_DB_VOLUME, { nearDb: false });
  addImportSecretsStep(plan, config, m);
  // The TLS after the import (a migrated CA is one of its Secrets), before the database upgrade
  // (its Job reads db-cert).
  addTlsStep(plan, config, { step: IMPORT_SECRETS_STEP, job: JOB_NAMES.importSecrets });
  addDbUpgradeStep(plan, config, m.postgresql);
  addServicesStep(plan, config);
  addDatabaseStep(plan, config, [credentialRequirement(CREDENTIALS.dbAdmin, config.namespace), ...migrationDatabaseRequirements(config)]);
  addDbFinalizeStep(plan, config, { migration: true });
  addIngressStep(plan, config);
  addServerStep(plan, config);
  if (!m.keepMigrationData) addCleanupStep(plan, config, m);
  // The data steps run once: never again over a live server (docs/runtime.md, "Safety").
  return plan.markOneShot('migration', 'stop-server', 'stop-db', 'data-sync', 'inspect', 'inspect-db', 'import-secrets', 'db-upgrade', 'db-finalize');
}
