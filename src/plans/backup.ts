import { k8s } from 'cdk8s-plus-28';
import { Construct } from 'constructs';
import type { BackupConfig, UyuniConfig } from '../config/schema';
import { Claims } from '../constructs/claims';
import { CocoDeployment } from '../constructs/coco-deployment';
import { DbDeployment } from '../constructs/db-deployment';
import { HubApiDeployment } from '../constructs/hub-api-deployment';
import { ScriptJob } from '../constructs/script-job';
import { stepAccount } from '../constructs/step-account';
import { ServerDeployment } from '../constructs/server-deployment';
import { TftpDeployment } from '../constructs/tftp-deployment';
import { CREDENTIALS } from '../model/credentials';
import type { ImageComponent } from '../model/images';
import type { Component, PartOf } from '../model/labels';
import { TLS_NAMES } from '../model/tls';
import {
  DB_VOLUME, INSTALL_VOLUMES, RELEASE_DIR, volumeNamed, VolumeSpec,
} from '../model/volumes';
import { HISTORY_CONFIGMAP, Gate, ObjectRef } from '../plan/types';
import {
  deploymentRefs, flowRecord, jobBase, preferNodeOf, upgradeGates,
} from './db-steps';
import { configTimeouts, PlanApp } from './plan-app';
import { addStopSteps } from './stop-steps';
import { claimOf, imageOf } from './server-props';

/**
 * The backup plan (docs/backup.md): a cold copy of the whole server, taken while nothing runs
 * on its claims, so the database, the package pool and the salt keys are of one moment.
 * prepare (the Jobs of the last run go) → [the backup claim] → inspect the data and the database
 * → gates, stop the server and its helpers, then the database (each waited for until its pods are
 * gone) → Job uyuni-backup (every claim of the install
 * read-only, the Secrets through the API, manifest.json last; it completes even when the copy
 * fails) → start the server again → gate on the copy's result, Job uyuni-backup-prune (verify the
 * new backup, keep backup.keep).
 */

/** Job names: deterministic, so a run finds them. */
export const BACKUP_JOBS = {
  inspect: 'uyuni-backup-inspect',
  record: 'uyuni-backup-record',
  inspectDb: 'uyuni-backup-inspect-db',
  backup: 'uyuni-backup',
  prune: 'uyuni-backup-prune',
  restoreCheck: 'uyuni-restore-check',
  restoreInspectDb: 'uyuni-restore-inspect-db',
  restoreTarget: 'uyuni-restore-target',
  restore: 'uyuni-restore',
} as const;

/** Where the backup Jobs see things. */
export const BACKUP_PATHS = {
  /** The backup claim. */
  backups: '/backup',
  /** Each claim of the install at /claims/<claim>. */
  claims: '/claims',
} as const;

/** The backups' own objects: `destroy --purge-volumes` of a server plan never selects their claim. */
export const BACKUP_PART_OF: PartOf = 'uyuni-backup';

/** Every claim of an installed server, from the one claim table: what a backup holds. */
export const BACKED_UP_VOLUMES: readonly VolumeSpec[] = INSTALL_VOLUMES;

/** The components of the pods that use the data: none may be left while it is copied or written. */
const DATA_COMPONENTS: readonly Component[] = ['server', 'db', 'hub-xmlrpc', 'coco', 'tftp'];

/** The image component of each pod component the configuration runs, for a restore's comparison with a backup's record. */
const POD_IMAGES: ReadonlyArray<{ component: Component; image: ImageComponent; runs: (c: UyuniConfig) => boolean }> = [
  { component: 'server', image: 'server', runs: () => true },
  { component: 'db', image: 'db', runs: () => true },
  { component: 'hub-xmlrpc', image: 'hubApi', runs: (c) => c.hubApi.replicas > 0 },
  { component: 'coco', image: 'coco', runs: (c) => c.coco.replicas > 0 },
  { component: 'tftp', image: 'tftp', runs: (c) => c.tftp.enabled },
];

/** The images the configuration's pods run, by pod component, with their key under images.components. */
export function runningImages(config: UyuniConfig): Array<{ component: Component; image: string; key: ImageComponent }> {
  return POD_IMAGES.filter((p) => p.runs(config)).map((p) => ({ component: p.component, image: imageOf(config, p.image).image, key: p.image }));
}

