/**
 * Ownership: whose an object in the cluster is, so that `run` never takes over what another plan
 * or another tool made, and `destroy` never deletes a namespace that holds what it does not own
 * (docs/runtime.md, "Ownership and adoption"). Returns data; `run` refuses on it (or adopts with
 * `--adopt`), `plan` lists it, `destroy` keeps a namespace on it.
 *
 * An object is ours when it carries the plan's selector (`app.kubernetes.io/managed-by:
 * uyuni-cdk` and the plan's `app.kubernetes.io/part-of`) and, if it is a member of an ApplySet,
 * of the plan's own. Anything else has another owner, named from what it carries: another plan
 * (its part-of), a Helm release (`meta.helm.sh/release-name`), another tool
 * (`app.kubernetes.io/managed-by`), another ApplySet, or the field managers of its managedFields.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import { APPLYSET, serverPartOf, LABELS, MANAGED_BY, ObjectRef, Plan } from '../../plan/types';
import { applySetOf, TOOLING_NAME } from '../core/applyset';
import { Cluster, FIELD_MANAGER, refString } from '../../kube/cluster';
import { ApiError, MissingKind } from '../../kube/api-errors';
import { LOCK_NAME } from './lock';
import { readObjects } from '../core/live-reads';
import { Manifest, refOf } from '../core/manifests';
import type { ObjectId } from '../core/events';

/**
 * An object the plan writes that exists and belongs to another owner (`Foreign` below), with what
 * `run` does with it: takes it over (marked `uyuni-cdk.io/adopted-from` once the run goes on) or
 * refuses the whole run before any write. Part of the plan verdict (decide/plan-result.ts).
 */
export interface PlannedTakeover {
  /** `Service/web (uyuni)` */
  readonly object: string;
  readonly id: ObjectId;
  /** `Helm release uyuni/uyuni`, `field manager kubectl-client-side-apply`, ... */
  readonly owner: string;
  /** Why it is not ours. */
  readonly reason: string;
  /** `--adopt` may take it over; false for another plan's ApplySet in the namespace. */
  readonly adoptable: boolean;
  /** A namespace made by hand for the plan: taken over without `--adopt`, never deleted by destroy. */
  readonly byDesign?: boolean;
  readonly action: 'adopt' | 'refuse';
  /**
   * An upgrade's take-over of the install it upgrades, without `--adopt`: a destructive change,
   * asked with the others (destructive.ts `adopt`).
   */
  readonly asked?: boolean;
}

/** Set by `run --adopt` on what it took over: from whom. A Namespace carrying it was not created by the plan. */
export const ADOPTED_FROM = 'uyuni-cdk.io/adopted-from';

const HELM_RELEASE = 'meta.helm.sh/release-name';
const HELM_NAMESPACE = 'meta.helm.sh/release-namespace';

export interface Foreign {
  readonly ref: ObjectRef;
  /** `Service/web (uyuni)` */
  readonly object: string;
  /** Who it belongs to: `plan install (part-of uyuni)`, `Helm release uyuni/uyuni`, `field manager kubectl-client-side-apply`, ... */
  readonly owner: string;
  /** Why it is not ours. */
  readonly reason: string;
  /** `--adopt` may take it over; false for another plan's ApplySet in the namespace. */
  readonly adoptable: boolean;
  /**
   * Adopted without `--adopt`: a bare Namespace, made by hand (`kubectl create namespace`, as the
   * README has the user do before a migration, to put its Secrets in) and carrying no other
   * tool's marks. It is marked adopted, so `destroy` never deletes it.
   */
  readonly byDesign?: boolean;
}

/**
 * Whether `run` stops on this object: another owner's, not adopted by design nor with `--adopt`.
 * An upgrade takes over the install it upgrades (the upstream chart's, mgradm's) by design:
 * `upgrade` true, what `--adopt` could take is adopted, asked first with the destructive changes.
 */
export const refuses = (f: Pick<Foreign, 'byDesign' | 'adoptable'>, adopt: boolean, upgrade = false) => !f.byDesign && (!(adopt || upgrade) || !f.adoptable);

/** Whether a plan upgrades an install (src/plan/types.ts `Plan.flow`): it adopts that install's objects, asking. */
export const upgrades = (plan: Plan) => plan.flow?.kind === 'upgrade';

