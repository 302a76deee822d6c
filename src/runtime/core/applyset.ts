/**
 * The ApplySet (KEP-3659) of a plan: which objects are members, the set's id and parent, and
 * what the parent records. kubectl's implementation is the reference
 * (k8s.io/kubectl/pkg/cmd/apply/applyset.go); docs/runtime.md ("Pruning") says what we decided.
 *
 * - One set per namespace and `app.kubernetes.io/part-of` of the plan's selector: install,
 *   migrate, upgrade and migrate-prepare (part-of `uyuni`) share the server's set; the proxy and
 *   the node services have their own.
 * - Its parent is ConfigMap `<part-of>-applyset` in the plan's namespace (kubectl accepts a
 *   ConfigMap or a Secret as parent; nothing in it is secret).
 * - Members: what `run` applies, except the Namespace (the set's home: deleting it deletes
 *   everything), Jobs and other objects of component `step` (a flow's history, kept for its logs
 *   and records; `destroy` removes them).
 */
import { createHash } from 'crypto';
import type { KubernetesObject, V1ConfigMap } from '@kubernetes/client-node';
import { APPLYSET, LABELS, MANAGED_BY, ObjectRef, Plan } from '../../plan/types';
import { limiter, mapLimited } from '../../kube/limit';
import { Cluster, refString } from '../../kube/cluster';
import { MissingKind } from '../../kube/api-errors';
import { StepFailed } from './errors';

/** The tool name in the parent's tooling annotation; kubectl refuses a set whose tooling is not its own, and so do we. */
export const TOOLING_NAME = 'uyuni-cdk';
/** `<tool>/<version>`, as kubectl writes `kubectl/v1.32.4`. */
export const TOOLING = `${TOOLING_NAME}/v${(require('../../../package.json') as { version: string }).version}`;

/** The component of a flow's history (step Jobs, records, the importer's account): src/model/labels.ts. */
const HISTORY_COMPONENT = 'step';

export interface ApplySet {
  readonly parent: ObjectRef;
  readonly id: string;
}

/** kubectl's id: `applyset-` + base64url-no-padding(sha256(`<name>.<namespace>.<kind>.<group>`)) + `-v1`. */
export function applySetId(parent: ObjectRef): string {
  const unencoded = [parent.name, parent.namespace ?? '', parent.kind, groupOf(parent.apiVersion)].join('.');
  return `applyset-${createHash('sha256').update(unencoded).digest('base64url')}-v1`;
}

export function applySetOf(plan: Plan): ApplySet {
  const partOf = plan.selector[LABELS.partOf] ?? plan.name;
  const parent: ObjectRef = { apiVersion: 'v1', kind: 'ConfigMap', name: `${partOf}-applyset`, namespace: plan.namespace };
  return { parent, id: applySetId(parent) };
}

/** Whether `run` labels the object as a member of its plan's set (and so may prune it later). */
export function isMember(obj: KubernetesObject): boolean {
  return obj.kind !== 'Namespace' && obj.kind !== 'Job' && obj.metadata?.labels?.[LABELS.component] !== HISTORY_COMPONENT;
}

export function groupOf(apiVersion: string): string {
  return apiVersion.includes('/') ? apiVersion.split('/')[0] : '';
}

/** `Kind.group`, or `Kind` for the core group: how kubectl writes a GroupKind. */
export function groupKind(apiVersion: string, kind: string): string {
  const g = groupOf(apiVersion);
  return g ? `${kind}.${g}` : kind;
}

/** A `Kind.group` split back (the kind never holds a dot; the group may). */
export function splitGroupKind(gk: string): { kind: string; group: string } {
  const i = gk.indexOf('.');
  return i < 0 ? { kind: gk, group: '' } : { kind: gk.slice(0, i), group: gk.slice(i + 1) };
}

/** The parent's annotation: sorted, comma-separated, as kubectl's generateKindsAnnotation. */
export function kindsAnnotation(gks: Iterable<string>): string {
  return [...new Set(gks)].sort().join(',');
}

export function parseKinds(annotation: string | undefined): string[] {
  return (annotation ?? '').split(',').map((s) => s.trim()).filter(Boolean);
}

