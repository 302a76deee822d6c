/**
 * `status`: each step's state read from the cluster (one GET per wait, no watches; a rollout that
 * is not done also lists its ReplicaSets and pods).
 */
import type { V1Deployment, V1Pod } from '@kubernetes/client-node';
import type { Plan } from '../plan/types';
import { Cluster, MissingKind, refString } from './client';
import { refOf, specHash } from './manifests';
import { describePod, podProgress, rolloutPods, selectorString, storageClassOf, verdictFor } from './readiness';
import { jobPhase } from './readiness/batch_v1_job';
import { readFacts } from './run';

export type StepState = 'done' | 'not-applied' | 'partly-applied' | 'waiting' | 'running' | 'failed' | 'changed';

export interface StepStatus {
  readonly name: string;
  readonly state: StepState;
  readonly detail: string;
  /** For a step with `factsFrom` whose Job completed: the facts it printed. */
  readonly facts?: Record<string, string>;
}

export async function stepStatuses(cluster: Cluster, plan: Plan, objectsOf: (step: string) => any[]): Promise<StepStatus[]> {
  const out: StepStatus[] = [];
  let classes: any[] | undefined;
  for (const step of plan.steps) {
    const objs = objectsOf(step.name);
    const present: any[] = [];
    const details: string[] = [];
    let state: StepState | undefined;
    for (const o of objs) {
      let there: any;
      try {
        there = await cluster.get(refOf(o));
      } catch (e) {
        if (!(e instanceof MissingKind)) throw e;
      }
      if (!there) continue;
      present.push(there);
      if (o.kind === 'Job') {
        const phase = jobPhase(there);
        const changed = there.metadata?.annotations?.['uyuni-cdk.io/spec-hash'] !== specHash(o);
        details.push(`Job ${o.metadata.name} ${phase}${changed ? ' (spec changed since)' : ''}`);
        if (changed) state ??= 'changed';
        if (phase === 'failed') state = 'failed';
        else if (phase === 'running') state ??= 'running';
      }
    }
    if (present.length === 0) {
      out.push({ name: step.name, state: 'not-applied', detail: `0/${objs.length} objects` });
      continue;
    }
    if (!state && present.length < objs.length) state = 'partly-applied';
    if (!state) {
      for (const w of step.waits) {
        const obj = await cluster.get(w.object).catch(() => undefined);
        if (w.for === 'bound' && obj) classes ??= (await cluster.list({ apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass' })).items;
        let v = verdictFor(w.for, { object: obj, storageClass: obj && classes ? storageClassOf(obj, classes) : undefined });
        let extra = '';
        if (w.for === 'rollout' && obj && v.state !== 'done') {
          // Its pods tell a slow first start (waiting) from a failed rollout, and where it is;
          // when they cannot be read (RBAC), the Deployment decides alone.
          const pods = await podsOfRollout(cluster, obj).catch(() => undefined);
          if (pods) {
            v = verdictFor(w.for, { object: obj, pods });
            extra = pods.slice(0, 3).map((p) => `; ${describePod(podProgress(p))}`).join('');
          }
        }
        if (v.state !== 'done') {
          state = v.state === 'failed' ? 'failed' : 'waiting';
          details.push(`${refString(w.object)} ${w.for}: ${v.reason}${v.state === 'waiting' ? extra : ''}`);
        }
      }
    }
    let facts: Record<string, string> | undefined;
    const factsJob = step.factsFrom && present.find((p) => p.kind === 'Job' && p.metadata?.name === step.factsFrom!.name);
    if (factsJob && jobPhase(factsJob) === 'complete') facts = await readFacts(cluster, factsJob);
    out.push({ name: step.name, state: state ?? 'done', detail: details.join('; ') || `${present.length}/${objs.length} objects`, ...(facts ? { facts } : {}) });
  }
  return out;
}

/** The pods of a Deployment's newest ReplicaSet: one list of each kind, by its selector. */
async function podsOfRollout(cluster: Cluster, d: V1Deployment): Promise<V1Pod[]> {
  const q = { namespace: d.metadata?.namespace, labelSelector: d.spec?.selector ? selectorString(d.spec.selector) || undefined : undefined };
  const [sets, pods] = await Promise.all([
    cluster.list({ apiVersion: 'apps/v1', kind: 'ReplicaSet', ...q }),
    cluster.list({ apiVersion: 'v1', kind: 'Pod', ...q }),
  ]);
  return rolloutPods(d, sets.items, pods.items);
}

export function renderStatus(plan: Plan, steps: StepStatus[]): string {
  const w = Math.max(...steps.map((s) => s.name.length), 4);
  const lines = [`plan ${plan.name}, namespace ${plan.namespace}`, `${'STEP'.padEnd(w)}  ${'STATE'.padEnd(14)}  DETAIL`];
  for (const s of steps) {
    lines.push(`${s.name.padEnd(w)}  ${s.state.padEnd(14)}  ${s.detail}`);
    if (s.facts) lines.push(`${''.padEnd(w)}  ${''.padEnd(14)}  facts: ${Object.entries(s.facts).map(([k, v]) => `${k}=${v}`).join(' ')}`);
  }
  return lines.join('\n');
}