/**
 * A Namespace nobody but kubectl (or nobody at all) ever wrote, with no tool's label or annotation.
 * Our own `adopted-from` alone does not count: a run refused after marking it (before issue 38)
 * left it on a namespace that is still bare.
 */
function bareNamespace(o: KubernetesObject): boolean {
  if (o.kind !== 'Namespace') return false;
  const labels = Object.keys(o.metadata?.labels ?? {}).filter((k) => k !== 'kubernetes.io/metadata.name');
  const annotations = Object.keys(o.metadata?.annotations ?? {}).filter((k) => k !== ADOPTED_FROM);
  return labels.length === 0 && annotations.length === 0 && managersOf(o).every((m) => m.startsWith('kubectl'));
}

function carries(o: KubernetesObject, selector: Readonly<Record<string, string>>): boolean {
  return Object.entries(selector).every(([k, v]) => o.metadata?.labels?.[k] === v);
}

/** The field managers of an object other than ours, as kubectl shows them. */
function managersOf(o: KubernetesObject): string[] {
  return [...new Set((o.metadata?.managedFields ?? []).map((f) => f.manager ?? '').filter((m) => m && m !== FIELD_MANAGER))];
}

/** Who else an object belongs to, or undefined when it is the plan's. */
export function ownerOf(o: KubernetesObject, plan: Plan): Omit<Foreign, 'ref' | 'object' | 'adoptable'> | undefined {
  const labels = o.metadata?.labels ?? {};
  const annotations = o.metadata?.annotations ?? {};
  const setId = applySetOf(plan).id;
  const member = labels[APPLYSET.partOf];
  const partOf = plan.selector[LABELS.partOf];
  if (carries(o, plan.selector) && (member === undefined || member === setId)) return undefined;
  if (labels[LABELS.managedBy] === MANAGED_BY) {
    const theirs = labels[LABELS.partOf];
    if (theirs !== partOf) {
      return { owner: `uyuni-cdk plan ${labels[LABELS.plan] ?? theirs ?? '(unknown)'} (part-of ${theirs ?? '(none)'})`, reason: `part-of ${theirs ?? '(none)'}, not ${partOf}` };
    }
    if (member !== undefined && member !== setId) return { owner: `the uyuni-cdk ApplySet ${member}`, reason: `a member of ApplySet ${member}, not ${setId}` };
    const missing = Object.entries(plan.selector).filter(([k, v]) => labels[k] !== v).map(([k, v]) => `${k}=${v}`);
    return { owner: `uyuni-cdk plan ${labels[LABELS.plan] ?? '(unknown)'}`, reason: `lacks ${missing.join(', ')}` };
  }
  const reason = `no ${LABELS.managedBy}=${MANAGED_BY}`;
  if (annotations[HELM_RELEASE]) return { owner: `Helm release ${annotations[HELM_NAMESPACE] ?? o.metadata?.namespace ?? ''}/${annotations[HELM_RELEASE]}`, reason };
  if (labels[LABELS.managedBy]) return { owner: `${labels[LABELS.managedBy]} (${LABELS.managedBy})`, reason };
  if (member) return { owner: `ApplySet ${member}`, reason };
  const managers = managersOf(o);
  if (managers.length) return { owner: `field manager${managers.length > 1 ? 's' : ''} ${managers.join(', ')}`, reason };
  return { owner: 'nobody known (no managed-by label, no field manager)', reason };
}

/**
 * Every object the plan writes that exists and is not the plan's, in plan order: one LIST per
 * kind and namespace that holds several of them, a GET for the others (live-reads.ts). `namespaceExists` false
 * (the lock found no namespace): nothing namespaced there can exist, only the rest is read.
 */
export async function foreignObjects(cluster: Cluster, plan: Plan, objectsOf: (step: string) => readonly Manifest[], namespaceExists = true): Promise<Foreign[]> {
  const refs = plan.steps.flatMap((s) => objectsOf(s.name).map(refOf)).filter((r) => namespaceExists || r.namespace !== plan.namespace);
  // one LIST per kind and namespace, a GET for the others, together (on `plan`'s snapshot: the objects its diffs read)
  const lives = await readObjects(cluster, refs);
  const out: Foreign[] = [];
  for (const [i, ref] of refs.entries()) {
    const live = lives[i];
    if (!live) continue;
    const owner = ownerOf(live, plan);
    if (owner) out.push({ ref, object: refString(ref), ...owner, adoptable: true, ...(bareNamespace(live) ? { byDesign: true } : {}) });
  }
  return out;
}

