import type { BackupConfig, UyuniConfig } from '../config/schema';
import { ScriptJob } from '../constructs/script-job';
import { stepAccount } from '../constructs/step-account';
import { LABELS, MANAGED_BY, Gate, ObjectRef } from '../plan/types';
import { RECORD_UNCOMPARED_KEYS } from '../model/backup-record';
import {
  addPrepareStep, BACKUP_JOBS, currentImages, recordedConfiguration, restoreImageFact, runningImages, BACKUP_PATHS, backedUpSecrets, backupClaimVolume, claimsAt, dataPodSelector, inspectDbJob, LIST_PODS,
  accountWaits,
} from './backup';
import { jobBase } from './db-steps';
import { addDeploySteps, addNamespaceStep, addVolumesStep, serverPlan } from './install';
import type { PlanApp } from './plan-app';
import { addStopSteps } from './stop-steps';

/**
 * The restore plan (docs/backup.md): namespace → prepare (the Jobs of the last run go) → the
 * install's claims → check the backup (complete, every checksum) and the new images → gates
 * (release not newer than the images, this fqdn, this PostgreSQL, this TLS mode), stop the
 * server, then the database → check the claims (empty unless restore.force, room enough) → gate, Job uyuni-restore
 * → the install's TLS, Services, database, Ingresses and server, waited for as the install does.
 * Into a fresh namespace or cluster as into the running one.
 */

const fact = (name: string) => ({ fact: name });
const literal = (value: string) => ({ value });
const jobRef = (namespace: string, name: string): ObjectRef => ({ apiVersion: 'batch/v1', kind: 'Job', name, namespace });

/** What the backup must be, from restore-check's and restore-inspect-db's facts: refused before anything stops. */
export function restoreGates(config: UyuniConfig): Gate[] {
  return [
    { type: 'equals', left: fact('backup_verified'), right: literal('true'), message: 'the backup did not verify: see the log of Job uyuni-restore-check' },
    {
      type: 'equals', left: fact('backup_fqdn'), right: literal(config.fqdn),
      message: `the backup is of another server name than fqdn ${config.fqdn}: its clients would not find this one`,
    },
    {
      type: 'equals', left: fact('product'), right: fact('backup_product'),
      message: 'the server image is another product than the backup was made with: switching between Uyuni and SUSE Manager is not supported',
    },
    {
      type: 'compare-versions', left: fact('uyuni_release'), op: '>=', right: fact('backup_release'),
      message: 'the backup is of a newer release than the server image: set images.tag to the backup\'s release or newer',
    },
    {
      type: 'compare-versions', left: fact('image_pg_version'), op: '==', right: fact('backup_pg_version'),
      message: 'the backup\'s database is of another PostgreSQL major than the server-postgresql image: a cold copy starts only on its own major',
    },
    {
      // lib/backup-record.sh decides: the recorded images (by digest) and configuration, or the
      // restore.allow* flags that let this one differ; a record that is there but cannot be read
      // failed the check Job already.
      type: 'equals', left: fact('record_ok'), right: literal('true'),
      message: 'the backup\'s record of what it was taken with refuses this restore (fact record_refusal; the differences: facts record_image_diff.*, record_config_diff.*)',
    },
    ...runningImages(config).map((p): Gate => ({
      type: 'present', fact: restoreImageFact(p.component),
      message: `the image ${p.component} runs after the restore is decided (fact ${restoreImageFact(p.component)}: the recorded one, by digest)`,
    })),
    {
      type: 'equals', left: fact('backup_tls_mode'), right: literal(config.tls.mode),
      message: `the backup was made with another TLS mode than tls.mode ${config.tls.mode}: set tls.mode to the backup's (fact backup_tls_mode)`,
    },
  ];
}

/** What every step of the restore reads: the configuration, its backup and restore sections, the backup claim read-only. */
interface Restoring {
  readonly config: UyuniConfig;
  readonly ns: string;
  readonly b: BackupConfig;
  readonly r: NonNullable<UyuniConfig['restore']>;
  readonly backupRo: ReturnType<typeof backupClaimVolume>;
}

