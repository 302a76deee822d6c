/**
 * What the stages of a step share: the run (cluster, reporter, deadline, facts), the step and its
 * objects, its start time, and `fail`, which reports the failure and ends the run.
 */
import type { KubernetesObject, V1Pod } from '@kubernetes/client-node';
import type { ObjectRef, Plan, Step } from '../../../plan/types';
import type { RunApplySet } from '../../core/applyset';
import type { Cluster } from '../../../kube/cluster';
import { StepFailed } from '../../core/errors';
import type { Facts } from '../../core/facts';
import { jobsOf } from '../../core/jobs';
import type { StepLogs } from '../step-logs';
import type { Manifest } from '../../core/manifests';
import type { Connection } from '../next-command';
import type { EventSink, FailedContainer, RunEvent } from '../../core/events';
import type { Records } from '../../safety/record';
import { failureReport } from './failure';

/** What every step of a run shares. */
export interface RunContext {
  readonly cluster: Cluster;
  readonly reporter: EventSink;
  readonly plan: Plan;
  readonly runId: string;
  readonly runDir: string;
  /** The plan directory as the user gave it, and how they reached the cluster: what hints repeat. */
  readonly planDir: string;
  readonly connection: Connection;
  /** Absolute time (ms) of the run's deadline. */
  readonly deadline: number;
  /** Facts gathered so far; steps with `factsFrom` add theirs. */
  readonly facts: Facts;
  /** Steps whose facts are gone (pods and record): step → why; a gate missing a fact names them. */
  readonly lostFacts: Map<string, string>;
  /** Uids of Jobs from finished runs: history, not a half-done run. */
  readonly finished: ReadonlySet<string>;
  /** Steps whose Jobs are deleted and re-created. */
  readonly rerun: readonly string[];
  /** The one-shot flows' records as the run found them (src/runtime/safety/record.ts). */
  readonly records: Records;
  readonly stuckGraceSeconds: number;
  /** The plan's ApplySet: its members get its label, its parent is written before the first of them. */
  readonly applySet: RunApplySet;
  /**
   * The objects as the run found them before its first write (by refString; undefined: absent):
   * an apply is then reported as created, updated or unchanged. Absent: every apply is `applied`.
   */
  readonly before?: ReadonlyMap<string, KubernetesObject | undefined>;
  /** Objects (not Jobs) whose dry run before the first write changed nothing: not applied again. */
  readonly unchanged?: ReadonlySet<string>;
  /**
   * Objects (not Jobs) the dry runs before the first write found changed in a field the server
   * keeps once set (decide/plan.ts `recreate` with `immutable`, approved as destructive): deleted,
   * waited for until gone, then applied. By refString → why.
   */
  readonly recreate?: ReadonlyMap<string, string>;
  /**
   * The workloads this run scaled to 0 (step actions), with the replicas they had: a refusal of a
   * later step's gate or requirement, decided only after the stop, scales them back
   * (steps/actions.ts `startAgain`). Absent: nothing is tracked.
   */
  readonly stopped?: Stopped[];
}

/** A workload a step action stopped, and its replicas before. */
export interface Stopped {
  readonly ref: ObjectRef;
  readonly replicas: number;
  readonly step: string;
}

export interface StepContext extends RunContext {
  readonly step: Step;
  readonly index: number;
  readonly total: number;
  readonly objects: readonly Manifest[];
}

/** The stages of a step, in order (src/runtime/apply/steps/index.ts). */
export type Stage = 'resume' | 'preflight' | 'actions' | 'apply' | 'wait' | 'finish';

export class StepRun {
  readonly started = Date.now();
  /** Where the step is: a failure before `apply` left its Jobs as they were (none made, none re-made). */
  stage: Stage = 'resume';
  /** The step's Jobs, in file order. */
  readonly jobs: readonly Manifest[];

  constructor(readonly c: StepContext) {
    this.jobs = jobsOf(c.objects);
  }

  get cluster(): Cluster {
    return this.c.cluster;
  }

  get step(): Step {
    return this.c.step;
  }

  /** How step events name the step: `[index/total] name`. */
  get tag(): { step: string; index: number; total: number } {
    return { step: this.c.step.name, index: this.c.index, total: this.c.total };
  }

  elapsed(): number {
    return (Date.now() - this.started) / 1000;
  }

  /** The step's own deadline (its timeout from its start). */
  get stepDeadline(): number {
    return this.started + this.c.step.timeoutSeconds * 1000;
  }

  emit(ev: RunEvent): void {
    this.c.reporter.emit(ev);
  }

  /**
   * Reports the failure (each container's exit code, reason and last lines) and ends the run.
   * `rerun`: the steps the next command re-runs, when not this one (facts lost: the step printing them).
   */
  async fail(reason: string, pods: readonly V1Pod[] = [], logs?: StepLogs, saved: FailedContainer[] = [], rerun?: readonly string[]): Promise<never> {
    const report = await failureReport(this.cluster, pods, logs, this.c.runDir, this.c.step.name);
    this.emit({ type: 'step-failed', ...this.tag, elapsedSeconds: this.elapsed(), reason, pods: report.length ? report : saved });
    throw new ReportedStepFailure(this.c.step.name, `step ${this.c.step.name}: ${reason}`, this.stage === 'preflight' || this.stage === 'actions', rerun);
  }
}

/** A step's failure, reported by its `step-failed` event: where in the step it failed. */
export class ReportedStepFailure extends StepFailed {
  /** The step failed before its Jobs were applied (gates, requirements, actions): `--rerun` would not help. */
  constructor(step: string, message: string, readonly beforeJobs: boolean, rerun?: readonly string[]) {
    super(step, message, { rerun });
  }
}
