/**
 * Resume: what to do with a step Job that may already exist in the cluster, from its status and
 * its spec-hash annotation (a Job's pod template is immutable, so a changed one cannot be applied).
 */
import type { V1Job } from '@kubernetes/client-node';
import type { Cluster } from '../../kube/cluster';
import type { Step } from '../../plan/types';
import { Manifest, refOf, specHash } from '../core/manifests';
import { sameSpecHash } from '../../plan/spec-hash';
import { ANNOTATIONS, LABELS } from '../../plan/types';
import { jobPhase } from '../readiness/batch_v1_job';

export type JobDecision =
  /** Not there: create it. */
  | { readonly action: 'create' }
  /** Complete with the same spec: nothing to do. */
  | { readonly action: 'skip' }
  /** Running with the same spec (a previous run was interrupted): wait for it, do not re-create. */
  | { readonly action: 'attach' }
  /** Delete (propagationPolicy Background) and create again: `--rerun <step>`. */
  | { readonly action: 'recreate'; readonly why: string }
  /** Stop the run: it failed before, or its spec changed without `--rerun`. */
  | { readonly action: 'refuse'; readonly why: string; readonly failed: boolean };

/**
 * `finished`: uids of Jobs that belong to runs that finished (src/runtime/safety/history.ts). A changed
 * Job among them is history, re-created for this run; a changed Job of an unfinished run is refused.
 */
export function decideJob(
  existing: V1Job | undefined, wantedHash: string, rerun: boolean, step: string, finished: ReadonlySet<string> = new Set(),
): JobDecision {
  if (!existing) return { action: 'create' };
  const name = existing.metadata?.name;
  const have = existing.metadata?.annotations?.[ANNOTATIONS.specHash];
  const phase = jobPhase(existing);
  if (existing.metadata?.deletionTimestamp) return { action: 'recreate', why: `Job ${name} is being deleted` };
  if (!sameSpecHash(have, wantedHash)) {
    if (rerun) return { action: 'recreate', why: `--rerun ${step}: Job ${name} changed (spec hash ${short(have)} → ${short(wantedHash)})` };
    if (phase === 'complete' && finished.has(existing.metadata?.uid ?? '')) {
      return { action: 'recreate', why: `Job ${name} is from a run that finished (${existing.metadata?.labels?.[LABELS.run] ?? 'unknown run'}) and this plan changed it` };
    }
    return {
      action: 'refuse',
      failed: false,
      why: `Job ${name} in the cluster was made from a different spec (hash ${short(have)}, plan has ${short(wantedHash)}); `
        + `a Job's pod template is immutable: run again with --rerun ${step} to delete and re-create it`,
    };
  }
  if (rerun) return { action: 'recreate', why: `--rerun ${step}: Job ${name} was ${phase}` };
  if (phase === 'complete') return { action: 'skip' };
  if (phase === 'running') return { action: 'attach' };
  return { action: 'refuse', failed: true, why: `Job ${name} failed in an earlier run; fix the cause, then run again with --rerun ${step}` };
}

function short(h: string | undefined): string {
  return h ? h.slice(0, 12) : '(none)';
}

export interface JobState {
  readonly decision: JobDecision;
  /** The Job as the cluster has it, when it has it. */
  readonly existing: V1Job | undefined;
}

/** Per Job name. */
export type Decisions = ReadonlyMap<string, JobState>;

export interface Resumed {
  readonly decisions: Decisions;
  /** The whole step was done already: nothing more to do. */
  readonly skipped: boolean;
}

/** What the resume check decides for a step's Jobs: `run` acts on it, `plan` shows it (one decision for both). */
export interface JobsOfStep {
  readonly cluster: Cluster;
  readonly step: Step;
  /** The step's Jobs, in file order. */
  readonly jobs: readonly Manifest[];
  /** Steps given to `--rerun`. */
  readonly rerun: readonly string[];
  /** Uids of Jobs of finished runs (src/runtime/safety/history.ts). */
  readonly finished: ReadonlySet<string>;
}

export async function decideJobs(q: JobsOfStep): Promise<Resumed> {
  const rerun = q.rerun.includes(q.step.name);
  const decisions = new Map<string, JobState>();
  // A Job the step's own actions delete first (the stop steps' waits) runs anew on every run:
  // one left Complete by an earlier run never makes the step skip its actions.
  const deletedFirst = (name: string) => q.step.actions.some((a) => a.type === 'delete' && a.object.kind === 'Job' && a.object.name === name);
  for (const job of q.jobs) {
    const existing = deletedFirst(job.metadata.name) ? undefined : await q.cluster.get<V1Job>(refOf(job));
    decisions.set(job.metadata.name, { decision: decideJob(existing, specHash(job), rerun, q.step.name, q.finished), existing });
  }
  const skipped = q.jobs.length > 0 && [...decisions.values()].every((d) => d.decision.action === 'skip');
  return { decisions, skipped };
}
