/**
 * `plan`: what `run` would do, per step and object, without changing anything. It decides with
 * `run`'s own functions: the resume check of the step's Jobs with the finished-runs record
 * (steps/resume.ts `decideJobs`), the requirements, the gates from the facts in the cluster,
 * and pruning (prune.ts), the one-shot flows' record (oneshot.ts), the effect of each action
 * (steps/actions.ts `actionEffect`) and the server's identity (identity.ts). An object that
 * exists is compared with a server-side apply dry run; an `update` carries the field diff
 * (field-diff.ts). `run` computes the same before its first write: what it refuses, and the
 * destructive changes it asks about (destructive.ts).
 */
import type { KubernetesObject, V1ConfigMap, V1Job, V1Secret } from '@kubernetes/client-node';
import type { Gate, Plan, Requirement, Step } from '../plan/types';
import { LABELS } from '../plan/types';
import { applySetOf, readParent } from './applyset';
import { Cluster, refString } from './client';
import { ApiError, MissingKind, StepFailed } from './errors';
import { Facts, readFacts } from './facts';
import { fieldDiff } from './field-diff';
import { evaluateGate } from './gates';
import { finishedJobUids } from './history';
import { IdentityChange, IdentityFlags, identityChanges } from './identity';
import { jobsOf } from './jobs';
import { Manifest, refOf, sameRef, stampForApply } from './manifests';
import { decideOneShot, finishedPlanRefusal, OneShotDecision } from './oneshot';
import { pruneCandidates, PruneOptions } from './prune';
import { caFingerprint, oneShotHash, readRecords, Records } from './record';
import { checkRequirement, fixCommand } from './secrets';
import { jobPhase } from './readiness/batch_v1_job';
import type { JobDecision } from './resume';
import { actionEffect, ActionEffect } from './steps/actions';
import { unmetLine } from './steps/preflight';
import { decideJobs, JobState } from './steps/resume';

export type ObjectAction =
  | 'create' | 'unchanged' | 'update' | 'recreate' | 'blocked-immutable' | 'skip-complete' | 'skip' | 'running' | 'failed' | 'missing-kind'
  | 'delete' | 'keep';

export interface PlannedObject {
  readonly object: string;
  readonly action: ObjectAction;
  readonly detail?: string;
  /** For `update`: the unified YAML diff from the live object to the dry run's (Secret values masked). */
  readonly diff?: string;
  /** For `recreate`: the Job in the cluster is Complete (its work is done again: a destructive change). */
  readonly finishedJob?: boolean;
}

/** `made-earlier`: missing now, but an earlier step of this run makes it (its `madeBy`, or an object of its file). */
export type RequirementAction = 'present' | 'generate' | 'missing' | 'made-earlier' | 'not-checked';

export interface PlannedRequirement {
  readonly object: string;
  readonly action: RequirementAction;
  readonly detail?: string;
  /** `generate` while claims of the plan hold data already: new credentials the data does not know. */
  readonly besideData?: boolean;
}

/** A step action as `run` would do it: `effect` none when it holds already (then it is not done). */
export type PlannedAction = ActionEffect;

export interface PlannedStep {
  readonly name: string;
  readonly description: string;
  readonly timeoutSeconds: number;
  /** Why `run` would skip the whole step (its Jobs are Complete with the same spec, or its flow did it). */
  readonly skipped?: string;
  /** A one-shot data step of this flow (docs/plan-format.md `oneShot`). */
  readonly oneShot?: string;
  /** `--rerun` of a data step its finished flow did: why it runs again. */
  readonly rerunDataStep?: string;
  readonly objects: PlannedObject[];
  readonly waits: string[];
  readonly gates: string[];
  readonly requires: PlannedRequirement[];
  readonly actions: PlannedAction[];
}

export interface PlanSummary {
  readonly create: number;
  readonly update: number;
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
  readonly step: string;
  /** `Secret uyuni/uyuni-migration-key`; absent for a gate. */
  readonly object?: string;
  /** What is wrong, with the plan's message. */
  readonly reason: string;
  /** The command that fixes it, when the plan's message does not carry one. */
  readonly fix?: string;
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
}

export interface PlanOptions extends PruneOptions, IdentityFlags {
  /** Steps given to `run --rerun`. */
  readonly rerun?: readonly string[];
  /**
   * Compare existing objects with a server-side apply dry run (`update` with its diff, or
   * `unchanged`). `run` deciding before its first write needs no diff: existing objects are
   * then `unchanged` (it applies them anyway). @default true
   */
  readonly diff?: boolean;
}

