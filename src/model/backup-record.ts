/**
 * A backup's record of what it was taken with: `record.json` beside its `manifest.json` (listed
 * there with its sha256, so a changed one fails the backup's verification). Written by Job
 * uyuni-backup-record while the server still runs and moved into the backup by uyuni-backup;
 * read by uyuni-restore-check, which decides from it whether a restore may run with this
 * configuration and these images. One program writes and reads it: src/scripts/lib/backup-record.sh
 * (docs/backup.md, "What a backup records"). This is its type, for the plans and the tests.
 *
 * Upstream `mgradm backup create` saves each service's image and its systemd configuration with
 * the server's environment file, and `mgradm backup restore` puts them back (uyuni-tools
 * mgradm/cmd/backup/create/create.go and restore/restore.go @ b6ad4452; the environment file
 * since e19fb763): a restore runs what the backup was taken with unless told otherwise.
 */

/** The version of record.json; another one is refused as damaged. */
export const BACKUP_RECORD_FORMAT = 1;

/** The record's file in a backup directory. */
export const BACKUP_RECORD_FILE = 'record.json';

/** One container of a pod as the API reported it in the pod's status at backup time. */
export interface RecordedContainer {
  readonly name: string;
  /** The image the pod spec names (`registry.opensuse.org/uyuni/server:2026.08`). */
  readonly image: string;
  /** `status.containerStatuses[].imageID`: the digest the node ran (`…/server@sha256:…`); empty when it reported none. */
  readonly imageID: string;
}

export interface RecordedPod {
  readonly pod: string;
  /** Its `app.kubernetes.io/component` label: server, db, hub-xmlrpc, coco, tftp. */
  readonly component: string;
  readonly phase: string;
  readonly containers: readonly RecordedContainer[];
}

export interface BackupRecord {
  readonly format: typeof BACKUP_RECORD_FORMAT;
  /** When the pods were listed (just before the server stopped), UTC. */
  readonly takenAt: string;
  readonly namespace: string;
  readonly pods: readonly RecordedPod[];
  /** The synthesized configuration the backup plan was made from (uyuni.yaml with its defaults). */
  readonly configuration: Readonly<Record<string, unknown>>;
  /**
   * The server's identity as the runtime keeps it (key `identity` of ConfigMap
   * uyuni-cdk-history, sealed: src/runtime/safety/record-store.ts), as found; null when none was recorded.
   */
  readonly planIdentity: Readonly<Record<string, unknown>> | null;
}

/**
 * The configuration's top-level keys a restore does not compare with the recorded ones: what
 * says where the backups are and what to restore, the namespace (a restore may go into another),
 * and a CA rotation (the CA the backup holds is the one restored: the identity check sees a change).
 */
export const RECORD_UNCOMPARED_KEYS = ['backup', 'restore', 'namespace', 'caRotation'] as const;
