/**
 * The one plan verdict (issue 34): what `plan` computes (src/runtime/decide/plan.ts), shows, and
 * saves with `--out` (saved-plan.ts), and what `run` decides with before its first write and
 * `run FILE` compares with the cluster again: per step its objects, requirements, gates and
 * actions; pruning; what run refuses; the server's identity; the objects it takes over from
 * other owners and the credentials it would generate beside data they do not open. The
 * destructive changes are read from it (destructive.ts); the flags that decide it are one
 * `DecisionFlags` value, saved with it. It imports types only (core/events.ts's vocabulary, the
 * flags of safety/identity.ts and prune.ts, safety/ownership.ts's take-overs), and words an unmet
 * requirement and a refusal once for `plan`'s view and `run`'s refusal (`unmetLine`,
 * `refusalLine`): the code that computes the verdict and the code that reads it import this
 * file, never the other way.
 */
import type { IdentityChange, IdentityFlags } from '../safety/identity';
import type { PodSecurityReport } from '../core/pod-security';
import type { ObjectId } from '../core/events';
import type { PlannedTakeover } from '../safety/ownership';
import type { PruneOptions } from './prune';

/**
 * The flags that change what `run` decides (not how it reports or waits): given to `plan` to
 * predict a run with them, to `run`, and saved whole in a saved plan (`run FILE` takes them from
 * the file and refuses them on its command line).
 */
export interface DecisionFlags extends PruneOptions, IdentityFlags {
  /** `--rerun STEP`: the steps whose Jobs are re-created (a finished flow's data step runs again). */
  readonly rerun?: readonly string[];
  /** `--adopt`: take over the objects of other owners (never another plan's namespace) instead of refusing. */
  readonly adopt?: boolean;
}

/** Every decision flag, as the CLI spells it: what `run FILE` refuses on its command line. */
export const DECISION_FLAGS: Readonly<Record<keyof Required<DecisionFlags>, string>> = {
  rerun: '--rerun', prune: '--no-prune', purgeVolumes: '--purge-volumes', adopt: '--adopt',
  allowFqdnChange: '--allow-fqdn-change', allowDowngrade: '--allow-downgrade', allowNewCa: '--allow-new-ca',
};

/** The decision flags of a verb's options, each one written out (the defaults filled in): what a saved plan holds. */
export function decisionFlagsOf(o: DecisionFlags): Required<DecisionFlags> {
  return {
    rerun: [...o.rerun ?? []], prune: o.prune ?? true, purgeVolumes: Boolean(o.purgeVolumes), adopt: Boolean(o.adopt),
    allowFqdnChange: Boolean(o.allowFqdnChange), allowDowngrade: Boolean(o.allowDowngrade), allowNewCa: Boolean(o.allowNewCa),
  };
}

/** The decision flags given on a command line (differing from their defaults), as the CLI spells them. */
export function givenFlags(o: DecisionFlags): string[] {
  const d = decisionFlagsOf(o);
  const defaults = decisionFlagsOf({});
  return (Object.keys(DECISION_FLAGS) as Array<keyof DecisionFlags>)
    .filter((k) => JSON.stringify(d[k]) !== JSON.stringify(defaults[k])).map((k) => DECISION_FLAGS[k]);
}

export type { PlannedTakeover } from '../safety/ownership';


export type ObjectAction =
  | 'create' | 'unchanged' | 'update' | 'relabel' | 'recreate' | 'blocked-immutable' | 'skip-complete' | 'skip' | 'running' | 'failed' | 'missing-kind'
  | 'delete' | 'keep';

export interface PlannedObject {
  readonly object: string;
  /** The object as run's JSON events name it: `{kind, name, namespace}`. */
  readonly id?: ObjectId;
  readonly action: ObjectAction;
  readonly detail?: string;
  /** For `update`: the unified YAML diff from the live object to the dry run's (Secret values masked). */
  readonly diff?: string;
  /** For `recreate`: the Job in the cluster is Complete (its work is done again: a destructive change). */
  readonly finishedJob?: boolean;
  /**
   * For `recreate` of an object that is not a Job: the server refuses the change of a field it
   * keeps once set (its 422 is in `detail`), so `run` deletes it, waits until it is gone and
   * creates it again (a destructive change, asked about).
   */
  readonly immutable?: boolean;
}

/** `made-earlier`: missing now, but an earlier step of this run makes it (its `madeBy`, or an object of its file). */
export type RequirementAction = 'present' | 'generate' | 'missing' | 'made-earlier' | 'not-checked';

export interface PlannedRequirement {
  readonly object: string;
  /** The Secret or ConfigMap as run's JSON events name objects. */
  readonly id?: ObjectId;
  readonly action: RequirementAction;
  readonly detail?: string;
  /** `generate` while claims of the plan hold data already: new credentials the data does not know. */
  readonly besideData?: boolean;
}

/** What a step action would do to its object as it is (steps/actions.ts `actionEffect`). */
export interface ActionEffect {
  /** stop: a scale to 0 of a running workload; scale: to another count; delete; none: the effect holds already. */
  readonly effect: 'stop' | 'scale' | 'delete' | 'none';
  /** `scale to 0 Deployment/uyuni (uyuni)`. */
  readonly action: string;
  readonly object: string;
  readonly why: string;
}

