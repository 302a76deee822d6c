/**
 * The runtime's client: server-side apply, reads, lists, deletes, watches and container logs of
 * the objects of a plan, on the Kubernetes layer (src/kube: the bounded transport, credentials per
 * request, one ApiError, the object API, the informer), with the runtime's retries and error words
 * (src/kube/retry.ts) and discovery through kubectl's disk cache (src/kube/discovery.ts).
 * Everything above this file deals in objects.
 */
import { KubeConfig, KubernetesObject, PatchStrategy, V1APIGroupList, V1APIResource, V1APIResourceList } from '@kubernetes/client-node';
import { KubeClient } from './connection';
import { followLog, readLog } from './logs';
import { listAll, ListPage } from './pager';
import { defaultLimits, HttpLimits } from './transport';
import type { ObjectRef } from '../plan/types';
import { apiSilenceBounds, BackoffOptions } from './backoff';
import { DiscoveringApi } from './discovery';
import { DiscoveryCache, discoveryCacheDir } from './discovery-cache';
import { ApiError, ClusterMisbehaved, Endpoint, MissingKind, Unreachable } from './api-errors';
import { RetryContext, withRetries } from './retry';
import { Listing, ListWatch, WatchHandle, WatchQuery, WatchSource } from './list-watch';

export const FIELD_MANAGER = 'uyuni-cdk';

function refOf(obj: KubernetesObject): ObjectRef {
  return { apiVersion: obj.apiVersion ?? '', kind: obj.kind ?? '', name: obj.metadata?.name ?? '', namespace: obj.metadata?.namespace };
}

export function refString(r: ObjectRef): string {
  return `${r.kind}/${r.name}${r.namespace ? ` (${r.namespace})` : ''}`;
}

export class Cluster implements RetryContext {
  /** The connection: kubeconfig, limits, credentials per request (src/kube/connection.ts). */
  readonly client: KubeClient;
  readonly api: DiscoveringApi;
  /** Timeouts, size cap and deadline of every request (src/kube/transport.ts). */
  readonly limits: HttpLimits;
  private started = false;
  private answered = false;
  /** Counts requests that were retried, for the run summary. */
  retries = 0;
  /**
   * Called before every write (not a dry run) with what it writes: throws to stop it. The lock
   * of a run (src/runtime/safety/lock.ts) sets it: a run whose lock was taken or could not be renewed
   * writes nothing more.
   */
  fence?: (ref: ObjectRef, what: string) => void;
  /**
   * Told when the API server stops answering (connections refused or reset after it had
   * answered: a restart) and when it answers again; the verbs say so on stderr.
   */
  onAvailability?: (answers: boolean, detail: string) => void;
  /** Since when (ms) the API server has not answered, while it does not. */
  private downSince?: number;

  constructor(readonly kc: KubeConfig, readonly backoff: BackoffOptions = {}) {
    this.client = new KubeClient(kc, defaultLimits());
    this.limits = this.client.limits;
    this.api = new DiscoveringApi(this.client);
    this.api.disk = new DiscoveryCache(discoveryCacheDir(this.client.server));
  }

  /** Set once a step ran: a misbehaving API is then a failed step (1), not an unusable cluster (3). */
  get inStep(): boolean {
    return this.started;
  }

  /** Set once the API server answered: later refused connections are an API server restart. */
  get reachable(): boolean {
    return this.answered;
  }

  retried(): void {
    this.retries++;
  }

  apiDown(code: string): void {
    if (this.downSince !== undefined) return;
    this.downSince = Date.now();
    const last = this.limits.lastAnswerAt;
    const bound = Math.round(apiSilenceBounds(this.limits.requestTimeoutMs).failMs / 1000);
    this.onAvailability?.(false, `the API server does not answer (${code} from ${this.server}${last ? `, last answer ${new Date(last).toISOString()}` : ''}); `
      + `retrying until it does, for up to ${bound} s after its last answer ($UYUNI_CDK_API_SILENT_SECONDS)`);
  }

