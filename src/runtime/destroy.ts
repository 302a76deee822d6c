/**
 * `destroy`: deletes what carries the plan's labels, steps in reverse order (objects too),
 * with propagationPolicy Background. A dry run unless `yes`. PersistentVolumeClaims (and the
 * Namespace that holds them, whose deletion would take them along) are kept unless `purgeVolumes`.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import type { ObjectRef, Plan } from '../plan/types';
import { Cluster, refString } from './client';
import { MissingKind } from './errors';
import { Manifest, refOf, sameRef, selectorString } from './manifests';

export interface DestroyOptions {
  readonly yes: boolean;
  readonly purgeVolumes: boolean;
}

export interface DestroyItem {
  readonly object: string;
  readonly result: 'deleted' | 'would delete' | 'kept' | 'absent' | 'not ours';
  readonly detail?: string;
}

function carries(obj: KubernetesObject, selector: Readonly<Record<string, string>>): boolean {
  const l = obj.metadata?.labels ?? {};
  return Object.entries(selector).every(([k, v]) => l[k] === v);
}

/** Other objects with the plan's labels in its namespace (generated Secrets, leftovers of an older plan). */
async function extrasOf(cluster: Cluster, plan: Plan, planned: readonly ObjectRef[]): Promise<ObjectRef[]> {
  const kinds = new Map<string, { apiVersion: string; kind: string }>();
  for (const r of [...planned, { apiVersion: 'v1', kind: 'Secret', name: '' }, { apiVersion: 'v1', kind: 'ConfigMap', name: '' }]) {
    if (r.kind !== 'Namespace') kinds.set(`${r.apiVersion}/${r.kind}`, r);
  }
  const extras: ObjectRef[] = [];
  for (const k of kinds.values()) {
    try {
      const { items } = await cluster.list({ ...k, namespace: plan.namespace, labelSelector: selectorString(plan.selector) });
      for (const it of items) {
        const ref = refOf(it);
        if (!planned.some((p) => sameRef(p, ref)) && !extras.some((p) => sameRef(p, ref))) extras.push(ref);
      }
    } catch (e) {
      if (!(e instanceof MissingKind)) throw e;
    }
  }
  return extras;
}

interface Destroying {
  readonly cluster: Cluster;
  readonly plan: Plan;
  readonly o: DestroyOptions;
  /** Namespaces holding claims that are kept: they are kept too. */
  readonly keptPvcNamespaces: Set<string>;
}

/** What happens to one object (deleted only with `yes`). */
async function destroyOne(d: Destroying, ref: ObjectRef): Promise<DestroyItem> {
  const object = refString(ref);
  let obj: KubernetesObject | undefined;
  try {
    obj = await d.cluster.get(ref);
  } catch (e) {
    if (e instanceof MissingKind) return { object, result: 'absent', detail: 'kind not served' };
    throw e;
  }
  if (!obj) return { object, result: 'absent' };
  if (!carries(obj, d.plan.selector)) return { object, result: 'not ours', detail: `lacks labels ${selectorString(d.plan.selector)}` };
  if (ref.kind === 'PersistentVolumeClaim' && !d.o.purgeVolumes) {
    d.keptPvcNamespaces.add(ref.namespace ?? '');
    return { object, result: 'kept', detail: 'volumes are kept unless --purge-volumes' };
  }
  if (ref.kind === 'Namespace' && d.keptPvcNamespaces.has(ref.name)) {
    return { object, result: 'kept', detail: 'holds kept volumes (deleting it would delete them): use --purge-volumes' };
  }
  if (!d.o.yes) return { object, result: 'would delete' };
  return { object, result: (await d.cluster.delete(ref, 'Background')) ? 'deleted' : 'absent' };
}

export async function destroyPlan(cluster: Cluster, plan: Plan, objectsOf: (step: string) => Manifest[], o: DestroyOptions): Promise<DestroyItem[]> {
  // The plan's objects, last step first; then other objects with our labels before them; the
  // plan's Namespace always last.
  const planned: ObjectRef[] = [...plan.steps].reverse().flatMap((s) => objectsOf(s.name).map(refOf).reverse());
  const extras = await extrasOf(cluster, plan, planned);
  const namespaces = planned.filter((r) => r.kind === 'Namespace');
  const order = [...extras, ...planned.filter((r) => r.kind !== 'Namespace'), ...namespaces];
  const d: Destroying = { cluster, plan, o, keptPvcNamespaces: new Set() };
  const items: DestroyItem[] = [];
  for (const ref of order) items.push(await destroyOne(d, ref));
  return items;
}

export function renderDestroy(plan: Plan, items: DestroyItem[], o: DestroyOptions): string {
  const lines = [`${o.yes ? 'destroy' : 'destroy (dry run: nothing deleted; pass --yes to delete)'} plan ${plan.name}, namespace ${plan.namespace}`];
  for (const i of items) lines.push(`  ${i.result.padEnd(12)}  ${i.object}${i.detail ? `  (${i.detail})` : ''}`);
  return lines.join('\n');
}