/** The parent as `run` applies it: the set's id, our tooling, the kinds of its members; the plan's selector so `destroy` removes it. */
export function parentObject(plan: Plan, set: ApplySet, gks: Iterable<string>, runId: string): V1ConfigMap {
  return {
    apiVersion: set.parent.apiVersion,
    kind: set.parent.kind,
    metadata: {
      name: set.parent.name,
      namespace: set.parent.namespace,
      labels: { ...plan.selector, [LABELS.managedBy]: MANAGED_BY, [LABELS.run]: runId, [APPLYSET.id]: set.id },
      annotations: { [APPLYSET.tooling]: TOOLING, [APPLYSET.containsGroupKinds]: kindsAnnotation(gks) },
    },
  };
}

/**
 * The parent as the cluster has it: the kinds it records, or none when it does not exist yet. A
 * parent of another tool, or with another id, is refused as kubectl refuses ours: adopting
 * another tool's set would let each prune what the other applied.
 */
export async function readParent(cluster: Cluster, set: ApplySet): Promise<{ kinds: string[]; exists: boolean }> {
  const cm = await cluster.get(set.parent);
  if (!cm) return { kinds: [], exists: false };
  const where = `ApplySet parent ${refString(set.parent)}`;
  const tooling = cm.metadata?.annotations?.[APPLYSET.tooling];
  if (tooling === undefined || tooling.split('/')[0] !== TOOLING_NAME) {
    throw new StepFailed('(run)', `${where} is managed by ${tooling === undefined ? 'no tool (no annotation ' + APPLYSET.tooling + ')' : `"${tooling.split('/')[0]}"`}, not ${TOOLING_NAME}: `
      + `delete it (kubectl -n ${set.parent.namespace} delete configmap ${set.parent.name}) to let ${TOOLING_NAME} manage the set, or apply with that tool`);
  }
  const id = cm.metadata?.labels?.[APPLYSET.id];
  if (id !== set.id) throw new StepFailed('(run)', `${where} has label ${APPLYSET.id}=${id ?? '(none)'}, not ${set.id}`);
  return { kinds: parseKinds(cm.metadata?.annotations?.[APPLYSET.containsGroupKinds]), exists: true };
}

/**
 * The members of the set of the given kinds in the parent's namespace (a kind nobody serves has
 * none): one LIST per kind, together within the read bound (issue 36), in the order of the kinds.
 */
export async function listMembers(cluster: Cluster, set: ApplySet, gks: Iterable<string>, versions: ReadonlyMap<string, string>): Promise<KubernetesObject[]> {
  const lists = await mapLimited([...new Set(gks)], limiter(), async (gk): Promise<KubernetesObject[]> => {
    const { kind, group } = splitGroupKind(gk);
    const apiVersion = versions.get(gk) ?? await cluster.groupVersion(group);
    if (!apiVersion) return [];
    try {
      return (await cluster.list({ apiVersion, kind, namespace: set.parent.namespace, labelSelector: `${APPLYSET.partOf}=${set.id}` })).items;
    } catch (e) {
      if (!(e instanceof MissingKind)) throw e;
      return [];
    }
  });
  return lists.flat();
}

/** The plan's set during a run: the parent is written once, before the first member is applied, and again after pruning. */
export interface RunApplySet {
  readonly set: ApplySet;
  /** The kinds the parent recorded before this run. */
  readonly parentKinds: readonly string[];
  /** The kinds of the members the plan applies, with the apiVersion of each. */
  readonly kinds: ReadonlyMap<string, string>;
  parentWritten: boolean;
}

/**
 * Server-side apply of the parent recording `kinds`. Before the members are applied it records
 * the kinds of before and of now (kubectl's "superset"), so that a run that stops half-way leaves
 * every member findable; after pruning, the kinds of the members that remain.
 */
export async function writeParent(cluster: Cluster, plan: Plan, s: RunApplySet, kinds: Iterable<string>, runId: string): Promise<void> {
  await cluster.apply(parentObject(plan, s.set, kinds, runId));
  s.parentWritten = true;
}
