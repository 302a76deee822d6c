/**
 * What `status` shows of continuous archiving (db.archiving): the last line the db pod's
 * container archive-status printed (src/scripts/db-archive-status.sh: PostgreSQL's
 * pg_stat_archiver and the archive claim's use), read through the API as a log (no exec), with
 * the newest archived segment's age at the time of reading.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { WAL_ARCHIVE, type Plan } from '../../plan/types';
import type { Cluster } from '../../kube/cluster';
import type { StepView } from '../core/plan-dir';
import type { ArchiveStatus } from '../core/status-result';

/** The db pods (Deployment db). */
const DB_PODS = 'app.kubernetes.io/part-of=uyuni,app.kubernetes.io/component=db';

/** Archiving is configured in this plan when it makes the archive claim. */
export function plansArchiving(plan: Plan, viewOf: (step: string) => StepView): boolean {
  return plan.steps.some((s) => viewOf(s.name).objects.some((o) => o.kind === 'PersistentVolumeClaim' && o.name === WAL_ARCHIVE.claim));
}

/** One line of db-archive-status.sh; undefined when it is not one. */
export function parseArchiveLine(line: string, now: Date): Omit<ArchiveStatus, 'pod'> | undefined {
  const m = /^archive-status (.*)$/.exec(line.trim());
  if (!m) return undefined;
  const [fields, error] = m[1].split(/(?:^| )error=/, 2) as [string, string | undefined];
  const kv = Object.fromEntries(fields.split(' ').filter((w) => w.includes('=')).map((w) => [w.slice(0, w.indexOf('=')), w.slice(w.indexOf('=') + 1)]));
  const num = (k: string) => (kv[k] !== undefined && /^\d+$/.test(kv[k]) ? Number(kv[k]) : undefined);
  const text = (k: string) => (kv[k] ? kv[k] : undefined);
  const time = text('last_time');
  const at = time ? Date.parse(time) : NaN;
  return Object.fromEntries(Object.entries({
    checked: text('checked'),
    lastArchivedWal: text('last_wal'),
    lastArchivedTime: time,
    ageSeconds: Number.isNaN(at) ? undefined : Math.max(0, Math.round((now.getTime() - at) / 1000)),
    failedCount: num('failed_count'),
    lastFailedWal: text('last_failed_wal'),
    usedBytes: num('used_kib') === undefined ? undefined : num('used_kib')! * 1024,
    sizeBytes: num('size_kib') === undefined ? undefined : num('size_kib')! * 1024,
    error: error?.trim() || undefined,
  }).filter(([, v]) => v !== undefined));
}

/** The archiving's state from the cluster, or undefined when the plan does not archive. */
export async function readArchiveStatus(cluster: Cluster, plan: Plan, viewOf: (step: string) => StepView, now: () => Date = () => new Date()): Promise<ArchiveStatus | undefined> {
  if (!plansArchiving(plan, viewOf)) return undefined;
  const pods = (await cluster.list<V1Pod>({ apiVersion: 'v1', kind: 'Pod', namespace: plan.namespace, labelSelector: DB_PODS })).items
    .filter((p) => !p.metadata?.deletionTimestamp && (p.spec?.containers ?? []).some((c) => c.name === WAL_ARCHIVE.statusContainer));
  const pod = pods.find((p) => p.status?.phase === 'Running') ?? pods[0];
  if (!pod) return { error: `no db pod runs container ${WAL_ARCHIVE.statusContainer} (the database is stopped, or not yet started with db.archiving)` };
  const name = pod.metadata?.name ?? '';
  let log: string;
  try {
    log = await cluster.readLog(plan.namespace, name, WAL_ARCHIVE.statusContainer, 1);
  } catch (e) {
    return { pod: name, error: `the log of container ${WAL_ARCHIVE.statusContainer} cannot be read: ${(e as Error).message}` };
  }
  const line = log.trim().split('\n').pop() ?? '';
  const parsed = parseArchiveLine(line, now());
  return parsed ? { pod: name, ...parsed } : { pod: name, error: `container ${WAL_ARCHIVE.statusContainer} has reported nothing yet` };
}
