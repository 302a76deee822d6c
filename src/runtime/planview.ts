/**
 * `plan`: what `run` would do, per step and object, without changing anything: create,
 * unchanged, update (server-side apply dry run differs), blocked-immutable (a Job with another
 * spec), skip-complete (a Job already Complete with the same spec), running, failed.
 */
import type { Gate, Plan } from '../plan/types';
import { LABELS } from '../plan/types';
import { ApiError, Cluster, MissingKind, refString } from './client';
import { refOf, specHash, stampForApply } from './manifests';
import type { Facts } from './facts';
import { evaluateGate } from './gates';
import { jobPhase } from './readiness/batch_v1_job';
import { decideJob } from './resume';
import { readFacts } from './run';

export type ObjectAction = 'create' | 'unchanged' | 'update' | 'blocked-immutable' | 'skip-complete' | 'running' | 'failed' | 'missing-kind';

export interface PlannedStep {
  readonly name: string;
  readonly description: string;
  readonly timeoutSeconds: number;
  readonly objects: Array<{ object: string; action: ObjectAction; detail?: string }>;
  readonly waits: string[];
  readonly gates: string[];
  readonly requires: string[];
  readonly actions: string[];
}

/** What matters for "would apply change it": everything but status and server-owned metadata. */
function comparable(o: any): string {
  const { status: _s, metadata, ...rest } = o ?? {};
  const labels = { ...(metadata?.labels ?? {}) };
  delete labels[LABELS.run];
  const m = { name: metadata?.name, namespace: metadata?.namespace, labels, annotations: metadata?.annotations ?? {} };
  return JSON.stringify(sortDeep({ ...rest, metadata: m }));
}

function sortDeep(x: any): any {
  if (Array.isArray(x)) return x.map(sortDeep);
  if (x && typeof x === 'object') return Object.fromEntries(Object.keys(x).sort().map((k) => [k, sortDeep(x[k])]));
  return x;
}

/** A gate as `plan` shows it: decided now when the facts it needs are already in the cluster. */
function gateLine(g: Gate, facts: Facts): string {
  const needs = g.type === 'present' ? [g.fact] : [g.left, g.right].flatMap((o) => ('fact' in o ? [o.fact] : []));
  if (!needs.every((f) => f in facts)) return `${g.message} (decided at run time from ${needs.join(', ')})`;
  const r = evaluateGate(g, facts);
  return r.ok ? `${g.message} (would pass: ${r.detail})` : `would REFUSE: ${r.detail}`;
}

export async function planSteps(cluster: Cluster, plan: Plan, objectsOf: (step: string) => any[]): Promise<PlannedStep[]> {
  const out: PlannedStep[] = [];
  const facts: Facts = {};
  for (const step of plan.steps) {
    if (step.factsFrom) {
      const job = await cluster.get(step.factsFrom).catch(() => undefined);
      if (job && jobPhase(job) === 'complete') Object.assign(facts, await readFacts(cluster, job));
    }
    const objects: PlannedStep['objects'] = [];
    for (const obj of objectsOf(step.name)) {
      const ref = refOf(obj);
      let existing: any;
      try {
        existing = await cluster.get(ref);
      } catch (e) {
        if (e instanceof MissingKind) {
          objects.push({ object: refString(ref), action: 'missing-kind', detail: e.message });
          continue;
        }
        throw e;
      }
      if (!existing) {
        objects.push({ object: refString(ref), action: 'create' });
        continue;
      }
      if (obj.kind === 'Job') {
        const d = decideJob(existing, specHash(obj), false, step.name);
        const action: ObjectAction = d.action === 'skip' ? 'skip-complete' : d.action === 'attach' ? 'running'
          : d.action === 'refuse' ? (d.failed ? 'failed' : 'blocked-immutable') : d.action === 'create' ? 'create' : 'update';
        objects.push({ object: refString(ref), action, detail: 'why' in d ? d.why : undefined });
        continue;
      }
      try {
        const after = await cluster.apply(stampForApply(obj, existing.metadata?.labels?.[LABELS.run] ?? ''), true);
        objects.push({ object: refString(ref), action: comparable(after) === comparable(existing) ? 'unchanged' : 'update' });
      } catch (e) {
        if (e instanceof ApiError && e.status === 422) {
          objects.push({ object: refString(ref), action: 'blocked-immutable', detail: [e.message, ...e.causes].join('; ') });
        } else throw e;
      }
    }
    out.push({
      name: step.name,
      description: step.description,
      timeoutSeconds: step.timeoutSeconds,
      objects,
      waits: step.waits.map((w) => `${refString(w.object)} ${w.for}`),
      gates: step.gates.map((g) => gateLine(g, facts)),
      requires: step.requires.map((r) => `${r.kind} ${r.namespace}/${r.name} (${r.ifMissing === 'generate' ? 'generated when missing' : 'must exist'})`),
      actions: step.actions.map((a) => `${a.type === 'scale' ? `scale to ${a.replicas}` : 'delete'} ${refString(a.object)}`),
    });
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
