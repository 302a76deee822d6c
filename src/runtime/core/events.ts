/**
 * The run's event vocabulary: what the engine (run.ts, safeguards.ts, confirm.ts, the stages in
 * steps/) tells whoever watches it, and the `EventSink` it tells it to. The engine knows only
 * this file; the terminal, plain and JSON renderings implement the sink (report/reporter.ts
 * `Reporter`), as kapp's engine talks to its `UI` interface (pkg/kapp/clusterapply/ui.go) and
 * Terraform's to its `Hook` (internal/terraform/hook.go), never to their views. It imports
 * no other file of the runtime but the pod progress of readiness/v1_pod.ts, so anything may
 * import it without closing a cycle (test/architecture/cycles.test.ts).
 * Secret values never reach an event: events carry names and keys only.
 */
import type { PlanNotes } from '../../plan/types';
import type { PodSecurityReport } from './pod-security';
import type { PodProgress } from '../readiness/v1_pod';

/** Where the engine sends its events, in order: a Reporter (report/reporter.ts), or a test's list. */
export interface EventSink {
  emit(event: RunEvent): void;
}

/**
 * The sink of a whole run (run.ts): it also appends every event to the run's `events.jsonl` once
 * the run has its directory, counts what the events say the run changed (the closing line), and
 * is closed when the run ends.
 */
export interface RunSink extends EventSink {
  recordTo(file: string): void;
  /** What the run changed so far, counted from its events (`countEvent`). */
  readonly tally: RunTally;
  close(): void;
}

/**
 * An object as events name it for machines: `{kind, name, namespace}` (namespace absent for a
 * cluster-scoped kind), printed as `Deployment/uyuni (uyuni)` in text.
 */
export interface ObjectId {
  readonly kind: string;
  readonly name: string;
  readonly namespace?: string;
}

/** The id of an object reference (its apiVersion left out: a kind names it for people). */
export function objectId(r: { readonly kind: string; readonly name: string; readonly namespace?: string }): ObjectId {
  return { kind: r.kind, name: r.name, ...(r.namespace ? { namespace: r.namespace } : {}) };
}

/** `Deployment/uyuni (uyuni)`, as refString writes it (src/kube/cluster.ts). */
export function idText(id: ObjectId): string {
  return `${id.kind}/${id.name}${id.namespace ? ` (${id.namespace})` : ''}`;
}

/**
 * What an apply did (steps/apply.ts): created, updated, relabelled (only our bookkeeping labels
 * and annotations changed), unchanged (only the run label and what the server sets differ),
 * re-created (a Job); applied: the run did not read the object before.
 */
export type ApplyResult = 'created' | 'updated' | 'relabelled' | 'unchanged' | 're-created' | 'applied'
  | 'already running with the same spec: attached' | 'already Complete with the same spec: skipped';

/** What a run changed, as its closing line counts it (terraform's `Apply complete! Resources: …`). */
export interface RunTally {
  /** Objects and credentials created (Jobs are counted as run). */
  created: number;
  /** Objects updated, credentials completed with keys. */
  updated: number;
  /** Objects whose apply changed only our bookkeeping labels and annotations (a real write, not a change of the user's fields). */
  relabelled: number;
  /** Objects deleted: delete actions and pruning. */
  deleted: number;
  /** Scale-downs to 0 of running workloads. */
  stopped: number;
  /** Scales to another count. */
  scaled: number;
  /** Jobs that ran in this run: created, re-created, or attached to while running. */
  jobsRun: number;
  /** Objects whose apply changed nothing but the run label. */
  unchanged: number;
  /** Objects applied that the run did not read before (neither created nor compared). */
  applied: number;
}

/** A pod the step waits on (a Job's, a rollout's): phase, and each container's started, ready, restarts. */
export interface WaitingPod extends PodProgress {
  /** The waited-on object it belongs to: `{kind: 'Deployment', name: 'uyuni', namespace: 'uyuni'}`. */
  readonly owner: ObjectId;
}

