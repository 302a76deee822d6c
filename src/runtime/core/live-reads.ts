/**
 * One read of each live object a decision looks at (issue 36): `plan` (and `run`'s decision under
 * its lock) and `status` read many objects of few kinds. They are read as `kubectl get` does, one
 * LIST per kind and namespace that holds several of them, a GET for the others, all at once within
 * one read bound (src/kube/limit.ts), never one GET after another; a LIST that RBAC forbids (a
 * user who may only get) falls back to the GETs. A snapshot keeps each answer, so that the diffs,
 * the refusals and the ownership checks of one decision see the same objects, read once.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import type { ObjectRef } from '../../plan/types';
import { Limit, limiter } from '../../kube/limit';
import type { Cluster } from '../../kube/cluster';
import { ApiError, MissingKind } from '../../kube/api-errors';

type Read = Promise<KubernetesObject | undefined>;

const refKey = (r: ObjectRef) => `${r.apiVersion}\0${r.kind}\0${r.namespace ?? ''}\0${r.name}`;
const groupKey = (r: ObjectRef) => `${r.apiVersion}\0${r.kind}\0${r.namespace ?? ''}`;

class Snapshot {
  private readonly read = new Map<string, Read>();

  constructor(private readonly cluster: Cluster, private readonly limit: Limit) {}

  /** The object as read (a GET now unless it was read or is being read); MissingKind when nobody serves its kind. */
  get(ref: ObjectRef): Read {
    const key = refKey(ref);
    let p = this.read.get(key);
    if (!p) {
      p = this.limit(() => this.cluster.get(ref));
      this.keep(key, p);
    }
    return p;
  }

  list: Cluster['list'] = (q) => this.limit(() => this.cluster.list(q));

  /**
   * Starts reading `refs`: one LIST per kind and namespace for several of a kind (not Secrets: a
   * LIST of them would read every credential of the namespace), a GET for each other. With
   * `labelSelector` the LISTs carry it (`status`: the plan's selector, which every object of a
   * plan carries): an object without those labels is read as absent.
   */
  prefetch(refs: readonly ObjectRef[], labelSelector?: string): void {
    const groups = new Map<string, ObjectRef[]>();
    for (const r of refs) {
      if (this.read.has(refKey(r))) continue;
      const listed = Boolean(r.namespace) && r.kind !== 'Secret';
      const key = listed ? groupKey(r) : refKey(r);
      const g = groups.get(key) ?? [];
      if (!g.some((x) => x.name === r.name)) g.push(r);
      groups.set(key, g);
    }
    for (const g of groups.values()) {
      if (g.length === 1) {
        this.get(g[0]);
        continue;
      }
      const first = g[0];
      const listing = this.limit(() => this.cluster.list({ apiVersion: first.apiVersion, kind: first.kind, namespace: first.namespace, ...(labelSelector ? { labelSelector } : {}) }))
        .then((l) => new Map(l.items.map((it) => [it.metadata?.name ?? '', it])), (e: unknown) => {
          if (e instanceof ApiError && e.status === 403) return undefined;
          throw e;
        });
      for (const r of g) {
        // forbidden to list: each object by GET, still within the bound
        this.keep(refKey(r), listing.then((byName) => (byName ? byName.get(r.name) : this.limit(() => this.cluster.get(r)))));
      }
    }
  }

  private keep(key: string, p: Read): void {
    // awaited by whoever asks; one nobody asks for rejects unheard
    p.catch(() => undefined);
    this.read.set(key, p);
  }
}

const snapshots = new WeakMap<Cluster, Snapshot>();

/**
 * `cluster` for one decision: its GETs and LISTs within `limit`, each object read once (the first
 * answer kept; the decision writes nothing), `prefetchObjects` reading many together. Everything
 * else (dry runs, discovery, logs) is the cluster's own.
 */
export function withSnapshot(cluster: Cluster, limit: Limit = limiter()): Cluster {
  const snap = new Snapshot(cluster, limit);
  const view = new Proxy(cluster, {
    get(target, key) {
      if (key === 'get') return (ref: ObjectRef) => snap.get(ref);
      if (key === 'list') return snap.list;
      const v: unknown = Reflect.get(target, key, target);
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
  snapshots.set(view, snap);
  return view;
}

/** Starts reading `refs` on a snapshot (`withSnapshot`): one LIST per kind and namespace, GETs for the rest. */
export function prefetchObjects(cluster: Cluster, refs: readonly ObjectRef[], labelSelector?: string): void {
  snapshots.get(cluster)?.prefetch(refs, labelSelector);
}

/**
 * The objects as the cluster has them, in the order given (undefined: absent, or a kind nobody
 * serves): read together, one LIST per kind and namespace, on `cluster`'s snapshot when it is one,
 * else on one of their own within `limit`; the LISTs with `labelSelector` when given (prefetch).
 */
export async function readObjects(cluster: Cluster, refs: readonly ObjectRef[], limit?: Limit, labelSelector?: string): Promise<Array<KubernetesObject | undefined>> {
  const view = snapshots.has(cluster) ? cluster : withSnapshot(cluster, limit);
  prefetchObjects(view, refs, labelSelector);
  return Promise.all(refs.map((r) => view.get(r).catch((e: unknown) => {
    if (e instanceof MissingKind) return undefined;
    throw e;
  })));
}