/**
 * Other uyuni-cdk plans in the plan's namespace: their ApplySet parents. A namespace holds one
 * plan's set, so `-n` cannot put a plan beside another (not even with --adopt).
 */
export async function otherPlansIn(cluster: Cluster, plan: Plan): Promise<Foreign[]> {
  const ours = applySetOf(plan).parent;
  let items: KubernetesObject[];
  try {
    ({ items } = await cluster.list({ apiVersion: 'v1', kind: 'ConfigMap', namespace: plan.namespace, labelSelector: APPLYSET.id }));
  } catch (e) {
    if (e instanceof MissingKind) return [];
    throw e;
  }
  // a server, its backup plan and its db-basebackup plan share the namespace by design
  // (src/plan/types.ts BACKUP_PART_OF_SUFFIX, DB_ARCHIVE_PART_OF_SUFFIX): each its own ApplySet
  const mine = plan.selector[LABELS.partOf] ?? '';
  const companion = (theirs: string) => theirs !== mine && serverPartOf(theirs) === serverPartOf(mine);
  return items
    .filter((cm) => cm.metadata?.name !== ours.name && (cm.metadata?.annotations?.[APPLYSET.tooling] ?? '').split('/')[0] === TOOLING_NAME)
    .filter((cm) => !companion(cm.metadata?.labels?.[LABELS.partOf] ?? ''))
    .map((cm) => {
      const ref = refOf(cm);
      const partOf = cm.metadata?.labels?.[LABELS.partOf] ?? '(unknown)';
      return {
        ref, object: refString(ref), owner: `uyuni-cdk plan ${cm.metadata?.labels?.[LABELS.plan] ?? partOf} (part-of ${partOf})`,
        reason: `namespace ${plan.namespace} holds the ApplySet of another plan; use another namespace, or destroy that plan first`, adoptable: false,
      };
    });
}

/** What `run` would take over: the objects of other owners, and other plans in the namespace. */
export async function takeovers(cluster: Cluster, plan: Plan, objectsOf: (step: string) => readonly Manifest[], namespaceExists = true): Promise<Foreign[]> {
  // the other plans' parents read with the objects, not after them (issue 36)
  const otherPlans = namespaceExists ? otherPlansIn(cluster, plan) : Promise.resolve([]);
  otherPlans.catch(() => undefined);
  const foreign = await foreignObjects(cluster, plan, objectsOf, namespaceExists);
  // A bare namespace is the plan's by design only while it holds nothing but what the plan needs
  // made first (its required Secrets and ConfigMaps): one with another team's objects is theirs.
  const required = new Set(plan.steps.flatMap((s) => s.requires.map((r) => `${r.kind}/${r.name}`)));
  // an admin's policy for the namespace (its quota, its limits) is no other team's object
  const policy = (o: string) => /^(ResourceQuota|LimitRange)\//.test(o);
  const checked = await Promise.all(foreign.map(async (f) => {
    if (!f.byDesign) return f;
    const others = (await othersIn(cluster, plan, f.ref.name)).filter((o) => !required.has(o.split(' ')[0]) && !policy(o));
    if (others.length === 0) return f;
    const { byDesign: _made, ...rest } = f;
    return { ...rest, reason: `${f.reason}; it holds ${others.length} object(s) of others: ${others.slice(0, 3).join(', ')}${others.length > 3 ? ', …' : ''}` };
  }));
  return [...await otherPlans, ...checked];
}

/** What a plan's take-overs look like to `plan`: each adopted or refused, with its owner and why. */
export function renderTakeovers(items: readonly PlannedTakeover[]): string[] {
  if (items.length === 0) return [];
  const anyRefused = items.some((i) => i.action === 'refuse');
  const lines = [anyRefused ? 'Refused: objects of other owners (run stops before any write; --adopt takes over those marked adoptable):' : 'Adopts, from their owners:'];
  const why = (i: PlannedTakeover) => (i.byDesign ? 'a namespace made by hand for the plan: adopted, never deleted by destroy'
    : i.asked ? `${i.reason}; the upgrade takes over the install it upgrades, asked first` : i.reason);
  for (const i of items) lines.push(`  ${i.action}  ${i.object}  owner: ${i.owner}  (${why(i)})`);
  return lines;
}