/**
 * A copy's overall progress as a step's Job prints it (`@progress …` lines, src/runtime/apply/step-logs.ts;
 * data-sync.sh: rsync's --info=progress2 per claim).
 */
export interface CopyProgress {
  /** `3/16`: the third of the Job's 16 claims. */
  readonly claim?: string;
  /** What is copied: the claim's mount path, a distribution's place. */
  readonly path: string;
  readonly bytes: number;
  readonly percent: number;
  /** As the copy reports it: `12.34MB/s`. */
  readonly rate: string;
  /** Time left, `h:mm:ss`, while a file is on its way. */
  readonly eta?: string;
  /** The copy of this path is over. */
  readonly done: boolean;
}

/** The kinds of destructive change `run` shows and asks about: one rule each in destructive.ts. */
export type DestructiveKind =
  /** An object deleted by a step action (`cleanup`) or by pruning. */
  | 'delete'
  /** A running workload scaled to 0. */
  | 'scale-down'
  /** A one-shot data step that will run: the data sync stops the old host and copies over the claims; a database upgrade; … */
  | 'data-step'
  /** A Complete Job deleted and created again (its work is done again; a failed one is not destructive). */
  | 'recreate-job'
  /**
   * An object (not a Job) deleted and created again because a field the server keeps once set
   * changed (a Deployment's selector, a Service's clusterIP): its pods go with it.
   */
  | 'recreate'
  /** A credential generated while claims of the plan already hold data that knows another. */
  | 'new-credentials'
  /** A change of the server's recorded identity that its flag allows (fqdn, older images, a new CA). */
  | 'identity'
  /** An object of another tool taken over by an upgrade of the install it made (the upstream chart, mgradm). */
  | 'adopt';

export interface DestructiveChange {
  readonly kind: DestructiveKind;
  /** The step, or `(run)` for pruning and identity. */
  readonly step: string;
  readonly object: string;
  readonly why: string;
}

/** Running, every container running, one still in its startup probe: a server setting itself up. */
export function inStartupProbe(p: WaitingPod): boolean {
  const main = p.containers.filter((c) => !c.init);
  return p.phase === 'Running' && main.every((c) => c.state === 'running') && main.some((c) => c.startupProbe && !c.started);
}

export type RunEvent =
  | { type: 'run-start'; plan: string; runId: string; runDir: string; steps: number; server: string; context?: string }
  /** Before the first write: the plan's destructive changes (src/runtime/decide/destructive.ts)... */
  | { type: 'destructive'; changes: DestructiveChange[] }
  /** ...and what let them go ahead (`--yes`, the answer on the terminal, a saved plan), or not. */
  | { type: 'approval'; result: Approval }
  | { type: 'step-start'; step: string; index: number; total: number; description: string }
  | { type: 'step-skip'; step: string; index: number; total: number; reason: string }
  | { type: 'gate'; step: string; ok: boolean; detail: string }
  | { type: 'requirement'; step: string; kind: string; name: string; namespace: string; result: 'present' | 'generated' | 'completed-keys'; keys: string[] }
  | { type: 'action'; step: string; action: string; object: ObjectId; result: string }
  | { type: 'apply'; step: string; object: ObjectId; result: ApplyResult }
  | { type: 'waiting'; step: string; index: number; total: number; elapsedSeconds: number; blockers: string[]; pods?: WaitingPod[] }
  | { type: 'log'; step: string; pod: string; container: string; line: string }
  | ({ type: 'copy-progress'; step: string; pod: string } & CopyProgress)
  | { type: 'facts'; step: string; facts: Record<string, string> }
  /** Before the first write: workloads PodSecurity admission refuses or warns about in the namespace. */
  | { type: 'pod-security'; report: PodSecurityReport }
  /** The API server stopped answering (connections refused: a restart), or answers again. */
  | { type: 'api'; answers: boolean; detail: string }
  | { type: 'step-done'; step: string; index: number; total: number; elapsedSeconds: number }
  | {
    type: 'step-failed'; step: string; index: number; total: number; elapsedSeconds: number; reason: string; pods: FailedContainer[];
    /** Out of time while the server is still starting (its startup probe): not a failure, the run exits 4. */
    stillStarting?: boolean;
  }
  | {
    type: 'run-done'; status: 'done' | 'failed' | 'interrupted'; exitCode: number; elapsedSeconds: number; message?: string;
    /** `interrupted`: the signal that ended the run (SIGINT, SIGTERM, SIGHUP). */
    signal?: string;
    /** `interrupted`: what goes on in the cluster without the run, each with the command that stops it. */
    stillRunning?: Array<{ object: ObjectId; stop: string }>;
    /** A failed run that got as far as its run directory: where its logs and events are. */
    runDir?: string;
    /** A failed step: the command that continues the run (`--rerun <step>` when it has Jobs). */
    next?: string;
    /** The run timed out while the server was still starting (its startup probe): nothing to fix, `next` waits on. */
    stillStarting?: boolean;
    /** What the run changed (the Reporter counts it from the events before; given: these counts). */
    resources?: RunTally;
    /**
     * A run that resumed a series (src/runtime/core/run-dirs.ts): how many attempts it has now, and
     * what they changed together, this one included (the closing line counts the series).
     */
    series?: { attempts: number; resources: RunTally };
  }
  /** After a successful run of a plan with notes (install, migrate): its notes, and the command that prints the admin password. */
  | { type: 'notes'; notes: PlanNotes; adminPasswordCommand?: string }
  /** Once a step, when a pod it waits on is in its startup probe: which, and the command that follows its logs. */
  | { type: 'starting'; step: string; pods: string[]; logs: string };