  apiUp(): void {
    if (this.downSince === undefined) return;
    const s = Math.round((Date.now() - this.downSince) / 1000);
    this.downSince = undefined;
    this.onAvailability?.(true, `the API server answers again (it did not for ${s} s)`);
  }

  /** Nothing (requests, retries, Retry-After waits) outlasts this absolute time (ms). */
  setDeadline(at: number): void {
    this.limits.deadline = this.limits.deadline === undefined ? at : Math.min(this.limits.deadline, at);
  }

  /** A step began: later misbehaviour of the API fails the step (exit 1). */
  stepStarted(): void {
    this.started = true;
  }

  get server(): string {
    return this.client.server;
  }

  /** Whom the requests go to, as whom: what error messages tell the user to check. */
  get endpoint(): Endpoint {
    return { server: this.server, cluster: this.kc.getCurrentCluster()?.name ?? '', user: this.kc.getCurrentUser()?.name ?? '', context: this.kc.getCurrentContext() };
  }

  /** Retries transient failures with backoff (Retry-After honoured); anything else is thrown as ApiError or as is. */
  call<T>(what: string, fn: () => Promise<T>): Promise<T> {
    return withRetries(this, what, fn);
  }

  /**
   * GET /version once, no retry, its failure ignored: asked while waiting when nothing was heard
   * for a while, so that a quiet but healthy API server answers (limits.lastAnswerAt) and a hung
   * one is told apart from a cluster where nothing changes (src/runtime/apply/waiter.ts).
   */
  async probe(): Promise<void> {
    await this.client.request('GET', '/version').catch(() => undefined);
  }

  /**
   * GET /version: proves the API server answers and accepts our credentials. Network and TLS
   * failures, and a server that is no Kubernetes API server, become Unreachable (exit 3);
   * refused credentials are bad input (exit 2).
   */
  async ping(): Promise<string> {
    try {
      const v = await this.call('GET /version', () => this.client.request<{ gitVersion?: string }>('GET', '/version'));
      this.answered = true;
      return v?.gitVersion ?? 'unknown';
    } catch (e) {
      if (e instanceof ApiError) {
        if (e.status === 401 || e.status === 429 || e.status >= 500) throw e;
        if (e.status === 404) {
          throw new Unreachable(`${this.server} answers, but not as a Kubernetes API server (GET /version: HTTP 404); check the server of cluster "${this.endpoint.cluster}" of the kubeconfig`);
        }
        this.answered = true;
        return `unknown (GET /version: ${e.status})`;
      }
      if (e instanceof ClusterMisbehaved) throw new Unreachable(`the cluster at ${this.server} does not answer properly: ${e.message}`);
      if (e instanceof Unreachable) throw new Unreachable(e.message.replace(/^GET \/version: /, ''));
      throw new Unreachable(`cannot reach the cluster at ${this.server}: ${(e as Error).message}`);
    }
  }

  /** Discovery: the resource of a kind, or MissingKind when no CRD serves it. */
  async resource(apiVersion: string, kind: string): Promise<V1APIResource> {
    let r: V1APIResource | undefined;
    try {
      r = await this.call(`discovery ${apiVersion}`, () => this.api.discover(apiVersion, kind));
    } catch (e) {
      if (e instanceof ApiError && e.status === 404) throw new MissingKind(apiVersion, kind);
      throw e;
    }
    if (!r) throw new MissingKind(apiVersion, kind, this.api.served(apiVersion));
    return r;
  }

  /** The apiVersion to use for a group's kinds: `v1` for the core group, else the group's preferred version; undefined when nobody serves it. */
  async groupVersion(group: string): Promise<string | undefined> {
    if (group === '') return 'v1';
    try {
      return await this.call(`discovery ${group}`, () => this.api.preferredVersion(group));
    } catch (e) {
      if (e instanceof ApiError && e.status === 404) return undefined;
      throw e;
    }
  }

