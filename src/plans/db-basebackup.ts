import type { UyuniConfig } from '../config/schema';
import { ScriptJob } from '../constructs/script-job';
import { CREDENTIALS, credentialEnv } from '../model/credentials';
import { DATABASES, PG_PORT, POSTGRES_UID, WAL_ARCHIVE_DIR } from '../model/db';
import type { PartOf } from '../model/labels';
import { WAL_ARCHIVE_VOLUME } from '../model/volumes';
import type { ObjectRef } from '../plan/types';
import { addPrepareStep } from './backup';
import { jobBase, preferNodeOf } from './db-steps';
import { configTimeouts, PlanApp } from './plan-app';

/**
 * Plan db-basebackup (db.archiving; docs/backup.md, "Continuous archiving"): upstream's `mgradm
 * backup db rebase` (uyuni-tools mgradm/cmd/backup/db/rebase.go @ 2f9b128d). While the server
 * runs: prepare (the Job of the last run goes) → Job uyuni-db-basebackup
 * (src/scripts/db-basebackup.sh): pg_basebackup from Service db into the WAL archive claim, then
 * the older base backups and the WAL segments older than the new one are removed. A point-in-time
 * restore starts from the newest base backup and replays the archive.
 */

export const DB_ARCHIVE_PART_OF: PartOf = 'uyuni-db-archive';
export const BASEBACKUP_JOB = 'uyuni-db-basebackup';

export function dbBaseBackupPlan(config: UyuniConfig): PlanApp {
  if (!config.db.archiving?.enabled) throw new Error('the db-basebackup plan needs db.archiving.enabled: true');
  const ns = config.namespace;
  const plan = new PlanApp({
    name: 'db-basebackup',
    description: `A new base backup of the database of Uyuni ${config.fqdn} (namespace ${ns}) into the WAL archive ${WAL_ARCHIVE_VOLUME.name}, `
      + 'removing the older base backups and the WAL they alone needed',
    namespace: ns,
    partOf: DB_ARCHIVE_PART_OF,
    ...configTimeouts(config),
  });
  addPrepareStep(plan, ns, 'uyuni-db-basebackup', [BASEBACKUP_JOB], { archive: WAL_ARCHIVE_VOLUME.name }, DB_ARCHIVE_PART_OF);
  const job: ObjectRef = { apiVersion: 'batch/v1', kind: 'Job', name: BASEBACKUP_JOB, namespace: ns };
  plan.addStep('basebackup', {
    description: `pg_basebackup of the running database into ${WAL_ARCHIVE_VOLUME.name}/base/<time>; then the older base backups `
      + `and the archived WAL older than the new backup are deleted (Job ${BASEBACKUP_JOB})`,
    waits: [{ object: job, for: 'complete' }],
    factsFrom: job,
    destroysData: `the base backups in ${WAL_ARCHIVE_VOLUME.name} older than the new one and the archived WAL only they need (a restore to a time before the new backup is no longer possible)`,
  }, (chart) => {
    const j = new ScriptJob(chart, 'BaseBackup', {
      ...jobBase(config, 'db'),
      partOf: DB_ARCHIVE_PART_OF,
      name: BASEBACKUP_JOB,
      script: 'db-basebackup.sh',
      env: [
        { name: 'PGHOST', value: DATABASES.product.host },
        { name: 'PGPORT', value: String(PG_PORT) },
        { name: 'ARCHIVE_DIR', value: WAL_ARCHIVE_DIR },
        ...credentialEnv(CREDENTIALS.dbAdmin),
      ],
      // PostgreSQL's user owns the archive (init container archiving made it so).
      securityContext: { runAsUser: POSTGRES_UID, runAsGroup: POSTGRES_UID, runAsNonRoot: true },
      volumes: [{ name: WAL_ARCHIVE_VOLUME.name, persistentVolumeClaim: { claimName: WAL_ARCHIVE_VOLUME.name } }],
      volumeMounts: [{ name: WAL_ARCHIVE_VOLUME.name, mountPath: WAL_ARCHIVE_DIR }],
    });
    // The archive claim is the db pod's (ReadWriteOnce): beside it.
    preferNodeOf(j.job, 'db');
  });
  return plan;
}