export interface FailedContainer {
  pod: string;
  container: string;
  exitCode?: number;
  reason?: string;
  message?: string;
  lastLines: string[];
}

export type Approval = 'yes' | 'answered yes' | 'saved plan' | 'refused' | 'declined';

/** What a run's events (an attempt's events.jsonl) say it changed, as its closing line counted it. */
export function tallyOf(events: readonly RunEvent[]): RunTally {
  const t = emptyTally();
  for (const ev of events) countEvent(t, ev);
  return t;
}

/** Two tallies added. */
export function addTallies(a: RunTally, b: RunTally): RunTally {
  return Object.fromEntries(Object.keys(a).map((k) => [k, a[k as keyof RunTally] + b[k as keyof RunTally]])) as unknown as RunTally;
}

/** A tally of nothing yet. */
export const emptyTally = (): RunTally => ({ created: 0, updated: 0, relabelled: 0, deleted: 0, stopped: 0, scaled: 0, jobsRun: 0, unchanged: 0, applied: 0 });

/** Counts one event into the run's tally. */
export function countEvent(t: RunTally, ev: RunEvent): void {
  if (ev.type === 'apply') {
    const job = ev.object.kind === 'Job';
    if (job && (ev.result === 'created' || ev.result === 're-created' || ev.result.endsWith('attached'))) t.jobsRun++;
    else if (ev.result === 'created') t.created++;
    else if (ev.result === 'updated') t.updated++;
    else if (ev.result === 'relabelled') t.relabelled++;
    else if (ev.result === 'unchanged') t.unchanged++;
    else if (ev.result === 'applied') t.applied++;
  } else if (ev.type === 'requirement') {
    if (ev.result === 'generated') t.created++;
    else if (ev.result === 'completed-keys') t.updated++;
  } else if (ev.type === 'action') {
    // steps/actions.ts: `scale to N` done, `delete` deleting; run.ts: `prune …` deleted
    if (ev.action === 'scale to 0' && ev.result === 'done') t.stopped++;
    else if (ev.action.startsWith('scale to ') && ev.result === 'done') t.scaled++;
    else if ((ev.action === 'delete' && ev.result === 'deleting') || (ev.action.startsWith('prune') && ev.result === 'deleted')) t.deleted++;
  }
}