/** The restore.allow* and force flags set, as the plan's description names them. */
function allowedText(r: Restoring['r']): string[] {
  return [
    r.force ? 'force: claims with data are replaced' : '',
    r.allowNewerImages ? 'allowNewerImages: images other than the recorded ones' : '',
    r.allowConfigChanges ? 'allowConfigChanges: a configuration other than the recorded one' : '',
    r.allowMissingRecord ? 'allowMissingRecord: a backup without its record' : '',
  ].filter(Boolean);
}

/** restore-check (the backup: complete, checksums, its record against this configuration) and restore-inspect-db (the new images' PostgreSQL): facts only, nothing stopped. */
function addCheckSteps(plan: PlanApp, { config, ns, b, r, backupRo }: Restoring): void {
  plan.addStep('restore-check', {
    description: `check backup ${r.from} on ${b.claim}: complete, every checksum, its record of the images and configuration it was taken with against these (Job ${BACKUP_JOBS.restoreCheck})`,
    timeoutSeconds: b.timeoutSeconds,
    factsFrom: jobRef(ns, BACKUP_JOBS.restoreCheck),
  }, (chart) => {
    new ScriptJob(chart, 'RestoreCheck', {
      ...jobBase(config, 'server'),
      name: BACKUP_JOBS.restoreCheck,
      script: 'restore-check.sh',
      env: [
        { name: 'BACKUP_DIR', value: BACKUP_PATHS.backups },
        { name: 'FROM', value: r.from },
        { name: 'CONFIGURATION', value: recordedConfiguration(config) },
        { name: 'CURRENT_IMAGES', value: currentImages(config) },
        { name: 'IGNORED', value: RECORD_UNCOMPARED_KEYS.join(' ') },
        { name: 'ALLOW_NEWER_IMAGES', value: String(r.allowNewerImages) },
        { name: 'ALLOW_CONFIG_CHANGES', value: String(r.allowConfigChanges) },
        { name: 'ALLOW_MISSING_RECORD', value: String(r.allowMissingRecord) },
      ],
      volumes: [backupRo.volume],
      volumeMounts: [backupRo.mount],
    });
  });
  plan.addStep('restore-inspect-db', {
    description: `the PostgreSQL of the new server-postgresql image (Job ${BACKUP_JOBS.restoreInspectDb})`,
    factsFrom: jobRef(ns, BACKUP_JOBS.restoreInspectDb),
  }, (chart) => {
    inspectDbJob(chart, 'RestoreInspectDb', config, BACKUP_JOBS.restoreInspectDb);
  });
}

/** The gates on the backup, then the server and its database stopped; the restore Job's account made with them. */
function addRestoreStopSteps(plan: PlanApp, { config, ns }: Restoring): void {
  addStopSteps(plan, config, {
    why: 'and then its database',
    gates: restoreGates(config),
    waits: accountWaits(ns, BACKUP_JOBS.restore),
    partOf: 'uyuni',
    chart: (chart) => stepAccount(chart, ns, BACKUP_JOBS.restore, 'uyuni', [
      { apiGroups: [''], resources: ['secrets'], verbs: ['get', 'update'], resourceNames: backedUpSecrets(config) },
      // create cannot be limited to names.
      { apiGroups: [''], resources: ['secrets'], verbs: ['create'] },
      LIST_PODS,
    ]),
  });
}

/** restore-target: the claims empty (or restore.force) and room enough for the backup. */
function addTargetStep(plan: PlanApp, { config, ns, r, backupRo }: Restoring): void {
  const claimsRo = claimsAt(true);
  plan.addStep('restore-target', {
    description: `check the claims: empty${r.force ? ' or replaced (restore.force)' : ''}, room for the backup (Job ${BACKUP_JOBS.restoreTarget})`,
    factsFrom: jobRef(ns, BACKUP_JOBS.restoreTarget),
  }, (chart) => {
    new ScriptJob(chart, 'RestoreTarget', {
      ...jobBase(config, 'server'),
      name: BACKUP_JOBS.restoreTarget,
      script: 'restore-check.sh',
      env: [
        { name: 'BACKUP_DIR', value: BACKUP_PATHS.backups },
        { name: 'FROM', value: r.from },
        { name: 'TARGETS', value: 'true' },
        { name: 'CLAIMS_DIR', value: BACKUP_PATHS.claims },
        { name: 'FORCE', value: String(r.force) },
      ],
      volumes: [...claimsRo.volumes, backupRo.volume],
      volumeMounts: [...claimsRo.mounts, backupRo.mount],
    });
  });
}