/** A gate as `plan` shows it: decided now when the facts it needs are already in the cluster. */
function gateLine(g: Gate, facts: Facts): { line: string; refuses?: string } {
  const needs = g.type === 'present' ? [g.fact] : [g.left, g.right].flatMap((o) => ('fact' in o ? [o.fact] : []));
  if (!needs.every((f) => f in facts)) return { line: `${g.message} (decided at run time from ${needs.join(', ')})` };
  const r = evaluateGate(g, facts);
  return r.ok ? { line: `${g.message} (would pass: ${r.detail})` } : { line: `would REFUSE: ${r.detail}`, refuses: `gate refused: ${r.detail}` };
}

function jobAction(d: JobDecision): ObjectAction {
  switch (d.action) {
    case 'skip': return 'skip-complete';
    case 'attach': return 'running';
    case 'refuse': return d.failed ? 'failed' : 'blocked-immutable';
    case 'create': return 'create';
    case 'recreate': return 'recreate';
  }
}

/** Any object but a Job that exists: a server-side apply dry run, compared with what is there. */
async function plannedUpdate(cluster: Cluster, obj: Manifest, existing: KubernetesObject, setId: string): Promise<PlannedObject> {
  const ref = refString(refOf(obj));
  try {
    const after = await cluster.apply(stampForApply(obj, existing.metadata?.labels?.[LABELS.run] ?? '', setId), true);
    const diff = fieldDiff(existing, after);
    return diff ? { object: ref, action: 'update', diff } : { object: ref, action: 'unchanged' };
  } catch (e) {
    if (e instanceof ApiError && e.status === 422) return { object: ref, action: 'blocked-immutable', detail: [e.message, ...e.causes].join('; ') };
    throw e;
  }
}

async function plannedObject(cluster: Cluster, obj: Manifest, setId: string, diff: boolean): Promise<PlannedObject> {
  const ref = refOf(obj);
  let existing: KubernetesObject | undefined;
  try {
    existing = await cluster.get(ref);
  } catch (e) {
    if (e instanceof MissingKind) return { object: refString(ref), action: 'missing-kind', detail: e.message };
    throw e;
  }
  if (!existing) return { object: refString(ref), action: 'create' };
  if (!diff) return { object: refString(ref), action: 'unchanged', detail: 'exists (not compared)' };
  return plannedUpdate(cluster, obj, existing, setId);
}

/**
 * A requirement as the preflight of `run` would find it (the same check: secrets.ts
 * `checkRequirement`). One that is missing now but an earlier step of this run makes (its
 * `madeBy` step runs, or an earlier step applies an object of that name) is `made-earlier`.
 */
async function plannedRequirement(w: Walk, r: Requirement): Promise<PlannedRequirement & { fix?: string }> {
  const object = `${r.kind} ${r.namespace}/${r.name}`;
  const earlier = w.generated.get(object);
  if (earlier) return { object, action: 'present', detail: `generated by step ${earlier}` };
  const check = checkRequirement(r, await w.cluster.get<V1Secret & V1ConfigMap>({ apiVersion: 'v1', kind: r.kind, name: r.name, namespace: r.namespace }));
  if (check.state === 'present') return { object, action: 'present' };
  if (check.state === 'missing') {
    const applied = w.applied.find((m) => m.kind === r.kind && m.metadata.name === r.name && (m.metadata.namespace ?? w.plan.namespace) === r.namespace);
    if (applied) return { object, action: 'made-earlier', detail: `applied by step ${applied.metadata.labels?.[LABELS.step] ?? 'an earlier step'}; checked when the step starts` };
    if (r.madeBy && w.ran.has(r.madeBy)) return { object, action: 'made-earlier', detail: `step ${r.madeBy} makes it; checked when the step starts` };
    return { object, action: 'missing', detail: check.why, ...(fixCommand(r, check) ? { fix: fixCommand(r, check) } : {}) };
  }
  return { object, action: 'generate', detail: check.existing ? `adds key(s) ${check.missingKeys.join(', ')}` : `created with key(s) ${r.keys.join(', ')}, random values` };
}

