import type { ApiObject } from 'cdk8s';
import type { UyuniConfig } from '../config/schema';
import { DbDeployment } from '../constructs/db-deployment';
import { ScriptJob } from '../constructs/script-job';
import { CREDENTIALS, credentialEnv } from '../model/credentials';
import { DATABASES, PG_PORT, WAL_ARCHIVE_DIR } from '../model/db';
import { DB_VOLUME, WAL_ARCHIVE_VOLUME } from '../model/volumes';
import type { ObjectRef } from '../plan/types';
import { addPrepareStep, runningDeployments } from './backup';
import { DB_ARCHIVE_PART_OF } from './db-basebackup';
import { deploymentRefs, flowRecord, jobBase, preferNodeOf } from './db-steps';
import { configTimeouts, PlanApp } from './plan-app';
import { addStopSteps } from './stop-steps';

/**
 * Plan db-pitr (db.archiving.restoreTo; docs/backup.md, "Point-in-time restore"): upstream's
 * `mgradm backup db restore` (uyuni-tools mgradm/cmd/backup/db/restore.go @ 0ee843a4) with a
 * target time. prepare → stop the server, then the database (the clean stops of every flow) →
 * Job uyuni-db-pitr-restore (src/scripts/db-pitr-restore.sh: the data claim replaced by the newest
 * base backup before the target, recovery.signal, restore_command and recovery_target_time) →
 * start the database → Job uyuni-db-pitr-recovery (until it has replayed the archive and promoted
 * itself) → start the server and its helpers.
 */

export const PITR_JOBS = { restore: 'uyuni-db-pitr-restore', recovery: 'uyuni-db-pitr-recovery' } as const;

/** How long the database may replay the archive. */
const RECOVERY_WAIT_SECONDS = 3600;

/** The starts' records: a step with objects of its own, which `status` can judge. */
const record = (ns: string, name: string): ObjectRef => ({ apiVersion: 'v1', kind: 'ConfigMap', name, namespace: ns });
const mark = (o: ApiObject) => { o.metadata.addLabel('app.kubernetes.io/part-of', DB_ARCHIVE_PART_OF); };
const jobRef = (ns: string, name: string): ObjectRef => ({ apiVersion: 'batch/v1', kind: 'Job', name, namespace: ns });

/** pitr-restore: the data claim replaced by the newest base backup before `target`, set to replay the archive up to it. */
function addRestoreStep(plan: PlanApp, config: UyuniConfig, target: string): void {
  const ns = config.namespace;
  plan.addStep('pitr-restore', {
    description: `replace the database on ${DB_VOLUME.name} by the newest base backup before ${target}, to be replayed up to it (Job ${PITR_JOBS.restore})`,
    waits: [{ object: jobRef(ns, PITR_JOBS.restore), for: 'complete' }],
    factsFrom: jobRef(ns, PITR_JOBS.restore),
    destroysData: `the database on ${DB_VOLUME.name}: everything written after ${target} is lost`,
  }, (chart) => {
    const j = new ScriptJob(chart, 'PitrRestore', {
      ...jobBase(config, 'db'),
      partOf: DB_ARCHIVE_PART_OF,
      name: PITR_JOBS.restore,
      script: 'db-pitr-restore.sh',
      env: [
        { name: 'PGDATA', value: DB_VOLUME.mountPath },
        { name: 'ARCHIVE_DIR', value: WAL_ARCHIVE_DIR },
        { name: 'TARGET_TIME', value: target },
      ],
      securityContext: { runAsUser: 0, runAsGroup: 0, runAsNonRoot: false },
      volumes: [
        { name: DB_VOLUME.name, persistentVolumeClaim: { claimName: DB_VOLUME.name } },
        { name: WAL_ARCHIVE_VOLUME.name, persistentVolumeClaim: { claimName: WAL_ARCHIVE_VOLUME.name, readOnly: true } },
      ],
      volumeMounts: [
        { name: DB_VOLUME.name, mountPath: DB_VOLUME.mountPath },
        { name: WAL_ARCHIVE_VOLUME.name, mountPath: WAL_ARCHIVE_DIR, readOnly: true },
      ],
    });
    preferNodeOf(j.job, 'db');
  });
}