/** The fact a restore's check prints with the image a pod component runs (src/scripts/lib/backup-record.sh). */
export const restoreImageFact = (component: Component) => `restore_image.${component}`;

/** What a restore would run, by pod component: the image reference and its key under images.components (JSON for restore-check). */
export function currentImages(config: UyuniConfig): string {
  return JSON.stringify(Object.fromEntries(runningImages(config).map((p) => [p.component, { image: p.image, key: p.key }])));
}

/** The synthesized configuration as a backup records it and a restore compares it (JSON). */
export function recordedConfiguration(config: UyuniConfig): string {
  return JSON.stringify(config);
}

/** The label selector of those pods (a terminating pod is not counted by its Deployment, but still writes). */
export function dataPodSelector(): string {
  return `app.kubernetes.io/part-of=uyuni,app.kubernetes.io/component in (${DATA_COMPONENTS.join(',')})`;
}

/** The Secrets a backup saves and a restore writes back: the credentials, the CA and the certificates, the SCC one. */
export function backedUpSecrets(config: UyuniConfig): string[] {
  return [
    ...Object.values(CREDENTIALS).map((c) => c.secret),
    TLS_NAMES.ca, TLS_NAMES.serverCert, TLS_NAMES.dbCert,
    ...(config.server.sccSecret ? [config.server.sccSecret] : []),
  ];
}

/** The release files, as a path under BACKUP_PATHS.claims: the claim that holds RELEASE_DIR, and below. */
export function releaseDirInClaims(): string {
  const holder = BACKED_UP_VOLUMES.find((v) => RELEASE_DIR.startsWith(v.mountPath.replace(/\/$/, '') + '/'));
  if (!holder) throw new Error(`no claim holds ${RELEASE_DIR}`);
  return `${holder.name}${RELEASE_DIR.slice(holder.mountPath.replace(/\/$/, '').length)}`;
}

export const backupClaimVolume = (b: BackupConfig, readOnly: boolean) => ({
  volume: { name: 'backup', persistentVolumeClaim: { claimName: b.claim, ...(readOnly ? { readOnly: true } : {}) } } as k8s.Volume,
  mount: { name: 'backup', mountPath: BACKUP_PATHS.backups, ...(readOnly ? { readOnly: true } : {}) } as k8s.VolumeMount,
});

/** Every claim of the table at /claims/<claim>. */
export function claimsAt(readOnly: boolean): { volumes: k8s.Volume[]; mounts: k8s.VolumeMount[] } {
  return {
    volumes: BACKED_UP_VOLUMES.map((v) => ({ name: v.name, persistentVolumeClaim: { claimName: v.name } })),
    mounts: BACKED_UP_VOLUMES.map((v) => ({ name: v.name, mountPath: `${BACKUP_PATHS.claims}/${v.name}`, ...(readOnly ? { readOnly: true } : {}) })),
  };
}

const jobRef = (namespace: string, name: string): ObjectRef => ({ apiVersion: 'batch/v1', kind: 'Job', name, namespace });

/**
 * Step `prepare`: each run of the plan is a new backup (or restore), never the resume of an
 * earlier one: the Jobs of the last run are deleted (their logs are in its run directory) before
 * anything else, so the Jobs below are made afresh. The record says what the plan does.
 */
export function addPrepareStep(plan: PlanApp, namespace: string, record: string, jobs: readonly string[], data: Record<string, string>, partOf: PartOf): void {
  const refs = jobs.map((j) => jobRef(namespace, j));
  const cm: ObjectRef = { apiVersion: 'v1', kind: 'ConfigMap', name: record, namespace };
  plan.addStep('prepare', {
    description: `delete the Jobs of the last run (${jobs.join(', ')}); record ConfigMap ${record}`,
    actions: refs.map((object) => ({ type: 'delete' as const, object })),
    // No `deleted` waits: `status` would judge them against the Jobs this run makes. A Job still
    // being deleted when its step comes is re-created by the runtime once it is gone.
    waits: [{ object: cm, for: 'exists' }],
  }, (chart) => {
    const o = flowRecord(chart, 'Record', namespace, record, data);
    o.metadata.addLabel('app.kubernetes.io/part-of', partOf);
  });
}

/** A service account for a Job that talks to the API, with exactly `rules`. */
/**
 * The database claim's inspection (`inspect-db.sh`, read-only) of a backup or a restore, near
 * the node the database last ran on. `partOf` @default the ScriptJob's
 */