interface Walk {
  readonly cluster: Cluster;
  readonly facts: Facts;
  readonly finished: ReadonlySet<string>;
  readonly rerun: readonly string[];
  readonly setId: string;
  /** Requirements generated by an earlier step of this plan: `object` → step. */
  readonly generated: Map<string, string>;
  readonly records: Records;
  readonly plan: Plan;
  readonly diff: boolean;
  /** Objects earlier steps apply (not skipped): an action on one finds it there. */
  readonly applied: Manifest[];
  /** Claims that hold data already (they exist before the run). */
  readonly claimsWithData: string[];
  readonly refusals: string[];
  /** Steps of the plan so far that the run runs (not skipped). */
  readonly ran: Set<string>;
  /** Every unmet requirement and refusing gate so far. */
  readonly unmet: Unmet[];
  /** An earlier step that gathers facts runs again: later gates are decided at run time only. */
  factsPending: boolean;
  stopsAt?: { step: string; reason: string };
}

const REFUSING: ReadonlySet<ObjectAction> = new Set(['failed', 'blocked-immutable', 'missing-kind']);

/** The step's one-shot decision: its flow's record, not its Jobs, decides (oneshot.ts). */
function oneShotOf(w: Walk, step: Step, objects: readonly Manifest[]): OneShotDecision {
  return decideOneShot(step, oneShotHash(step, objects), w.plan, w.records, w.rerun);
}

/** An action on an object that an earlier step applies finds it as applied. */
async function plannedAction(w: Walk, a: Step['actions'][number]): Promise<PlannedAction> {
  const earlier = [...w.applied].reverse().find((m) => sameRef(refOf(m), a.object));
  return actionEffect(a, earlier ?? await w.cluster.get(a.object));
}

async function planStep(w: Walk, step: Step, objects: readonly Manifest[]): Promise<PlannedStep> {
  const stop = (reason: string) => { w.stopsAt ??= { step: step.name, reason }; };
  const once = oneShotOf(w, step, objects);
  if (once.action === 'refuse') {
    w.refusals.push(once.why);
    stop(once.why);
  }
  const oneShotSkip = once.action === 'done' || once.action === 'refuse' ? once.why : undefined;
  if (step.factsFrom) {
    const job = await w.cluster.get<V1Job>(step.factsFrom).catch(() => undefined);
    if (job && jobPhase(job) === 'complete') Object.assign(w.facts, await readFacts(w.cluster, job));
    else if (once.action === 'done' && once.facts) Object.assign(w.facts, once.facts);
  }
  const rerun = once.action === 'rerun' ? [...w.rerun, step.name] : w.rerun;
  const { decisions, skipped } = oneShotSkip
    ? { decisions: new Map<string, JobState>(), skipped: true }
    : await decideJobs({ cluster: w.cluster, step, jobs: jobsOf(objects), rerun, finished: w.finished });
  const skipWhy = oneShotSkip ?? (skipped ? `its Job${decisions.size > 1 ? 's' : ''} ${[...decisions.keys()].join(', ')} already Complete with the same spec` : undefined);
  const planned: PlannedObject[] = [];
  for (const obj of objects) {
    const state = obj.kind === 'Job' ? decisions.get(obj.metadata.name) : undefined;
    const d = state?.decision;
    if (d) {
      const finishedJob = d.action === 'recreate' && state.existing !== undefined && jobPhase(state.existing) === 'complete';
      planned.push({ object: refString(refOf(obj)), action: jobAction(d), detail: 'why' in d ? d.why : undefined, ...(finishedJob ? { finishedJob } : {}) });
    }
    else if (skipWhy) planned.push({ object: refString(refOf(obj)), action: 'skip', detail: 'the step is skipped' });
    else planned.push(await plannedObject(w.cluster, obj, w.setId, w.diff));
  }
  for (const [i, o] of planned.entries()) {
    if (objects[i].kind === 'PersistentVolumeClaim' && !['create', 'skip', 'missing-kind'].includes(o.action)) w.claimsWithData.push(o.object);
  }
  // As `run`: the resume check first, then the gates, the requirements, the actions, the objects.
  const refused = planned.find((o) => REFUSING.has(o.action) && o.object.startsWith('Job/'));
  if (refused) stop(`${refused.object}: ${refused.detail ?? refused.action}`);
  const gates: Array<{ line: string; refuses?: string }> = skipWhy
    ? step.gates.map((g) => ({ line: `${g.message} (not evaluated: the step is skipped)` }))
    : step.gates.map((g) => gateLine(g, w.facts));
  for (const g of gates) {
    if (!g.refuses) continue;
    stop(g.refuses);
    // facts an earlier step of this run gathers again may change the answer: decided at run time then
    if (!w.factsPending) w.unmet.push({ step: step.name, reason: g.refuses });
  }
  const requires: PlannedRequirement[] = [];
  for (const r of step.requires) {
    const { fix, ...p } = skipWhy
      ? { object: `${r.kind} ${r.namespace}/${r.name}`, action: 'not-checked' as const, detail: 'the step is skipped', fix: undefined }
      : await plannedRequirement(w, r);
    if (p.action === 'generate') w.generated.set(p.object, step.name);
    if (p.action === 'missing') {
      stop(`${p.object} ${p.detail}`);
      w.unmet.push({ step: step.name, object: p.object, reason: p.detail ?? 'is missing', ...(fix ? { fix } : {}) });
    }
    requires.push(p.action === 'generate' && w.claimsWithData.length > 0 ? { ...p, besideData: true } : p);
  }
  const actions: PlannedAction[] = [];
  for (const a of step.actions) {
    actions.push(skipWhy ? { ...actionEffect(a, undefined), effect: 'none', why: 'the step is skipped' } : await plannedAction(w, a));
  }
  const other = planned.find((o) => REFUSING.has(o.action));
  if (other) stop(`${other.object}: ${other.detail ?? other.action}`);
  if (!skipWhy) {
    w.applied.push(...objects.filter((o) => o.kind !== 'Job'));
    w.ran.add(step.name);
    if (step.factsFrom) w.factsPending = true;
  }
  return {
    name: step.name,
    description: step.description,
    timeoutSeconds: step.timeoutSeconds,
    ...(skipWhy ? { skipped: skipWhy } : {}),
    ...(step.oneShot ? { oneShot: step.oneShot } : {}),
    ...(once.action === 'rerun' ? { rerunDataStep: once.why } : {}),
    objects: planned,
    waits: step.waits.map((x) => `${refString(x.object)} ${x.for}`),
    gates: gates.map((g) => g.line),
    requires,
    actions,
  };
}

