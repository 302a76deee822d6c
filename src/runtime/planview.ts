/**
 * `plan`: what `run` would do, per step and object, without changing anything. It decides with
 * `run`'s own functions: the resume check of the step's Jobs with the finished-runs record
 * (steps/resume.ts `decideJobs`), the requirements, the gates from the facts in the cluster,
 * and pruning (prune.ts). An object that exists is compared with a server-side apply dry run;
 * an `update` carries the field diff (field-diff.ts).
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
import { jobsOf } from './jobs';
import { Manifest, refOf, stampForApply } from './manifests';
import { pruneCandidates, PruneOptions } from './prune';
import { checkRequirement } from './secrets';
import { jobPhase } from './readiness/batch_v1_job';
import type { JobDecision } from './resume';
import { decideJobs } from './steps/resume';

export type ObjectAction =
  | 'create' | 'unchanged' | 'update' | 'recreate' | 'blocked-immutable' | 'skip-complete' | 'skip' | 'running' | 'failed' | 'missing-kind'
  | 'delete' | 'keep';

export interface PlannedObject {
  readonly object: string;
  readonly action: ObjectAction;
  readonly detail?: string;
  /** For `update`: the unified YAML diff from the live object to the dry run's (Secret values masked). */
  readonly diff?: string;
}

export type RequirementAction = 'present' | 'generate' | 'missing' | 'not-checked';

export interface PlannedRequirement {
  readonly object: string;
  readonly action: RequirementAction;
  readonly detail?: string;
}

export interface PlannedStep {
  readonly name: string;
  readonly description: string;
  readonly timeoutSeconds: number;
  /** Why `run` would skip the whole step (its Jobs are Complete with the same spec). */
  readonly skipped?: string;
  readonly objects: PlannedObject[];
  readonly waits: string[];
  readonly gates: string[];
  readonly requires: PlannedRequirement[];
  readonly actions: string[];
}

export interface PlanSummary {
  readonly create: number;
  readonly update: number;
  readonly delete: number;
  readonly unchanged: number;
}

export interface PlanResult {
  readonly steps: PlannedStep[];
  /** Members of the plan's ApplySet that the plan no longer has: delete, or keep (and why). */
  readonly prune: PlannedObject[];
  readonly summary: PlanSummary;
  /** Where `run` would stop, and why (a refused Job, a missing requirement or kind, a gate). */
  readonly stopsAt?: { readonly step: string; readonly reason: string };
}