export function inspectDbJob(chart: Construct, id: string, config: UyuniConfig, name: string, partOf?: PartOf): void {
  const job = new ScriptJob(chart, id, {
    ...jobBase(config, 'db'),
    ...(partOf ? { partOf } : {}),
    name,
    script: 'inspect-db.sh',
    env: [{ name: 'DATA_DIR', value: '/inspect/pgsql' }],
    volumes: [{ name: DB_VOLUME.name, persistentVolumeClaim: { claimName: DB_VOLUME.name } }],
    volumeMounts: [{ name: DB_VOLUME.name, mountPath: '/inspect/pgsql', readOnly: true }],
  });
  preferNodeOf(job.job, 'db');
}

/** Reads the pods of the server (to wait until none is left). */
export const LIST_PODS: k8s.PolicyRule = { apiGroups: [''], resources: ['pods'], verbs: ['list'] };

/** Waits until a step Job's ServiceAccount, Role and RoleBinding (stepAccount) exist. */
export function accountWaits(namespace: string, name: string) {
  return (['ServiceAccount', 'Role', 'RoleBinding'] as const).map((kind) => ({
    object: { apiVersion: kind === 'ServiceAccount' ? 'v1' : 'rbac.authorization.k8s.io/v1', kind, name, namespace },
    for: 'exists' as const,
  }));
}

/** The Deployments the configuration runs, with their replicas: the database first. */
export function runningDeployments(config: UyuniConfig): Array<{ name: string; replicas: number }> {
  return [
    { name: DbDeployment.NAME, replicas: 1 },
    { name: ServerDeployment.NAME, replicas: 1 },
    ...(config.tftp.enabled ? [{ name: TftpDeployment.NAME, replicas: 1 }] : []),
    ...(config.hubApi.replicas > 0 ? [{ name: HubApiDeployment.NAME, replicas: config.hubApi.replicas }] : []),
    ...(config.coco.replicas > 0 ? [{ name: CocoDeployment.NAME, replicas: config.coco.replicas }] : []),
  ];
}

function backupGates(config: UyuniConfig): Gate[] {
  // The upgrade's own gates where they apply: a database, a known release, this server's name.
  const upgrade = upgradeGates(config, { from: 0, to: 0 }, 'upgrade');
  const pick = (g: Gate) => (g.type === 'present' && (g.fact === 'current_pg_version' || g.fact === 'current_release'))
    || (g.type === 'equals' && 'fact' in g.left && g.left.fact === 'fqdn');
  return upgrade.filter(pick).map((g) => (g.type === 'present' && g.fact === 'current_pg_version'
    ? { ...g, message: `no database data: ${DB_VOLUME.name} holds no PG_VERSION, there is no server to back up` }
    : g));
}

export function backupPlan(config: UyuniConfig): PlanApp {
  const b = config.backup;
  if (!b) throw new Error('the backup plan needs a backup section');
  const ns = config.namespace;
  const plan = new PlanApp({
    name: 'backup',
    description: `Back up Uyuni ${config.fqdn} (namespace ${ns}) onto claim ${b.claim}, keeping ${b.keep}`,
    namespace: ns,
    partOf: BACKUP_PART_OF,
    ...configTimeouts(config),
  });
  const jobs = [BACKUP_JOBS.inspect, BACKUP_JOBS.inspectDb, BACKUP_JOBS.record, BACKUP_JOBS.backup, BACKUP_JOBS.prune];
  addPrepareStep(plan, ns, 'uyuni-backup', jobs, {
    claim: b.claim,
    keep: String(b.keep),
    claims: BACKED_UP_VOLUMES.map((v) => v.name).join(' '),
    secrets: backedUpSecrets(config).join(' '),
  }, BACKUP_PART_OF);

  if (b.size) {
    plan.addStep('backup-volume', { description: `the backup claim ${b.claim} (${b.size})` }, (chart) => {
      const spec: VolumeSpec = { name: b.claim, mountPath: BACKUP_PATHS.backups, size: b.size!, owner: 'flow' };
      new Claims(chart, 'Claims', { namespace: ns, partOf: BACKUP_PART_OF, claims: [claimOf(config, spec, { size: b.size, storageClass: b.storageClass })] });
    });
  }

  addInspectSteps(plan, config);
  addRecordStep(plan, config, b);
  addStopSteps(plan, config, {
    why: 'and then its database for a consistent copy',
    gates: backupGates(config),
    waits: accountWaits(ns, BACKUP_JOBS.backup),
    partOf: BACKUP_PART_OF,
    chart: (chart) => stepAccount(chart, ns, BACKUP_JOBS.backup, BACKUP_PART_OF, [
      { apiGroups: [''], resources: ['secrets'], verbs: ['get'], resourceNames: backedUpSecrets(config) },
      LIST_PODS,
    ]),
  });

  addCopyStep(plan, config, b);
  addStartStep(plan, config);
  addPruneStep(plan, config, b);
  return plan;
}