function summarize(steps: readonly PlannedStep[], prune: readonly PlannedObject[]): PlanSummary {
  const all = [...steps.flatMap((s) => s.objects), ...prune];
  const count = (...a: ObjectAction[]) => all.filter((o) => a.includes(o.action)).length;
  const generated = steps.flatMap((s) => s.requires).filter((r) => r.action === 'generate');
  const actions = steps.flatMap((s) => s.actions);
  const effects = (e: PlannedAction['effect']) => actions.filter((a) => a.effect === e).length;
  return {
    create: count('create') + generated.filter((r) => r.detail?.startsWith('created')).length,
    update: count('update', 'recreate') + generated.filter((r) => !r.detail?.startsWith('created')).length + effects('scale'),
    delete: count('delete') + effects('delete'),
    stop: effects('stop'),
    unchanged: count('unchanged', 'skip-complete', 'skip', 'running'),
  };
}

export async function planSteps(cluster: Cluster, plan: Plan, objectsOf: (step: string) => Manifest[], o: PlanOptions = {}): Promise<PlanResult> {
  const set = applySetOf(plan);
  let parentKinds: string[] = [];
  let parentRefused: string | undefined;
  try {
    parentKinds = (await readParent(cluster, set)).kinds;
  } catch (e) {
    // Another tool's parent: `run` would refuse it before the first step. Anything else is an error of plan's own.
    if (!(e instanceof StepFailed)) throw e;
    parentRefused = e.message;
  }
  const records = await readRecords(cluster, plan.namespace);
  const rerun = o.rerun ?? [];
  const identity = identityChanges(records.identity, plan, records.identity ? await caFingerprint(cluster, plan.namespace) : undefined, o);
  const refusals = [
    ...[finishedPlanRefusal(plan, records, rerun)].filter((x): x is string => x !== undefined),
    ...identity.filter((c) => !c.allowed).map((c) => `${c.message}: refused (${c.flag} allows it)`),
  ];
  const first = refusals[0];
  const w: Walk = {
    cluster, facts: {}, finished: await finishedJobUids(cluster, plan.namespace), rerun, setId: set.id, generated: new Map(),
    records, plan, diff: o.diff ?? true, applied: [], claimsWithData: [], refusals, ran: new Set(), unmet: [], factsPending: false,
    ...(first ? { stopsAt: { step: '(run)', reason: first } } : parentRefused ? { stopsAt: { step: plan.steps[0]?.name ?? '(run)', reason: parentRefused } } : {}),
  };
  const steps: PlannedStep[] = [];
  for (const step of plan.steps) steps.push(await planStep(w, step, objectsOf(step.name)));
  const prune = parentRefused ? [] : (await pruneCandidates(cluster, plan, objectsOf, set, parentKinds, o))
    .map((i): PlannedObject => ({ object: i.object, action: i.action, detail: i.detail }));
  const namespaceFirst = w.unmet.some((u) => u.object) && !(await cluster.get({ apiVersion: 'v1', kind: 'Namespace', name: plan.namespace }))
    ? `namespace ${plan.namespace} does not exist yet: make it first with: kubectl create namespace ${plan.namespace} (run takes over a namespace made by hand)`
    : undefined;
  return { steps, unmet: w.unmet, ...(namespaceFirst ? { namespaceFirst } : {}), prune, summary: summarize(steps, prune), ...(w.stopsAt ? { stopsAt: w.stopsAt } : {}), refusals, identity };
}

