/**
 * What `status` finds (src/runtime/verbs/status.ts, archive-status.ts) and its views show
 * (src/runtime/report/status-view.ts): data only, so that the views need not import the verb.
 */

export type StepState = 'done' | 'not-applied' | 'partly-applied' | 'waiting' | 'running' | 'failed' | 'changed';

export interface StepStatus {
  readonly name: string;
  readonly state: StepState;
  readonly detail: string;
  /** For a step with `factsFrom` whose Job completed: the facts it printed. */
  readonly facts?: Record<string, string>;
}

export interface ArchiveStatus {
  /** The db pod read, when one runs the container. */
  readonly pod?: string;
  /** When the container last looked (UTC, ISO 8601). */
  readonly checked?: string;
  /** pg_stat_archiver.last_archived_wal: the newest archived segment. */
  readonly lastArchivedWal?: string;
  /** pg_stat_archiver.last_archived_time (UTC, ISO 8601). */
  readonly lastArchivedTime?: string;
  /** Seconds from lastArchivedTime to this reading. */
  readonly ageSeconds?: number;
  /** pg_stat_archiver.failed_count: archive_command's failures since the statistics were reset. */
  readonly failedCount?: number;
  readonly lastFailedWal?: string;
  /** The archive claim's file system (df). */
  readonly usedBytes?: number;
  readonly sizeBytes?: number;
  /** Why there is no reading (no db pod, its container not started, the database not answering). */
  readonly error?: string;
}