  /**
   * Every resource list the server serves: core v1, then each group at its preferred version
   * (what `kubectl api-resources` reads), each with its group version.
   */
  async resourceLists(): Promise<Array<{ gv: string; list: V1APIResourceList }>> {
    const lists: Array<{ gv: string; list: V1APIResourceList }> = [];
    // through our own client, as discovery reads them (object-api.ts): client-node's generated API
    // classes would go into `status`'s bundle (test/build/bundle.test.ts)
    lists.push({ gv: 'v1', list: await this.call('discovery v1', () => this.client.request<V1APIResourceList>('GET', '/api/v1')) });
    const groups = await this.call('discovery /apis', () => this.client.request<V1APIGroupList>('GET', '/apis'));
    for (const g of groups.groups ?? []) {
      const pv = g.preferredVersion ?? g.versions[0];
      if (!pv) continue;
      lists.push({ gv: pv.groupVersion, list: await this.call(`discovery ${pv.groupVersion}`, () => this.client.request<V1APIResourceList>('GET', `/apis/${pv.groupVersion}`)) });
    }
    return lists;
  }

  /**
   * After a 404 other than the API server's `<resource> "<name>" not found` of an absent object:
   * if the kind's discovery came from disk, ask the server again (MissingKind when it is gone).
   */
  private async recheckKind(r: { apiVersion: string; kind: string; name?: string }, e: ApiError): Promise<void> {
    if (r.name !== undefined && e.message.includes(`"${r.name}" not found`)) return;
    if (this.api.forgetFromDisk(r.apiVersion)) await this.resource(r.apiVersion, r.kind);
  }

  /** An object, or undefined when it does not exist; typed as the kind asked for. */
  async get<T extends KubernetesObject = KubernetesObject>(ref: ObjectRef): Promise<T | undefined> {
    await this.resource(ref.apiVersion, ref.kind);
    try {
      return await this.call(`GET ${refString(ref)}`, () =>
        this.api.read({ apiVersion: ref.apiVersion, kind: ref.kind, metadata: { name: ref.name, namespace: ref.namespace } })) as T;
    } catch (e) {
      if (e instanceof ApiError && e.status === 404) {
        await this.recheckKind(ref, e);
        return undefined;
      }
      throw e;
    }
  }

  /** Every object of a kind (all pages, src/kube/pager.ts); typed as the kind asked for. */
  async list<T extends KubernetesObject = KubernetesObject>(q: WatchQuery): Promise<Listing<T>> {
    await this.resource(q.apiVersion, q.kind);
    const l = await listAll<KubernetesObject>((cont) => this.call(`LIST ${q.kind}`, () =>
      this.api.list(q.apiVersion, q.kind, q.namespace, undefined, undefined, undefined, q.fieldSelector, q.labelSelector, 500, cont) as Promise<ListPage<KubernetesObject>>)
      .catch(async (e) => {
        if (e instanceof ApiError && e.status === 404) await this.recheckKind(q, e);
        throw e;
      }));
    return { items: l.items.map((it) => ({ apiVersion: q.apiVersion, kind: q.kind, ...it }) as T), resourceVersion: l.resourceVersion };
  }

  /** Server-side apply, one field manager (`manager`: another, for fields the plan's own apply must leave alone), force (we own what we synthesized). */
  async apply(obj: KubernetesObject, dryRun = false, manager = FIELD_MANAGER): Promise<KubernetesObject> {
    if (!dryRun) this.fence?.(refOf(obj), 'apply');
    await this.resource(obj.apiVersion!, obj.kind!);
    return this.call(`apply ${refString(refOf(obj))}`, () =>
      this.api.patch(obj, undefined, dryRun ? 'All' : undefined, manager, true, PatchStrategy.ServerSideApply));
  }

