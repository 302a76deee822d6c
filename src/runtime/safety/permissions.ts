/**
 * What `run` will ask the API server to do, checked before its first write: one
 * SelfSubjectAccessReview per verb and resource (the API server's own RBAC decision for the
 * user of the kubeconfig, as `kubectl auth can-i` asks it). A user whose Role lacks one of them
 * is told which, all at once, before anything is written (docs/runtime.md, "Permissions";
 * the documented Role is docs/rbac/uyuni-cdk-operator.yaml).
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import { ObjectRef, Plan } from '../../plan/types';
import { Manifest } from '../core/manifests';
import { Cluster } from '../../kube/cluster';
import { MissingKind } from '../../kube/api-errors';
import { ACCESS_REVIEW_CONCURRENCY, limiter, mapLimited } from '../../kube/limit';

export interface Permission {
  readonly verb: string;
  readonly group: string;
  readonly resource: string;
  /** Why the run needs it: `Deployment/uyuni (step server): apply`. */
  readonly why: string;
  /** Of a cluster-scoped resource: asked without the namespace (no RoleBinding grants it). */
  readonly clusterScoped?: boolean;
}

const LEASES = { group: 'coordination.k8s.io', resource: 'leases' };

/** `deployments.apps`, `configmaps`: as RBAC and `kubectl auth can-i` name a resource. */
export const resourceName = (p: Pick<Permission, 'group' | 'resource'>) => (p.group ? `${p.resource}.${p.group}` : p.resource);

const groupOf = (apiVersion: string) => (apiVersion.includes('/') ? apiVersion.split('/')[0] : '');

/**
 * The verbs a run of the plan sends, per resource, each with its first reason: a server-side
 * apply (and its dry run) is `patch` after a `get`; a Job is deleted before a rerun; the steps'
 * waits list and watch; the run's lock is a Lease; its record a ConfigMap; generated credentials
 * are created Secrets.
 */
export async function neededPermissions(cluster: Cluster, plan: Plan, objectsOf: (step: string) => readonly Manifest[]): Promise<Permission[]> {
  const out = new Map<string, Permission>();
  const need = (verb: string, group: string, resource: string, why: string) => {
    const key = `${verb} ${group}/${resource}`;
    if (!out.has(key)) out.set(key, { verb, group, resource, why });
  };
  const discover = async (r: Pick<ObjectRef, 'apiVersion' | 'kind'>): Promise<string | undefined> => {
    try {
      return (await cluster.resource(r.apiVersion, r.kind)).name;
    } catch (e) {
      // a kind nobody serves is reported where it is applied (a missing CRD), not as a permission
      if (e instanceof MissingKind) return undefined;
      throw e;
    }
  };
  // every kind of the plan discovered together (one round trip, not one per group)
  const kinds = new Map<string, Promise<string | undefined>>();
  const kindKey = (r: Pick<ObjectRef, 'apiVersion' | 'kind'>) => `${r.apiVersion}|${r.kind}`;
  const refs = plan.steps.flatMap((step) => [
    ...objectsOf(step.name).map((o) => ({ apiVersion: o.apiVersion!, kind: o.kind! })), ...step.actions.map((a) => a.object), ...step.waits.map((w) => w.object)]);
  for (const r of refs) if (!kinds.has(kindKey(r))) kinds.set(kindKey(r), discover(r));
  const settled = await Promise.allSettled(kinds.values());
  const failed = settled.find((x): x is PromiseRejectedResult => x.status === 'rejected');
  if (failed) throw failed.reason;
  const plural = (r: Pick<ObjectRef, 'apiVersion' | 'kind'>): Promise<string | undefined> => kinds.get(kindKey(r)) ?? discover(r);
  const described = (o: { kind?: string; name?: string; metadata?: { name?: string } }, step: string) =>
    `${o.kind}/${o.metadata?.name ?? o.name} (step ${step})`;
  need('get', LEASES.group, LEASES.resource, 'the run\'s lock');
  need('create', LEASES.group, LEASES.resource, 'the run\'s lock');
  need('patch', LEASES.group, LEASES.resource, 'the run\'s lock');
  need('delete', LEASES.group, LEASES.resource, 'the run\'s lock');
  need('get', '', 'configmaps', 'the run\'s record');
  need('patch', '', 'configmaps', 'the run\'s record');
  for (const step of plan.steps) {
    for (const o of objectsOf(step.name)) {
      const resource = await plural({ apiVersion: o.apiVersion!, kind: o.kind! });
      if (!resource) continue;
      const group = groupOf(o.apiVersion!);
      need('get', group, resource, `${described(o, step.name)}: apply`);
      need('patch', group, resource, `${described(o, step.name)}: apply`);
      if (o.kind === 'Job') need('delete', group, resource, `${described(o, step.name)}: deleted before a rerun`);
    }
    for (const r of step.requires) {
      const resource = r.kind === 'Secret' ? 'secrets' : 'configmaps';
      need('get', '', resource, `${r.kind}/${r.name} (step ${step.name}): required`);
      if (r.ifMissing === 'generate') need('create', '', resource, `${r.kind}/${r.name} (step ${step.name}): generated when missing`);
    }
    for (const a of step.actions) {
      const resource = await plural(a.object);
      if (resource) need(a.type === 'scale' ? 'patch' : 'delete', groupOf(a.object.apiVersion), resource, `${described(a.object, step.name)}: ${a.type}`);
    }
    for (const w of step.waits) {
      const resource = await plural(w.object);
      if (!resource) continue;
      // the plan's own Namespace is read by name (a Role in it grants that, not a list of all of them)
      if (w.object.kind === 'Namespace') {
        need('get', '', resource, `${described(w.object, step.name)}: waited for`);
        continue;
      }
      need('list', groupOf(w.object.apiVersion), resource, `${described(w.object, step.name)}: waited for`);
      need('watch', groupOf(w.object.apiVersion), resource, `${described(w.object, step.name)}: waited for`);
    }
    if (step.waits.some((w) => w.for === 'bound') && !out.has('list storage.k8s.io/storageclasses')) {
      // a claim of a WaitForFirstConsumer class is done while Pending: without the classes the wait never ends
      out.set('list storage.k8s.io/storageclasses', {
        verb: 'list', group: 'storage.k8s.io', resource: 'storageclasses', clusterScoped: true,
        why: `the waits of step ${step.name}: the claims' StorageClasses (cluster-wide)`,
      });
    }
    if (step.waits.length > 0) {
      need('list', '', 'pods', `the waits of step ${step.name}: their pods`);
      need('watch', '', 'pods', `the waits of step ${step.name}: their pods`);
    }
  }
  return [...out.values()];
}