export interface PlanOptions extends PruneOptions {
  /** Steps given to `run --rerun`. */
  readonly rerun?: readonly string[];
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

async function plannedObject(cluster: Cluster, obj: Manifest, setId: string): Promise<PlannedObject> {
  const ref = refOf(obj);
  let existing: KubernetesObject | undefined;
  try {
    existing = await cluster.get(ref);
  } catch (e) {
    if (e instanceof MissingKind) return { object: refString(ref), action: 'missing-kind', detail: e.message };
    throw e;
  }
  if (!existing) return { object: refString(ref), action: 'create' };
  return plannedUpdate(cluster, obj, existing, setId);
}

/** A requirement as the preflight of `run` would find it (the same check: secrets.ts `checkRequirement`). */
async function plannedRequirement(cluster: Cluster, r: Requirement, generated: Map<string, string>): Promise<PlannedRequirement> {
  const object = `${r.kind} ${r.namespace}/${r.name}`;
  const earlier = generated.get(object);
  if (earlier) return { object, action: 'present', detail: `generated by step ${earlier}` };
  const check = checkRequirement(r, await cluster.get<V1Secret & V1ConfigMap>({ apiVersion: 'v1', kind: r.kind, name: r.name, namespace: r.namespace }));
  if (check.state === 'present') return { object, action: 'present' };
  if (check.state === 'missing') return { object, action: 'missing', detail: check.why };
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
  stopsAt?: { step: string; reason: string };
}

const REFUSING: ReadonlySet<ObjectAction> = new Set(['failed', 'blocked-immutable', 'missing-kind']);

async function planStep(w: Walk, step: Step, objects: readonly Manifest[]): Promise<PlannedStep> {
  const stop = (reason: string) => { w.stopsAt ??= { step: step.name, reason }; };
  if (step.factsFrom) {
    const job = await w.cluster.get<V1Job>(step.factsFrom).catch(() => undefined);
    if (job && jobPhase(job) === 'complete') Object.assign(w.facts, await readFacts(w.cluster, job));
  }
  const { decisions, skipped } = await decideJobs({ cluster: w.cluster, step, jobs: jobsOf(objects), rerun: w.rerun, finished: w.finished });
  const skipWhy = skipped ? `its Job${decisions.size > 1 ? 's' : ''} ${[...decisions.keys()].join(', ')} already Complete with the same spec` : undefined;
  const planned: PlannedObject[] = [];
  for (const obj of objects) {
    const d = obj.kind === 'Job' ? decisions.get(obj.metadata.name)?.decision : undefined;
    if (d) planned.push({ object: refString(refOf(obj)), action: jobAction(d), detail: 'why' in d ? d.why : undefined });
    else if (skipWhy) planned.push({ object: refString(refOf(obj)), action: 'skip', detail: 'the step is skipped' });
    else planned.push(await plannedObject(w.cluster, obj, w.setId));
  }
  // As `run`: the resume check first, then the gates, the requirements, the objects.
  const refused = planned.find((o) => REFUSING.has(o.action) && o.object.startsWith('Job/'));
  if (refused) stop(`${refused.object}: ${refused.detail ?? refused.action}`);
  const gates: Array<{ line: string; refuses?: string }> = skipWhy
    ? step.gates.map((g) => ({ line: `${g.message} (not evaluated: the step is skipped)` }))
    : step.gates.map((g) => gateLine(g, w.facts));
  for (const g of gates) if (g.refuses) stop(g.refuses);
  const requires: PlannedRequirement[] = [];
  for (const r of step.requires) {
    const p = skipWhy ? { object: `${r.kind} ${r.namespace}/${r.name}`, action: 'not-checked' as const, detail: 'the step is skipped' } : await plannedRequirement(w.cluster, r, w.generated);
    if (p.action === 'generate') w.generated.set(p.object, step.name);
    if (p.action === 'missing') stop(`${p.object} ${p.detail}`);
    requires.push(p);
  }
  const other = planned.find((o) => REFUSING.has(o.action));
  if (other) stop(`${other.object}: ${other.detail ?? other.action}`);
  return {
    name: step.name,
    description: step.description,
    timeoutSeconds: step.timeoutSeconds,
    ...(skipWhy ? { skipped: skipWhy } : {}),
    objects: planned,
    waits: step.waits.map((x) => `${refString(x.object)} ${x.for}`),
    gates: gates.map((g) => g.line),
    requires,
    actions: step.actions.map((a) => `${a.type === 'scale' ? `scale to ${a.replicas}` : 'delete'} ${refString(a.object)}`),
  };
}

function summarize(steps: readonly PlannedStep[], prune: readonly PlannedObject[]): PlanSummary {
  const all = [...steps.flatMap((s) => s.objects), ...prune];
  const count = (...a: ObjectAction[]) => all.filter((o) => a.includes(o.action)).length;
  const generated = steps.flatMap((s) => s.requires).filter((r) => r.action === 'generate');
  return {
    create: count('create') + generated.filter((r) => r.detail?.startsWith('created')).length,
    update: count('update', 'recreate') + generated.filter((r) => !r.detail?.startsWith('created')).length,
    delete: count('delete'),
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
  const w: Walk = {
    cluster, facts: {}, finished: await finishedJobUids(cluster, plan.namespace), rerun: o.rerun ?? [], setId: set.id, generated: new Map(),
    ...(parentRefused ? { stopsAt: { step: plan.steps[0]?.name ?? '(run)', reason: parentRefused } } : {}),
  };
  const steps: PlannedStep[] = [];
  for (const step of plan.steps) steps.push(await planStep(w, step, objectsOf(step.name)));
  const prune = parentRefused ? [] : (await pruneCandidates(cluster, plan, objectsOf, set, parentKinds, o))
    .map((i): PlannedObject => ({ object: i.object, action: i.action, detail: i.detail }));
  return { steps, prune, summary: summarize(steps, prune), ...(w.stopsAt ? { stopsAt: w.stopsAt } : {}) };
}

/** Whether `run` would change anything (for `--detailed-exitcode`). */
export function hasChanges(r: PlanResult): boolean {
  return r.summary.create + r.summary.update + r.summary.delete > 0;
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
    for (const q of s.requires) lines.push(`  requires  ${q.action.padEnd(11)} ${q.object}${q.detail ? `  (${q.detail})` : ''}`);
    for (const a of s.actions) lines.push(`  action    ${a}`);
    objectLines(s.objects);
    for (const x of s.waits) lines.push(`  waits for ${x}`);
  });
  if (r.prune.length) {
    lines.push('', `prune: objects of the plan's ApplySet that the plan no longer has (after the last step)`);
    objectLines(r.prune);
  }
  lines.push('');
  if (r.stopsAt) lines.push(`run would stop at step ${r.stopsAt.step}: ${r.stopsAt.reason}`);
  const s = r.summary;
  lines.push(`Plan: ${s.create} to create, ${s.update} to update, ${s.delete} to delete, ${s.unchanged} unchanged.`);
  return lines.join('\n');
}