  async create(obj: KubernetesObject): Promise<KubernetesObject> {
    this.fence?.(refOf(obj), 'create');
    await this.resource(obj.apiVersion!, obj.kind!);
    return this.call(`create ${refString(refOf(obj))}`, () => this.api.create(obj, undefined, undefined, FIELD_MANAGER));
  }

  async mergePatch(ref: ObjectRef, patch: object): Promise<KubernetesObject> {
    this.fence?.(ref, 'patch');
    await this.resource(ref.apiVersion, ref.kind);
    const body = { apiVersion: ref.apiVersion, kind: ref.kind, metadata: { name: ref.name, namespace: ref.namespace }, ...patch };
    return this.call(`patch ${refString(ref)}`, () =>
      this.api.patch(body as KubernetesObject, undefined, undefined, FIELD_MANAGER, undefined, PatchStrategy.MergePatch));
  }

  /** Deletes with propagationPolicy Background (without it a Job's pods are orphaned). False when already gone. */
  async delete(ref: ObjectRef, propagationPolicy = 'Background'): Promise<boolean> {
    this.fence?.(ref, 'delete');
    await this.resource(ref.apiVersion, ref.kind);
    try {
      await this.call(`delete ${refString(ref)}`, () =>
        this.api.delete({ apiVersion: ref.apiVersion, kind: ref.kind, metadata: { name: ref.name, namespace: ref.namespace } },
          undefined, undefined, undefined, undefined, propagationPolicy));
      return true;
    } catch (e) {
      if (e instanceof ApiError && e.status === 404) {
        await this.recheckKind(ref, e);
        return false;
      }
      throw e;
    }
  }

  private async collectionPath(q: WatchQuery): Promise<string> {
    const r = await this.resource(q.apiVersion, q.kind);
    const base = q.apiVersion.includes('/') ? `/apis/${q.apiVersion}` : `/api/${q.apiVersion}`;
    return r.namespaced && q.namespace ? `${base}/namespaces/${q.namespace}/${r.name}` : `${base}/${r.name}`;
  }

  /** A list-watch (src/kube/list-watch.ts); the items are typed as the kind asked for. */
  watch<T extends KubernetesObject = KubernetesObject>(q: WatchQuery, onChange: (items: ReadonlyMap<string, T>) => void, onError?: (e: Error) => void): WatchHandle {
    const source: WatchSource = {
      client: this.client,
      list: (x) => this.list(x),
      collectionPath: (x) => this.collectionPath(x),
      backoff: this.backoff,
      retried: () => this.retried(),
      apiDown: (code) => this.apiDown(code),
      apiUp: () => this.apiUp(),
    };
    return new ListWatch(source, q, onChange as (items: ReadonlyMap<string, KubernetesObject>) => void, onError);
  }

  /** A container's log so far (for facts and for failure reports); `previous`: its run before the last restart. */
  readLog(namespace: string, pod: string, container: string, tailLines?: number, previous?: boolean): Promise<string> {
    return this.call(`logs ${pod}/${container}`, () => readLog(this.client, namespace, pod, container, { tailLines, previous }));
  }

  /**
   * Follows a container's log. Resolves once streaming began; `onEnd` when the stream closes
   * (the container terminated: no argument) or was cut off (silent past the idle limit, broken:
   * the error). Rejects with ApiError 400 while the container is still waiting.
   * `tailLines`: only that many lines from before (0: only new ones, after a cut).
   */
  async followLog(namespace: string, pod: string, container: string, onChunk: (text: string) => void, onEnd: (err?: Error) => void, tailLines?: number): Promise<WatchHandle> {
    let ended = false;
    const end = (err?: Error) => { if (!ended) { ended = true; onEnd(err); } };
    const h = await followLog(this.client, namespace, pod, container, { tailLines, onChunk, onEnd: (err) => end(err ?? undefined) });
    return { stop: () => { h.abort(); end(); } };
  }
}