/** Steps inspect and inspect-db: the release and name of the server's data, and its database (facts for the gates). */
function addInspectSteps(plan: PlanApp, config: UyuniConfig): void {
  const ns = config.namespace;
  const etcRhn = volumeNamed('etc-rhn');
  plan.addStep('inspect', {
    description: `inspect the server's data: release and name (Job ${BACKUP_JOBS.inspect})`,
    factsFrom: jobRef(ns, BACKUP_JOBS.inspect),
  }, (chart) => {
    const job = new ScriptJob(chart, 'Inspect', {
      ...jobBase(config, 'server'),
      partOf: BACKUP_PART_OF,
      name: BACKUP_JOBS.inspect,
      script: 'inspect.sh',
      env: [{ name: 'RELEASE_DIR', value: RELEASE_DIR }],
      volumes: [{ name: etcRhn.name, persistentVolumeClaim: { claimName: etcRhn.name } }],
      volumeMounts: [{ name: etcRhn.name, mountPath: etcRhn.mountPath, readOnly: true }],
    });
    preferNodeOf(job.job, 'server');
  });
  plan.addStep('inspect-db', {
    description: `inspect the database on ${DB_VOLUME.name} (Job ${BACKUP_JOBS.inspectDb})`,
    factsFrom: jobRef(ns, BACKUP_JOBS.inspectDb),
  }, (chart) => {
    inspectDbJob(chart, 'InspectDb', config, BACKUP_JOBS.inspectDb, BACKUP_PART_OF);
  });
}

