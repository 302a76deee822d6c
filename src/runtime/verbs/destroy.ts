/**
 * `destroy`: deletes what carries the plan's labels, steps in reverse order (objects too),
 * with propagationPolicy Background. A dry run unless `yes`. The database's Deployment
 * (component db) is deleted only once the pods of the Deployments deleted before it (the server
 * and its helpers, a later step) are gone: a server still stopping uses the database, as
 * upstream stops the server before the database (docs/upstream.md, decision n). Unless `purgeVolumes`, the data is
 * kept, and with it what the data needs: PersistentVolumeClaims, the credential Secrets (those
 * the plan's requirements name), the CA Secret (of each `isCA` Certificate), the records of
 * finished runs, and the Namespace holding them. A Namespace the plan did not create (adopted
 * with `run --adopt`), or one that holds objects of others, is never deleted (docs/runtime.md,
 * "What destroy keeps").
 */
import type { KubernetesObject, V1Deployment } from '@kubernetes/client-node';
import { LABELS, ObjectRef, Plan } from '../../plan/types';
import { Cluster, refString } from '../../kube/cluster';
import { MissingKind, RuntimeError } from '../../kube/api-errors';
import { EXIT } from '../../plan/exit-codes';
import { RUN_DEFAULTS } from '../../plan/run-defaults';
import { HISTORY_CONFIGMAP } from '../safety/history';
import { Manifest, refOf, sameRef, selectorString } from '../core/manifests';
import { ADOPTED_FROM, othersIn } from '../safety/ownership';
import { selectorString as podSelector } from '../readiness';
import type { DestroyItem, DestroyMode } from '../core/destroy-result';

export interface DestroyOptions extends DestroyMode {
  /** Seconds to wait for the server's pods before the database is deleted. @default RUN_DEFAULTS.destroyTimeoutSeconds */
  readonly timeoutSeconds?: number;
  /** A progress line while waiting for the server's pods. @default none */
  readonly progress?: (line: string) => void;
  /** Milliseconds between looks at the pods. @default 1000 */
  readonly pollMs?: number;
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
  /** The Deployments deleted (or, in a dry run, to be deleted) so far, with their pod selectors. */
  readonly workloads: Array<{ readonly object: string; readonly selector: string }>;
}

/** The database's Deployment: its pods are component db. */
function isDatabase(ref: ObjectRef, obj: KubernetesObject): boolean {
  return ref.kind === 'Deployment' && (obj as V1Deployment).spec?.template?.metadata?.labels?.[LABELS.component] === 'db';
}

/**
 * Waits until no pod of the Deployments deleted before is left (terminating ones included), as
 * the stop steps' wait-stopped.sh does; returns the seconds waited. Past the deadline it refuses,
 * and the database is left running.
 */
async function serverPodsGone(d: Destroying, db: string): Promise<number> {
  const started = Date.now();
  const timeout = d.o.timeoutSeconds ?? RUN_DEFAULTS.destroyTimeoutSeconds;
  let said = '';
  for (;;) {
    const left: string[] = [];
    for (const w of d.workloads) {
      const { items } = await d.cluster.list({ apiVersion: 'v1', kind: 'Pod', namespace: d.plan.namespace, labelSelector: w.selector });
      left.push(...items.map((p) => `Pod/${p.metadata?.name} (of ${w.object})`));
    }
    const seconds = (Date.now() - started) / 1000;
    if (left.length === 0) return seconds;
    if (seconds >= timeout) {
      throw new RuntimeError(`timed out after ${timeout}s waiting for the server's pods to be gone before deleting ${db}: ${left.join(', ')} still there; `
        + 'the database was not deleted (a stopping server still uses it): run the same destroy again once they are gone (--timeout waits longer)', EXIT.stepFailed);
    }
    const line = `waiting for ${left.length} pod${left.length > 1 ? 's' : ''} of the server to be gone before deleting ${db}: ${left.join(', ')}`;
    if (line !== said) d.o.progress?.(`${line} (${Math.floor(seconds)}s of ${timeout}s)`);
    said = line;
    await new Promise((r) => setTimeout(r, d.o.pollMs ?? 1000));
  }
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
  // The server's pods go before the database (its Deployment comes after theirs in this order).
  const after = isDatabase(ref, obj) && d.workloads.length ? d.workloads.map((w) => w.object).join(', ') : undefined;
  if (ref.kind === 'Deployment' && !isDatabase(ref, obj)) {
    const sel = (obj as V1Deployment).spec?.selector;
    if (sel) d.workloads.push({ object, selector: podSelector(sel) });
  }
  if (!d.o.yes) return { object, result: 'would delete', ...(after ? { detail: `after the pods of ${after} are gone: the database stops last` } : {}) };
  const waited = after ? await serverPodsGone(d, object) : undefined;
  const detail = after ? `after the pods of ${after} were gone (${Math.round(waited ?? 0)}s): the database stops last` : undefined;
  const uid = obj.metadata?.uid;
  return (await d.cluster.delete(ref, 'Background')) ? { object, result: 'deleted', ref, ...(uid ? { uid } : {}), ...(detail ? { detail } : {}) } : { object, result: 'absent' };
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
  const d: Destroying = { cluster, plan, o, keptPvcNamespaces: new Set(), keep, caSecrets, workloads: [] };
  const items: DestroyItem[] = [];
  for (const ref of order) items.push(await destroyOne(d, ref));
  return items;
}

