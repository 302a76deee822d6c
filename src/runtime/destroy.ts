/**
 * `destroy`: deletes what carries the plan's labels, steps in reverse order (objects too),
 * with propagationPolicy Background. A dry run unless `yes`. PersistentVolumeClaims (and the
 * Namespace that holds them, whose deletion would take them along) are kept unless `purgeVolumes`.
 */
import type { ObjectRef, Plan } from '../plan/types';
import { Cluster, MissingKind, refString } from './client';
import { refOf, sameRef, selectorString } from './manifests';

export interface DestroyOptions {
  readonly yes: boolean;
  readonly purgeVolumes: boolean;
}

export interface DestroyItem {
  readonly object: string;
  readonly result: 'deleted' | 'would delete' | 'kept' | 'absent' | 'not ours';
  readonly detail?: string;
}

function carries(obj: any, selector: Readonly<Record<string, string>>): boolean {
  const l = obj?.metadata?.labels ?? {};
  return Object.entries(selector).every(([k, v]) => l[k] === v);
}

export async function destroyPlan(cluster: Cluster, plan: Plan, objectsOf: (step: string) => any[], o: DestroyOptions): Promise<DestroyItem[]> {
  // The plan's objects, last step first; then other objects with our labels (generated Secrets,
  // leftovers of an older plan) before them; the plan's Namespace always last.
  const planned: ObjectRef[] = [...plan.steps].reverse().flatMap((s) => objectsOf(s.name).map(refOf).reverse());
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
  const namespaces = planned.filter((r) => r.kind === 'Namespace');
  const order = [...extras, ...planned.filter((r) => r.kind !== 'Namespace'), ...namespaces];

  const items: DestroyItem[] = [];
  const keptPvcNamespaces = new Set<string>();
  for (const ref of order) {
    let obj: any;
    try {
      obj = await cluster.get(ref);
    } catch (e) {
      if (e instanceof MissingKind) { items.push({ object: refString(ref), result: 'absent', detail: 'kind not served' }); continue; }
      throw e;
    }
    if (!obj) { items.push({ object: refString(ref), result: 'absent' }); continue; }
    if (!carries(obj, plan.selector)) { items.push({ object: refString(ref), result: 'not ours', detail: `lacks labels ${selectorString(plan.selector)}` }); continue; }
    if (ref.kind === 'PersistentVolumeClaim' && !o.purgeVolumes) {
      keptPvcNamespaces.add(ref.namespace ?? '');
      items.push({ object: refString(ref), result: 'kept', detail: 'volumes are kept unless --purge-volumes' });
      continue;
    }
    if (ref.kind === 'Namespace' && keptPvcNamespaces.has(ref.name)) {
      items.push({ object: refString(ref), result: 'kept', detail: 'holds kept volumes (deleting it would delete them): use --purge-volumes' });
      continue;
    }
    if (!o.yes) { items.push({ object: refString(ref), result: 'would delete' }); continue; }
    const deleted = await cluster.delete(ref, 'Background');
    items.push({ object: refString(ref), result: deleted ? 'deleted' : 'absent' });
  }
  return items;
}

export function renderDestroy(plan: Plan, items: DestroyItem[], o: DestroyOptions): string {
  const lines = [`${o.yes ? 'destroy' : 'destroy (dry run: nothing deleted; pass --yes to delete)'} plan ${plan.name}, namespace ${plan.namespace}`];
  for (const i of items) lines.push(`  ${i.result.padEnd(12)}  ${i.object}${i.detail ? `  (${i.detail})` : ''}`);
  return lines.join('\n');
}
