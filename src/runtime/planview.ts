/**
 * `plan`: what `run` would do, per step and object, without changing anything: create,
 * unchanged, update (server-side apply dry run differs), blocked-immutable (a Job with another
 * spec), skip-complete (a Job already Complete with the same spec), running, failed.
 */
import type { KubernetesObject, V1Job } from '@kubernetes/client-node';
import { canonicalJson } from '../plan/spec-hash';
import type { Gate, Plan, Step } from '../plan/types';
import { LABELS } from '../plan/types';
import { Cluster, refString } from './client';
import { ApiError, MissingKind } from './errors';
import { Facts, readFacts } from './facts';
import { evaluateGate } from './gates';
import { Manifest, refOf, specHash, stampForApply } from './manifests';
import { jobPhase } from './readiness/batch_v1_job';
import { decideJob, JobDecision } from './resume';

export type ObjectAction = 'create' | 'unchanged' | 'update' | 'blocked-immutable' | 'skip-complete' | 'running' | 'failed' | 'missing-kind';

export interface PlannedObject {
  readonly object: string;
  readonly action: ObjectAction;
  readonly detail?: string;
}

export interface PlannedStep {
  readonly name: string;
  readonly description: string;
  readonly timeoutSeconds: number;
  readonly objects: PlannedObject[];
  readonly waits: string[];
  readonly gates: string[];
  readonly requires: string[];
  readonly actions: string[];
}

/** What matters for "would apply change it": everything but status and server-owned metadata. */
function comparable(o: KubernetesObject | undefined): string {
  const { status: _s, metadata, ...rest } = (o ?? {}) as KubernetesObject & { status?: unknown };
  const labels = { ...(metadata?.labels ?? {}) };
  delete labels[LABELS.run];
  const m = { name: metadata?.name, namespace: metadata?.namespace, labels, annotations: metadata?.annotations ?? {} };
  return canonicalJson({ ...rest, metadata: m });
}

/** A gate as `plan` shows it: decided now when the facts it needs are already in the cluster. */
function gateLine(g: Gate, facts: Facts): string {
  const needs = g.type === 'present' ? [g.fact] : [g.left, g.right].flatMap((o) => ('fact' in o ? [o.fact] : []));
  if (!needs.every((f) => f in facts)) return `${g.message} (decided at run time from ${needs.join(', ')})`;
  const r = evaluateGate(g, facts);
  return r.ok ? `${g.message} (would pass: ${r.detail})` : `would REFUSE: ${r.detail}`;
}

function jobAction(d: JobDecision): ObjectAction {
  switch (d.action) {
    case 'skip': return 'skip-complete';
    case 'attach': return 'running';
    case 'refuse': return d.failed ? 'failed' : 'blocked-immutable';
    case 'create': return 'create';
    case 'recreate': return 'update';
  }
}

/** A Job that exists: what the resume check would decide. */
function plannedJob(obj: Manifest, existing: V1Job, step: string): PlannedObject {
  const d = decideJob(existing, specHash(obj), false, step);
  return { object: refString(refOf(obj)), action: jobAction(d), detail: 'why' in d ? d.why : undefined };
}

/** Any other object that exists: a server-side apply dry run, compared with what is there. */
async function plannedUpdate(cluster: Cluster, obj: Manifest, existing: KubernetesObject): Promise<PlannedObject> {
  const ref = refString(refOf(obj));
  try {
    const after = await cluster.apply(stampForApply(obj, existing.metadata?.labels?.[LABELS.run] ?? ''), true);
    return { object: ref, action: comparable(after) === comparable(existing) ? 'unchanged' : 'update' };
  } catch (e) {
    if (e instanceof ApiError && e.status === 422) return { object: ref, action: 'blocked-immutable', detail: [e.message, ...e.causes].join('; ') };
    throw e;
  }
}

async function plannedObject(cluster: Cluster, obj: Manifest, step: string): Promise<PlannedObject> {
  const ref = refOf(obj);
  let existing: KubernetesObject | undefined;
  try {
    existing = await cluster.get(ref);
  } catch (e) {
    if (e instanceof MissingKind) return { object: refString(ref), action: 'missing-kind', detail: e.message };
    throw e;
  }
  if (!existing) return { object: refString(ref), action: 'create' };
  if (obj.kind === 'Job') return plannedJob(obj, existing as V1Job, step);
  return plannedUpdate(cluster, obj, existing);
}

function describeStep(step: Step, objects: PlannedObject[], facts: Facts): PlannedStep {
  return {
    name: step.name,
    description: step.description,
    timeoutSeconds: step.timeoutSeconds,
    objects,
    waits: step.waits.map((w) => `${refString(w.object)} ${w.for}`),
    gates: step.gates.map((g) => gateLine(g, facts)),
    requires: step.requires.map((r) => `${r.kind} ${r.namespace}/${r.name} (${r.ifMissing === 'generate' ? 'generated when missing' : 'must exist'})`),
    actions: step.actions.map((a) => `${a.type === 'scale' ? `scale to ${a.replicas}` : 'delete'} ${refString(a.object)}`),
  };
}

export async function planSteps(cluster: Cluster, plan: Plan, objectsOf: (step: string) => Manifest[]): Promise<PlannedStep[]> {
  const out: PlannedStep[] = [];
  const facts: Facts = {};
  for (const step of plan.steps) {
    if (step.factsFrom) {
      const job = await cluster.get<V1Job>(step.factsFrom).catch(() => undefined);
      if (job && jobPhase(job) === 'complete') Object.assign(facts, await readFacts(cluster, job));
    }
    const objects: PlannedObject[] = [];
    for (const obj of objectsOf(step.name)) objects.push(await plannedObject(cluster, obj, step.name));
    out.push(describeStep(step, objects, facts));
  }
  return out;
}

export function renderPlan(plan: Plan, steps: PlannedStep[]): string {
  const lines = [`plan ${plan.name} (${plan.steps.length} steps, namespace ${plan.namespace}, deadline ${plan.deadlineSeconds}s)`];
  steps.forEach((s, i) => {
    lines.push('', `[${i + 1}/${steps.length}] ${s.name}: ${s.description} (timeout ${s.timeoutSeconds}s)`);
    for (const g of s.gates) lines.push(`  gate      ${g}`);
    for (const r of s.requires) lines.push(`  requires  ${r}`);
    for (const a of s.actions) lines.push(`  action    ${a}`);
    const w = Math.max(...s.objects.map((o) => o.action.length), 6);
    for (const o of s.objects) lines.push(`  ${o.action.padEnd(w)}  ${o.object}${o.detail ? `  (${o.detail})` : ''}`);
    for (const x of s.waits) lines.push(`  waits for ${x}`);
  });
  return lines.join('\n');
}