/** A step action as `run` would do it: `effect` none when it holds already (then it is not done); `id` its object. */
export type PlannedAction = ActionEffect & { readonly id?: ObjectId };

export interface PlannedStep {
  readonly name: string;
  readonly description: string;
  readonly timeoutSeconds: number;
  /** Why `run` would skip the whole step (its Jobs are Complete with the same spec, or its flow did it). */
  readonly skipped?: string;
  /** A one-shot data step of this flow (docs/plan-format.md `oneShot`). */
  readonly oneShot?: string;
  /** What data the step's Jobs delete or overwrite on every run (plan Step `destroysData`). */
  readonly destroysData?: string;
  /** `--rerun` of a data step its finished flow did: why it runs again. */
  readonly rerunDataStep?: string;
  readonly objects: PlannedObject[];
  readonly waits: string[];
  readonly gates: string[];
  /** Images its Deployments take from facts (image-facts.ts): `container uyuni of Deployment/uyuni (uyuni): <image> → <image>`. @default none */
  readonly images?: string[];
  readonly requires: PlannedRequirement[];
  readonly actions: PlannedAction[];
}

export interface PlanSummary {
  readonly create: number;
  readonly update: number;
  /**
   * Objects whose apply would change only our bookkeeping labels and annotations (after a
   * migration, the install plan's `uyuni-cdk.io/plan` on every object): written by `run`
   * (`relabelled`), but not drift for `--detailed-exitcode` unless `--bookkeeping-drift`.
   */
  readonly relabel: number;
  readonly delete: number;
  /** Scale-downs of running workloads. */
  readonly stop: number;
  readonly unchanged: number;
}

/**
 * A requirement of the whole plan that the cluster does not meet and no earlier step of the run
 * makes, or a gate decided now that refuses: `run` refuses them all at once, before its first
 * write (docs/runtime.md, "Preflight, interruptions and the next command").
 */
export interface Unmet {
  /** The first step that needs it. */
  readonly step: string;
  /** Every step that needs it, when more than one does (the object is listed once). */
  readonly steps?: readonly string[];
  /** `Secret uyuni/uyuni-migration-key`; absent for a gate. */
  readonly object?: string;
  /** The same as run's JSON events name objects. */
  readonly id?: ObjectId;
  /** What is wrong, with the plan's message. */
  readonly reason: string;
  /** The command that fixes it, when the plan's message does not carry one. */
  readonly fix?: string;
  /** Gates that cannot be decided because facts are lost: the steps that print them again. */
  readonly rerun?: readonly string[];
}

/** A credential `run` would generate although the data made with the old one is kept. */
export interface LostCredential {
  readonly secret: string;
  readonly namespace: string;
  /** The Bound claims of the plan's set: the data. */
  readonly claims: readonly string[];
  /** The finished run recorded in the namespace, and when. */
  readonly finishedRun: string;
  /** What to tell the user: what is wrong and how to restore. */
  readonly message: string;
}

export interface PlanResult {
  readonly steps: PlannedStep[];
  /** Every unmet requirement and refusing gate of the plan, in step order (not only the first). */
  readonly unmet: Unmet[];
  /**
   * Requirements are unmet and the plan's namespace does not exist yet: their commands need it
   * first (`kubectl create namespace`; run takes over a namespace made by hand, ownership.ts).
   */
  readonly namespaceFirst?: string;
  /** Members of the plan's ApplySet that the plan no longer has: delete, or keep (and why). */
  readonly prune: PlannedObject[];
  readonly summary: PlanSummary;
  /** Where `run` would stop, and why (a refused Job, a missing requirement or kind, a gate). */
  readonly stopsAt?: { readonly step: string; readonly reason: string };
  /** What `run` refuses before its first write: a finished flow's data step, an identity change without its flag. */
  readonly refusals: string[];
  /** What the plan changes of the server's recorded identity (refused, or allowed by its flag). */
  readonly identity: IdentityChange[];
  /** How the guarded records were read when not plainly (from their copy on the namespace: record-store.ts). */
  readonly recordNotes?: string[];
  /** The workloads PodSecurity admission refuses or warns about in the namespace (pod-security.ts). */
  readonly podSecurity?: PodSecurityReport;
  /** Objects of other owners the plan writes: taken over or refused (ownership.ts). */
  readonly takeovers: PlannedTakeover[];
  /** Credentials run would generate beside kept data made with the lost ones: run refuses (requirements.ts `lostCredentials`). */
  readonly lostCredentials: LostCredential[];
  /**
   * The namespace's lock held by another live run (lock.ts): run refuses while it holds. Read by
   * `plan` only (run holds the lock itself); never compared by `run FILE`.
   */
  readonly locked?: string;
}

/** One unmet requirement or gate as one line: what, in which step, why, and how to fix it. */
export function unmetLine(u: Unmet): string {
  const steps = u.steps && u.steps.length > 1 ? `steps ${u.steps.join(', ')}` : `step ${u.step}`;
  const what = u.object ? `${u.object} (${steps}) ${u.reason}` : `step ${u.step}: ${u.reason}`;
  return `  - ${what}${u.fix ? `; make it with: ${u.fix}` : ''}`;
}

/** A refusal as a bullet: its first line, then each further line (a list) indented under it. */
export function refusalLine(r: string): string {
  return `  - ${r.replace(/\n/g, '\n    ')}`;
}