/** Whether `run` would change anything (for `--detailed-exitcode`): objects, credentials, actions, pruning. */
export function hasChanges(r: PlanResult): boolean {
  return r.summary.create + r.summary.update + r.summary.delete + r.summary.stop > 0;
}

const indent = (text: string, by: string) => text.replace(/\n$/, '').split('\n').map((l) => by + l).join('\n');

export function renderPlan(plan: Plan, r: PlanResult): string {
  const steps = r.steps;
  const lines = [`plan ${plan.name} (${plan.steps.length} steps, namespace ${plan.namespace}, deadline ${plan.deadlineSeconds}s)`];
  const objectLines = (objects: readonly PlannedObject[]) => {
    const w = Math.max(...objects.map((o) => o.action.length), 6);
    for (const o of objects) {
      lines.push(`  ${o.action.padEnd(w)}  ${o.object}${o.detail ? `  (${o.detail})` : ''}`);
      if (o.diff) lines.push(indent(o.diff, '      '));
    }
  };
  steps.forEach((s, i) => {
    lines.push('', `[${i + 1}/${steps.length}] ${s.name}: ${s.description} (timeout ${s.timeoutSeconds}s)`);
    if (s.skipped) lines.push(`  skipped   ${s.skipped}`);
    for (const g of s.gates) lines.push(`  gate      ${g}`);
    for (const q of s.requires) {
      const detail = [q.detail, q.besideData ? 'new credentials beside existing data' : undefined].filter(Boolean).join('; ');
      lines.push(`  requires  ${q.action.padEnd(11)} ${q.object}${detail ? `  (${detail})` : ''}`);
    }
    if (s.oneShot) lines.push(`  one-shot  a data step of the ${s.oneShot}: runs once${s.rerunDataStep ? ` (${s.rerunDataStep})` : ''}`);
    for (const a of s.actions) {
      const what = a.effect === 'none' ? 'not done' : a.effect;
      lines.push(`  action    ${what.padEnd(8)} ${a.action} ${a.object}  (${a.why})`);
    }
    objectLines(s.objects);
    for (const x of s.waits) lines.push(`  waits for ${x}`);
  });
  if (r.prune.length) {
    lines.push('', `prune: objects of the plan's ApplySet that the plan no longer has (after the last step)`);
    objectLines(r.prune);
  }
  const allowed = r.identity.filter((c) => c.allowed);
  if (allowed.length) lines.push('', 'identity: changes of the recorded server that their flags allow (run asks first)', ...allowed.map((c) => `  ${c.flag}  ${c.message}`));
  lines.push('');
  if (r.refusals.length || r.unmet.length) lines.push('run would refuse before any write:', ...(r.namespaceFirst ? [`  first: ${r.namespaceFirst}`] : []),
    ...r.refusals.map((x) => `  - ${x}`), ...r.unmet.map(unmetLine));
  else if (r.stopsAt) lines.push(`run would stop at step ${r.stopsAt.step}: ${r.stopsAt.reason}`);
  const s = r.summary;
  lines.push(`Plan: ${s.create} to create, ${s.update} to update, ${s.delete} to delete, ${s.stop} to stop, ${s.unchanged} unchanged.`);
  return lines.join('\n');
}
