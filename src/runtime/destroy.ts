/**
 * `destroy`: deletes what carries the plan's labels, steps in reverse order (objects too),
 * with propagationPolicy Background. A dry run unless `yes`. Unless `purgeVolumes`, the data is
 * kept, and with it what the data needs: PersistentVolumeClaims, the credential Secrets (those
 * the plan's requirements name), the CA Secret (of each `isCA` Certificate), the records of
 * finished runs, and the Namespace holding them. A Namespace the plan did not create (adopted
 * with `run --adopt`), or one that holds objects of others, is never deleted (docs/runtime.md,
 * "What destroy keeps").
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import { LABELS, ObjectRef, Plan } from '../plan/types';
import { Cluster, refString } from './client';
import { MissingKind } from './errors';
import { HISTORY_CONFIGMAP } from './history';
import { Manifest, refOf, sameRef, selectorString } from './manifests';
import { ADOPTED_FROM, othersIn } from './ownership';
import { Target, targetText } from './target';

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

/** What the kept data needs: credential Secrets, CA Secrets, records of finished runs (by name). */
interface DataKeep {
  readonly credentials: ReadonlySet<string>;
  readonly caSecrets: ReadonlySet<string>;
  /** Namespaced Certificates whose Secret is a CA Secret: their Secret may be owned by them (cert-manager --enable-certificate-owner-ref). */
  readonly caCertificates: ReadonlySet<string>;
}

function dataKeep(plan: Plan, objectsOf: (step: string) => Manifest[]): DataKeep {
  const credentials = new Set(plan.steps.flatMap((s) => s.requires.filter((r) => r.kind === 'Secret').map((r) => r.name)));
  const caSecrets = new Set<string>();
  const caCertificates = new Set<string>();
  for (const s of plan.steps) {
    for (const o of objectsOf(s.name)) {
      const spec = (o as { spec?: { isCA?: boolean; secretName?: string } }).spec;
      if (o.kind === 'Certificate' && spec?.isCA && spec.secretName) {
        caSecrets.add(spec.secretName);
        caCertificates.add(o.metadata.name);
      }
    }
  }
  return { credentials, caSecrets, caCertificates };
}

/** Why an object is kept with the data, or undefined. */
function keptWithData(ref: ObjectRef, obj: KubernetesObject, k: DataKeep): string | undefined {
  if (ref.kind === 'Secret' && k.credentials.has(ref.name)) return 'a credential of the kept data: deleted only with --purge-volumes';
  if (ref.kind === 'Secret' && k.caSecrets.has(ref.name)) return 'the CA of the kept data: deleted only with --purge-volumes';
  if (ref.kind === 'Certificate' && k.caCertificates.has(ref.name)) return 'issues the kept CA Secret: deleted only with --purge-volumes';
  if (ref.kind === 'ConfigMap' && (ref.name === HISTORY_CONFIGMAP || obj.metadata?.labels?.[LABELS.component] === 'step')) {
    return 'a record of what was done to the kept data: deleted only with --purge-volumes';
  }
  return undefined;
}

/** The CA Secrets cert-manager made for the plan's CA Certificates (they lack our labels): removed with --purge-volumes. */
async function caSecretsOf(cluster: Cluster, plan: Plan, k: DataKeep, known: readonly ObjectRef[]): Promise<ObjectRef[]> {
  const out: ObjectRef[] = [];
  for (const name of k.caSecrets) {
    const ref = { apiVersion: 'v1', kind: 'Secret', name, namespace: plan.namespace };
    if (known.some((r) => sameRef(r, ref))) continue;
    const s = await cluster.get(ref);
    if (s && k.caCertificates.has(s.metadata?.annotations?.['cert-manager.io/certificate-name'] ?? '')) out.push(ref);
  }
  return out;
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
  readonly keep: DataKeep;
  /** CA Secrets made by cert-manager for the plan: ours although they lack the labels. */
  readonly caSecrets: readonly ObjectRef[];
}

/** Why the plan's Namespace stays: not created by the plan, or holding what others own. */
async function namespaceKept(d: Destroying, obj: KubernetesObject): Promise<string | undefined> {
  const adopted = obj.metadata?.annotations?.[ADOPTED_FROM];
  if (adopted !== undefined) return `not created by this plan (adopted from ${adopted} by run --adopt): its objects are deleted, the namespace stays`;
  const others = await othersIn(d.cluster, d.plan, obj.metadata?.name ?? '');
  if (others.length === 0) return undefined;
  const shown = others.length > 10 ? [...others.slice(0, 10), `and ${others.length - 10} more`] : others;
  return `holds ${others.length} object(s) not of this plan, which deleting it would delete: ${shown.join(', ')}`;
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
  const ca = d.caSecrets.some((r) => sameRef(r, ref));
  if (!ca && !carries(obj, d.plan.selector)) return { object, result: 'not ours', detail: `lacks labels ${selectorString(d.plan.selector)}` };
  if (ref.kind === 'PersistentVolumeClaim' && !d.o.purgeVolumes) {
    d.keptPvcNamespaces.add(ref.namespace ?? '');
    return { object, result: 'kept', detail: 'volumes are kept unless --purge-volumes' };
  }
  const withData = d.o.purgeVolumes ? undefined : keptWithData(ref, obj, d.keep);
  if (withData) {
    d.keptPvcNamespaces.add(ref.namespace ?? '');
    return { object, result: 'kept', detail: withData };
  }
  if (ref.kind === 'Namespace' && d.keptPvcNamespaces.has(ref.name)) {
    return { object, result: 'kept', detail: 'holds the kept data (deleting it would delete it): use --purge-volumes' };
  }
  const nsKept = ref.kind === 'Namespace' ? await namespaceKept(d, obj) : undefined;
  if (nsKept) return { object, result: 'kept', detail: nsKept };
  if (!d.o.yes) return { object, result: 'would delete' };
  return { object, result: (await d.cluster.delete(ref, 'Background')) ? 'deleted' : 'absent' };
}

export async function destroyPlan(cluster: Cluster, plan: Plan, objectsOf: (step: string) => Manifest[], o: DestroyOptions): Promise<DestroyItem[]> {
  // The plan's objects, last step first; then other objects with our labels before them; the
  // plan's Namespace always last.
  const planned: ObjectRef[] = [...plan.steps].reverse().flatMap((s) => objectsOf(s.name).map(refOf).reverse());
  const extras = await extrasOf(cluster, plan, planned);
  const keep = dataKeep(plan, objectsOf);
  const caSecrets = await caSecretsOf(cluster, plan, keep, [...planned, ...extras]);
  const namespaces = planned.filter((r) => r.kind === 'Namespace');
  const order = [...extras, ...caSecrets, ...planned.filter((r) => r.kind !== 'Namespace'), ...namespaces];
  const d: Destroying = { cluster, plan, o, keptPvcNamespaces: new Set(), keep, caSecrets };
  const items: DestroyItem[] = [];
  for (const ref of order) items.push(await destroyOne(d, ref));
  return items;
}

export function renderDestroy(plan: Plan, items: DestroyItem[], o: DestroyOptions, target?: Target): string {
  const lines = [`${o.yes ? 'destroy' : 'destroy (dry run: nothing deleted; pass --yes to delete)'} plan ${plan.name}, namespace ${plan.namespace}${target ? `, ${targetText(target)}` : ''}`];
  for (const i of items) lines.push(`  ${i.result.padEnd(12)}  ${i.object}${i.detail ? `  (${i.detail})` : ''}`);
  return lines.join('\n');
}
