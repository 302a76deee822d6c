/**
 * Stage 1, resume: what to do with each of the step's Jobs that may already exist (resume.ts
 * decides). A refused Job fails the step before anything else happens; when every Job is
 * Complete with the same spec, the step is skipped (its facts are read again: its pods', else the record's).
 */
import type { V1Job } from '@kubernetes/client-node';
import { podsOfJob } from '../../core/jobs';
import type { Step } from '../../../plan/types';
import type { Cluster } from '../../../kube/cluster';
import { Manifest, refOf, specHash } from '../../core/manifests';
import { decideJob, JobDecision } from '../../decide/job-decision';
import type { StepRun } from './context';
import { savedLogsOfJob } from './failure';
import { gatherFacts } from './step-facts';

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
  /** Uids of Jobs of finished runs (src/runtime/history.ts). */
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

export async function resumeStage(s: StepRun): Promise<Resumed> {
  const { decisions, skipped } = await decideJobs({ cluster: s.cluster, step: s.step, jobs: s.jobs, rerun: s.c.rerun, finished: s.c.finished });
  for (const [name, { decision, existing }] of decisions) {
    if (decision.action !== 'refuse') continue;
    s.emit({ type: 'step-start', ...s.tag, description: s.step.description });
    await s.fail(decision.why, decision.failed && existing ? await podsOfJob(s.cluster, existing) : [], undefined,
      decision.failed ? savedLogsOfJob(s.c.runDir, s.step.name, name) : []);
  }
  if (skipped) {
    const names = s.jobs.map((j) => j.metadata.name);
    s.emit({ type: 'step-skip', ...s.tag, reason: `Job${names.length > 1 ? 's' : ''} ${names.join(', ')} already Complete with the same spec` });
    if (s.step.factsFrom) await gatherFacts(s, decisions.get(s.step.factsFrom.name)?.existing);
  }
  return { decisions, skipped };
}