/** Step record: the pods' images by digest, the configuration and the identity, written beside the backup (record.json). */
function addRecordStep(plan: PlanApp, config: UyuniConfig, b: BackupConfig): void {
  const ns = config.namespace;
  // What the backup is taken with, while the server still runs: its pods' images by digest, the
  // configuration, the identity (record.json: src/model/backup-record.ts).
  const recordClaim = backupClaimVolume(b, false);
  plan.addStep('record', {
    description: `record what the backup is taken with: each pod's image and imageID, the configuration, the server's identity (Job ${BACKUP_JOBS.record})`,
    // The Job's own completion too: with the account's waits alone the run went on to the stop
    // before the record was taken (kube-apiserver, test/cluster/backup-restore.test.ts).
    waits: [{ object: jobRef(ns, BACKUP_JOBS.record), for: 'complete' as const }, ...accountWaits(ns, BACKUP_JOBS.record)],
    factsFrom: jobRef(ns, BACKUP_JOBS.record),
  }, (chart) => {
    stepAccount(chart, ns, BACKUP_JOBS.record, BACKUP_PART_OF, [
      LIST_PODS,
      { apiGroups: [''], resources: ['configmaps'], verbs: ['get'], resourceNames: [HISTORY_CONFIGMAP] },
    ]);
    new ScriptJob(chart, 'Record', {
      ...jobBase(config, 'server'),
      partOf: BACKUP_PART_OF,
      name: BACKUP_JOBS.record,
      serviceAccountName: BACKUP_JOBS.record,
      script: 'backup-record.sh',
      env: [
        { name: 'POD_SELECTOR', value: dataPodSelector() },
        { name: 'CONFIGURATION', value: recordedConfiguration(config) },
        { name: 'BACKUP_DIR', value: BACKUP_PATHS.backups },
        { name: 'HISTORY_CONFIGMAP', value: HISTORY_CONFIGMAP },
        { name: 'NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
      ],
      volumes: [recordClaim.volume],
      volumeMounts: [recordClaim.mount],
    });
  });
}

/** Step backup: the copy of every claim, the database and the Secrets onto the backup claim, with the server stopped. */
function addCopyStep(plan: PlanApp, config: UyuniConfig, b: BackupConfig): void {
  const ns = config.namespace;
  const backups = backupClaimVolume(b, false);
  const claims = claimsAt(true);
  plan.addStep('backup', {
    description: `copy every claim (${BACKED_UP_VOLUMES.length}), the database and the Secrets onto ${b.claim} (Job ${BACKUP_JOBS.backup})`,
    timeoutSeconds: b.timeoutSeconds,
    factsFrom: jobRef(ns, BACKUP_JOBS.backup),
  }, (chart) => {
    new ScriptJob(chart, 'Backup', {
      ...jobBase(config, 'server'),
      partOf: BACKUP_PART_OF,
      name: BACKUP_JOBS.backup,
      serviceAccountName: BACKUP_JOBS.backup,
      script: 'backup.sh',
      env: [
        { name: 'CLAIMS', value: BACKED_UP_VOLUMES.map((v) => v.name).join(' ') },
        { name: 'CLAIMS_DIR', value: BACKUP_PATHS.claims },
        { name: 'DB_CLAIM', value: DB_VOLUME.name },
        { name: 'BACKUP_DIR', value: BACKUP_PATHS.backups },
        { name: 'FQDN', value: config.fqdn },
        { name: 'SERVER_IMAGE', value: imageOf(config, 'server').image },
        { name: 'DB_IMAGE', value: imageOf(config, 'db').image },
        { name: 'IMAGE_TAG', value: config.images.tag },
        { name: 'TLS_MODE', value: config.tls.mode },
        { name: 'RELEASE_DIR', value: releaseDirInClaims() },
        { name: 'SECRETS', value: backedUpSecrets(config).join(' ') },
        { name: 'POD_SELECTOR', value: dataPodSelector() },
        { name: 'NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
      ],
      volumes: [...claims.volumes, backups.volume],
      volumeMounts: [...claims.mounts, backups.mount],
    });
  });
}

/** Step start-server: the server and its helpers back at their replicas, whatever the copy's result. */
function addStartStep(plan: PlanApp, config: UyuniConfig): void {
  const ns = config.namespace;
  const start = runningDeployments(config);
  const startRecord: ObjectRef = { apiVersion: 'v1', kind: 'ConfigMap', name: 'uyuni-backup-server', namespace: ns };
  plan.addStep('start-server', {
    description: `start the server again (${start.map((d) => `${d.name} to ${d.replicas}`).join(', ')}), whatever the copy's result`,
    timeoutSeconds: config.timeouts.serverStartSeconds,
    actions: deploymentRefs(ns, start.map((d) => d.name)).map((object, i) => ({ type: 'scale' as const, object, replicas: start[i].replicas })),
    waits: [...deploymentRefs(ns, start.map((d) => d.name)).map((object) => ({ object, for: 'rollout' as const })), { object: startRecord, for: 'exists' }],
  }, (chart) => {
    const o = flowRecord(chart, 'Record', ns, startRecord.name, { replicas: start.map((d) => `${d.name}=${d.replicas}`).join(' ') });
    o.metadata.addLabel('app.kubernetes.io/part-of', BACKUP_PART_OF);
  });
}

/** Step prune: gated on the copy's result, the new backup verified and the newest backup.keep kept. */
function addPruneStep(plan: PlanApp, config: UyuniConfig, b: BackupConfig): void {
  const ns = config.namespace;
  plan.addStep('prune', {
    description: `verify the new backup, keep the newest ${b.keep} (Job ${BACKUP_JOBS.prune})`,
    gates: [{
      type: 'equals', left: { fact: 'backup_ok' }, right: { value: 'true' },
      message: `the copy failed (fact backup_error; kubectl -n ${ns} logs job/${BACKUP_JOBS.backup}); the server runs again and no backup was removed: `
        + 'fix the cause and run this plan again',
    }],
    factsFrom: jobRef(ns, BACKUP_JOBS.prune),
  }, (chart) => {
    const mine = backupClaimVolume(b, false);
    new ScriptJob(chart, 'Prune', {
      ...jobBase(config, 'server'),
      partOf: BACKUP_PART_OF,
      name: BACKUP_JOBS.prune,
      script: 'backup-prune.sh',
      env: [{ name: 'BACKUP_DIR', value: BACKUP_PATHS.backups }, { name: 'KEEP', value: String(b.keep) }],
      volumes: [mine.volume],
      volumeMounts: [mine.mount],
    });
  });
}
