/**
 * Pruning: the members of the plan's ApplySet (src/runtime/core/applyset.ts) that the plan no longer
 * contains. One decision for `plan` (which lists them) and `run` (which deletes them after its
 * last step succeeded):
 *
 * - only members of the steps this plan has (its `uyuni-cdk.io/step` label names one): a plan
 *   that describes part of the server (migrate-prepare) never removes the rest of it;
 * - a PersistentVolumeClaim only with `--purge-volumes`, and only by the plan that made it (its
 *   `uyuni-cdk.io/plan` label): an upgrade never removes the claims of the install;
 * - a Secret that a requirement names (a credential) never;
 * - nothing with `--no-prune`.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import { LABELS, ObjectRef, Plan } from '../../plan/types';
import { ApplySet, groupKind, isMember, listMembers } from '../core/applyset';
import { Cluster, refString } from '../../kube/cluster';
import { Manifest, refOf } from '../core/manifests';

export interface PruneOptions {
  /** `--no-prune` makes this false. @default true */
  readonly prune?: boolean;
  readonly purgeVolumes?: boolean;
}

export interface PruneItem {
  readonly ref: ObjectRef;
  readonly object: string;
  readonly action: 'delete' | 'keep';
  readonly detail?: string;
}

/** The `Kind.group` of every member the plan applies, with the apiVersion it applies it as. */
export function memberKinds(plan: Plan, objectsOf: (step: string) => readonly Manifest[]): Map<string, string> {
  const kinds = new Map<string, string>();
  for (const s of plan.steps) for (const o of objectsOf(s.name).filter(isMember)) kinds.set(groupKind(o.apiVersion, o.kind), o.apiVersion);
  return kinds;
}

const identity = (o: KubernetesObject) => `${groupKind(o.apiVersion ?? '', o.kind ?? '')}/${o.metadata?.namespace ?? ''}/${o.metadata?.name}`;

function carries(o: KubernetesObject, selector: Readonly<Record<string, string>>): boolean {
  return Object.entries(selector).every(([k, v]) => o.metadata?.labels?.[k] === v);
}

function decide(plan: Plan, o: KubernetesObject, opts: PruneOptions): Omit<PruneItem, 'ref' | 'object'> | undefined {
  const labels = o.metadata?.labels ?? {};
  if (!carries(o, plan.selector) || !plan.steps.some((s) => s.name === labels[LABELS.step])) return undefined;
  if (o.kind === 'PersistentVolumeClaim') {
    if (labels[LABELS.plan] !== plan.name) return undefined;
    if (!opts.purgeVolumes) return { action: 'keep', detail: 'a volume: pruned only with --purge-volumes' };
  }
  if (o.kind === 'Secret' && plan.steps.some((s) => s.requires.some((r) => r.kind === 'Secret' && r.name === o.metadata?.name))) {
    return { action: 'keep', detail: 'a credential: never pruned' };
  }
  if (opts.prune === false) return { action: 'keep', detail: '--no-prune' };
  return { action: 'delete', detail: `no longer in the plan; applied by ${labels[LABELS.run] ?? 'an earlier run'}` };
}

/**
 * What pruning would do: the set's members (of the kinds the parent records and those the plan
 * applies) that the plan does not contain, each to delete or keep.
 */
export async function pruneCandidates(
  cluster: Cluster, plan: Plan, objectsOf: (step: string) => readonly Manifest[], set: ApplySet, parentKinds: readonly string[], opts: PruneOptions,
): Promise<PruneItem[]> {
  const planned = new Set(plan.steps.flatMap((s) => objectsOf(s.name).map(identity)));
  const kinds = memberKinds(plan, objectsOf);
  const live = await listMembers(cluster, set, [...kinds.keys(), ...parentKinds], kinds);
  const items: Array<PruneItem & { stepIndex: number }> = [];
  for (const o of live.filter((x) => !planned.has(identity(x)))) {
    const d = decide(plan, o, opts);
    const stepIndex = plan.steps.findIndex((s) => s.name === o.metadata?.labels?.[LABELS.step]);
    if (d) items.push({ ref: refOf(o), object: refString(refOf(o)), ...d, stepIndex });
  }
  // As `destroy`: last step first, so what uses an object goes before it.
  return items.sort((a, b) => b.stepIndex - a.stepIndex).map(({ stepIndex: _i, ...i }) => i);
}