/** The one-paragraph refusal of a run: each object it refuses to take over, with its owner. */
export function refusalMessage(items: readonly PlannedTakeover[]): string {
  const refused = items.filter((i) => i.action === 'refuse');
  const list = refused.map((i) => `${i.object} belongs to ${i.owner} (${i.reason})`).join('; ');
  const hint = refused.some((i) => i.adoptable) ? ': nothing written; run with --adopt to take them over' : ': nothing written';
  return `refusing to take over ${refused.length} object(s): ${list}${hint}`;
}

/**
 * Marks each object taken over with whom it was taken from (`uyuni-cdk.io/adopted-from`), once
 * the run goes on: after the refusals and the question, before the run applies it.
 */
export async function markAdopted(cluster: Cluster, items: ReadonlyArray<{ ref: ObjectRef; owner: string }>, onAdopted: (i: { ref: ObjectRef; owner: string }) => void): Promise<void> {
  for (const i of items) {
    // the patch's metadata replaces the one Cluster.mergePatch names the object with: name it again
    await cluster.mergePatch(i.ref, { metadata: { name: i.ref.name, namespace: i.ref.namespace, annotations: { [ADOPTED_FROM]: i.owner } } });
    onAdopted(i);
  }
}

/** Kinds whose objects the API server makes for any namespace or for other objects: never an other team's. */
const CLUSTER_MADE = new Set(['Event', 'Endpoints', 'EndpointSlice', 'PodMetrics', 'LocalSubjectAccessReview', 'Binding']);

/** Made for another object of the namespace (its ownerReferences, cert-manager's Secret of a Certificate), or by the API server itself. */
function derived(o: KubernetesObject): boolean {
  const name = o.metadata?.name;
  if ((o.metadata?.ownerReferences ?? []).length > 0) return true;
  if (o.kind === 'ServiceAccount' && name === 'default') return true;
  if (o.kind === 'ConfigMap' && name === 'kube-root-ca.crt') return true;
  if (o.kind === 'Lease' && name === LOCK_NAME) return true;
  if (o.kind === 'Secret' && (o.metadata?.annotations?.['cert-manager.io/certificate-name'] || (o as { type?: string }).type === 'kubernetes.io/service-account-token')) return true;
  return false;
}

/** The namespaced kinds the cluster serves that can be listed, each once, at its group's preferred version. */
async function listableKinds(cluster: Cluster): Promise<Array<{ apiVersion: string; kind: string }>> {
  const lists = await cluster.resourceLists();
  const out: Array<{ apiVersion: string; kind: string }> = [];
  for (const { gv, list } of lists) {
    for (const r of list.resources ?? []) {
      if (!r.namespaced || r.name.includes('/') || !(r.verbs ?? []).includes('list') || CLUSTER_MADE.has(r.kind)) continue;
      if (!out.some((x) => x.kind === r.kind && x.apiVersion.split('/')[0] === gv.split('/')[0])) out.push({ apiVersion: gv, kind: r.kind });
    }
  }
  return out;
}

/**
 * Everything in the namespace that is neither the plan's (its selector) nor made for something
 * in it: what deleting the Namespace would take along from others.
 */
export async function othersIn(cluster: Cluster, plan: Plan, namespace: string): Promise<string[]> {
  const out: string[] = [];
  for (const k of await listableKinds(cluster)) {
    let items: KubernetesObject[];
    try {
      ({ items } = await cluster.list({ ...k, namespace }));
    } catch (e) {
      if (e instanceof MissingKind) continue;
      // what we may not read may hold others' objects: that keeps the namespace too
      if (e instanceof ApiError && e.status === 403) {
        out.push(`${k.kind} (${k.apiVersion}: not allowed to list them)`);
        continue;
      }
      throw e;
    }
    for (const o of items) {
      if (carries(o, plan.selector) || derived(o)) continue;
      const owner = ownerOf(o, plan);
      out.push(`${o.kind}/${o.metadata?.name}${owner ? ` (${owner.owner})` : ''}`);
    }
  }
  return out;
}