/** restore: every claim, the database and the Secrets written back (gated on empty claims unless restore.force). */
function addRestoreStep(plan: PlanApp, { config, b, r, backupRo }: Restoring): void {
  const claims = claimsAt(false);
  plan.addStep('restore', {
    description: `write every claim, the database and the Secrets from backup ${r.from} (Job ${BACKUP_JOBS.restore})`,
    timeoutSeconds: b.timeoutSeconds,
    gates: r.force ? [] : [{
      type: 'equals', left: fact('target_empty'), right: literal('true'),
      message: `claims hold data (fact target_with_data): a restore replaces it; set restore.force: true to allow that, or start the server as it was with uyuni-cdk run dist/install; nothing was written`,
    }],
  }, (chart) => {
    new ScriptJob(chart, 'Restore', {
      ...jobBase(config, 'server'),
      name: BACKUP_JOBS.restore,
      serviceAccountName: BACKUP_JOBS.restore,
      script: 'restore.sh',
      env: [
        { name: 'BACKUP_DIR', value: BACKUP_PATHS.backups },
        { name: 'FROM', value: r.from },
        { name: 'CLAIMS_DIR', value: BACKUP_PATHS.claims },
        { name: 'FORCE', value: String(r.force) },
        { name: 'POD_SELECTOR', value: dataPodSelector() },
        { name: 'NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
        { name: 'SECRET_LABELS', value: JSON.stringify({ [LABELS.partOf]: 'uyuni', [LABELS.managedBy]: MANAGED_BY }) },
      ],
      volumes: [...claims.volumes, backupRo.volume],
      volumeMounts: [...claims.mounts, backupRo.mount],
    });
  });
}

export function restorePlan(config: UyuniConfig): PlanApp {
  const b = config.backup;
  if (!b) throw new Error('the restore plan needs a backup section');
  const r = config.restore ?? { from: 'latest', force: false, allowNewerImages: false, allowConfigChanges: false, allowMissingRecord: false };
  const allowed = allowedText(r);
  const ns = config.namespace;
  const plan = serverPlan(config, 'restore',
    `Restore Uyuni ${config.fqdn} in namespace ${ns} from backup ${r.from} on claim ${b.claim}${allowed.length ? ` (${allowed.join('; ')})` : ''}`);
  addNamespaceStep(plan, config);
  const jobs = [BACKUP_JOBS.restoreCheck, BACKUP_JOBS.restoreInspectDb, BACKUP_JOBS.restoreTarget, BACKUP_JOBS.restore];
  addPrepareStep(plan, ns, 'uyuni-restore', jobs, {
    claim: b.claim, from: r.from, force: String(r.force),
    allowNewerImages: String(r.allowNewerImages), allowConfigChanges: String(r.allowConfigChanges), allowMissingRecord: String(r.allowMissingRecord),
  }, 'uyuni');
  addVolumesStep(plan, config);
  const restoring: Restoring = { config, ns, b, r, backupRo: backupClaimVolume(b, true) };
  addCheckSteps(plan, restoring);
  addRestoreStopSteps(plan, restoring);
  addTargetStep(plan, restoring);
  addRestoreStep(plan, restoring);
  addDeploySteps(plan, config);
  // The server runs what the backup was taken with: each configured image is replaced by the one
  // restore-check decided (the recorded digest; the configured image only with
  // restore.allowNewerImages or allowMissingRecord).
  const images = runningImages(config).map((p) => ({ image: p.image, fact: restoreImageFact(p.component) }));
  for (const step of plan.stepsAfter('restore')) plan.setImagesFromFacts(step, images);
  return plan;
}