/** start-db, then recovery: the database started, and waited for until it has replayed the archive and promoted itself. */
function addRecoverySteps(plan: PlanApp, config: UyuniConfig, target: string): void {
  const ns = config.namespace;
  const db = deploymentRefs(ns, [DbDeployment.NAME]);
  plan.addStep('start-db', {
    description: 'start the database: it replays the archive up to the target time',
    timeoutSeconds: config.timeouts.serverStartSeconds,
    actions: db.map((object) => ({ type: 'scale' as const, object, replicas: 1 })),
    waits: [...db.map((object) => ({ object, for: 'rollout' as const })), { object: record(ns, 'uyuni-db-pitr-db'), for: 'exists' as const }],
  }, (chart) => mark(flowRecord(chart, 'Record', ns, 'uyuni-db-pitr-db', { replicas: 'db=1' })));

  plan.addStep('recovery', {
    description: `wait until the database has replayed the archive up to ${target} and promoted itself (Job ${PITR_JOBS.recovery})`,
    timeoutSeconds: RECOVERY_WAIT_SECONDS + 300,
    waits: [{ object: jobRef(ns, PITR_JOBS.recovery), for: 'complete' }],
    factsFrom: jobRef(ns, PITR_JOBS.recovery),
  }, (chart) => {
    new ScriptJob(chart, 'PitrRecovery', {
      ...jobBase(config, 'db'),
      partOf: DB_ARCHIVE_PART_OF,
      name: PITR_JOBS.recovery,
      script: 'db-recovery-wait.sh',
      env: [
        { name: 'PGHOST', value: DATABASES.product.host },
        { name: 'PGPORT', value: String(PG_PORT) },
        { name: 'RECOVERY_WAIT_SECONDS', value: String(RECOVERY_WAIT_SECONDS) },
        ...credentialEnv(CREDENTIALS.dbAdmin),
      ],
    });
  });
}

/** start-server: the server and its helpers back to their replicas. */
function addStartServerStep(plan: PlanApp, config: UyuniConfig): void {
  const ns = config.namespace;
  const start = runningDeployments(config).filter((d) => d.name !== DbDeployment.NAME);
  const refs = deploymentRefs(ns, start.map((d) => d.name));
  plan.addStep('start-server', {
    description: `start the server again (${start.map((d) => `${d.name} to ${d.replicas}`).join(', ')})`,
    timeoutSeconds: config.timeouts.serverStartSeconds,
    actions: refs.map((object, i) => ({ type: 'scale' as const, object, replicas: start[i].replicas })),
    waits: [...refs.map((object) => ({ object, for: 'rollout' as const })), { object: record(ns, 'uyuni-db-pitr-server'), for: 'exists' as const }],
  }, (chart) => mark(flowRecord(chart, 'Record', ns, 'uyuni-db-pitr-server', { replicas: start.map((d) => `${d.name}=${d.replicas}`).join(' ') })));
}

export function dbPitrPlan(config: UyuniConfig): PlanApp {
  const a = config.db.archiving;
  if (!a?.enabled || !a.restoreTo) throw new Error('the db-pitr plan needs db.archiving.enabled: true and db.archiving.restoreTo');
  const target = a.restoreTo;
  const ns = config.namespace;
  const plan = new PlanApp({
    name: 'db-pitr',
    description: `Restore the database of Uyuni ${config.fqdn} (namespace ${ns}) to ${target} from the newest base backup before it and the WAL archive ${WAL_ARCHIVE_VOLUME.name}, replacing the database`,
    namespace: ns,
    partOf: DB_ARCHIVE_PART_OF,
    ...configTimeouts(config),
  });
  addPrepareStep(plan, ns, 'uyuni-db-pitr', [PITR_JOBS.restore, PITR_JOBS.recovery], { target, archive: WAL_ARCHIVE_VOLUME.name }, DB_ARCHIVE_PART_OF);
  addStopSteps(plan, config, { why: `and then its database, to restore it to ${target}`, partOf: DB_ARCHIVE_PART_OF });
  addRestoreStep(plan, config, target);
  addRecoverySteps(plan, config, target);
  addStartServerStep(plan, config);
  return plan;
}