/** The API server's answer for the user of the kubeconfig: whether it may `verb` the resource in `namespace`. */
async function allowed(cluster: Cluster, namespace: string, p: Permission): Promise<boolean> {
  const review = await cluster.create({
    apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview',
    spec: { resourceAttributes: { ...(p.clusterScoped ? {} : { namespace }), verb: p.verb, group: p.group, resource: p.resource } },
  } as KubernetesObject) as KubernetesObject & { status?: { allowed?: boolean } };
  return review.status?.allowed === true;
}

/**
 * The permissions the plan needs in its namespace that the user lacks (SelfSubjectAccessReview,
 * at most ACCESS_REVIEW_CONCURRENCY in flight); empty when it may do everything the run sends.
 */
export async function missingPermissions(cluster: Cluster, plan: Plan, objectsOf: (step: string) => readonly Manifest[]): Promise<Permission[]> {
  // the kinds the run sends beside the plan's (the reviews, the lock's Lease, and the
  // StorageClasses a claim's wait reads: waiter.ts) discovered with them
  const claims = plan.steps.some((s) => objectsOf(s.name).some((m) => m.kind === 'PersistentVolumeClaim'));
  const own = [['authorization.k8s.io/v1', 'SelfSubjectAccessReview'], ['coordination.k8s.io/v1', 'Lease'], ...(claims ? [['storage.k8s.io/v1', 'StorageClass']] : [])];
  const [needed] = await Promise.all([neededPermissions(cluster, plan, objectsOf), ...own.map(([v, k]) => cluster.resource(v, k).catch(() => undefined))]);
  const answers = await mapLimited(needed, limiter(ACCESS_REVIEW_CONCURRENCY), (p) => allowed(cluster, plan.namespace, p));
  return needed.filter((_, i) => !answers[i]);
}

/** The refusal: every missing permission once, with its reason and how to check it. */
export function permissionRefusal(missing: readonly Permission[], namespace: string): string {
  const lines = missing.map((p) => `  - ${p.verb} ${resourceName(p)} (${p.why}): kubectl${p.clusterScoped ? '' : ` -n ${namespace}`} auth can-i ${p.verb} ${resourceName(p)}`);
  return `refused before any write (nothing was changed): the user of this kubeconfig may not do ${missing.length === 1 ? 'this' : `these ${missing.length} things`} the run needs in namespace ${namespace}:\n${lines.join('\n')}\n  a cluster admin grants them (docs/rbac/uyuni-cdk-operator.yaml lists what run, plan, status and destroy need)`;
}