export interface WaitGoneOptions {
  /** Seconds. @default RUN_DEFAULTS.destroyTimeoutSeconds */
  readonly timeoutSeconds?: number;
  /** A progress line (stderr): what is still there, on each change and every `intervalSeconds`. */
  readonly progress: (line: string) => void;
  /** @default 5 */
  readonly intervalSeconds?: number;
  /** @default 1000 */
  readonly pollMs?: number;
}

/** Why a deleted object is still there: Terminating (a namespace being emptied), its finalizers, a pod's grace period. */
function lingering(obj: KubernetesObject): string {
  const finalizers = [...(obj.metadata?.finalizers ?? []), ...((obj as { spec?: { finalizers?: string[] } }).spec?.finalizers ?? [])];
  const phase = (obj as { status?: { phase?: string } }).status?.phase;
  const why = [obj.kind === 'Namespace' && phase === 'Terminating' ? 'Terminating' : 'being deleted', finalizers.length ? `finalizers ${finalizers.join(', ')}` : ''];
  return why.filter(Boolean).join(', ');
}

/**
 * As `kubectl delete` waits: until every deleted object is gone (a Namespace too, which the API
 * server keeps Terminating until it is empty; one made again with another uid counts as gone), or the deadline passes (exit 1, naming what is
 * still there; the cluster goes on deleting it). Returns the seconds waited.
 */
export async function waitGone(cluster: Cluster, items: readonly DestroyItem[], o: WaitGoneOptions): Promise<number> {
  const started = Date.now();
  const timeout = o.timeoutSeconds ?? RUN_DEFAULTS.destroyTimeoutSeconds;
  const deadline = started + timeout * 1000;
  let pending = items.filter((i) => i.result === 'deleted' && i.ref).map((i) => ({ ref: i.ref!, uid: i.uid }));
  let said = '';
  let saidAt = 0;
  for (;;) {
    const still: Array<{ ref: ObjectRef; uid?: string; why: string }> = [];
    for (const { ref, uid } of pending) {
      const obj = await cluster.get(ref).catch((e) => (e instanceof MissingKind ? undefined : Promise.reject(e)));
      // made again under the same name since the delete: the deleted one is gone
      const remade = uid !== undefined && obj?.metadata?.uid !== undefined && obj.metadata.uid !== uid;
      if (obj && !remade) still.push({ ref, uid, why: lingering(obj) });
    }
    pending = still.map(({ ref, uid }) => ({ ref, uid }));
    const seconds = (Date.now() - started) / 1000;
    if (pending.length === 0) return seconds;
    const what = still.map((s) => `${refString(s.ref)} (${s.why})`);
    const shown = what.length > 3 ? `${what.slice(0, 3).join(', ')} and ${what.length - 3} more` : what.join(', ');
    if (Date.now() >= deadline) {
      throw new RuntimeError(`timed out after ${timeout}s waiting for what destroy deleted to be gone: ${pending.length} still there: ${shown}; `
        + 'the cluster goes on deleting them (run the same destroy again to wait again; --timeout waits longer)', EXIT.stepFailed);
    }
    const line = `waiting for ${pending.length} deleted object${pending.length > 1 ? 's' : ''} to be gone: ${shown}`;
    if (line !== said || Date.now() - saidAt >= (o.intervalSeconds ?? 5) * 1000) {
      o.progress(`${line} (${Math.floor(seconds)}s of ${timeout}s)`);
      said = line;
      saidAt = Date.now();
    }
    await new Promise((r) => setTimeout(r, Math.min(o.pollMs ?? 1000, Math.max(0, deadline - Date.now()))));
  }
}
