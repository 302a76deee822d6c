/**
 * The one place that knows HTTP: server-side apply, reads, deletes, watches and log streams
 * through @kubernetes/client-node, with retries for transient errors (429 Retry-After, 5xx,
 * dropped connections) and relist on 410 Gone. Everything above this file deals in objects.
 */
import { Writable } from 'stream';
import {
  ApiException, createConfiguration, KubeConfig, KubernetesListObject, KubernetesObject, KubernetesObjectApi, Log, PatchStrategy, ServerConfiguration, V1APIResource, VersionApi,
} from '@kubernetes/client-node';
import type { ObjectRef } from '../plan/types';
import { BackoffOptions, parseRetryAfter, retryDelayMs, sleep } from './backoff';
import { ApiError, ClusterMisbehaved, connectionFailure, Endpoint, MissingKind, refusal, Unreachable } from './errors';
import { DiscoveryCache, discoveryCacheDir } from './discovery-cache';
import { defaultLimits, GuardedWatch, guardedHttpLibrary, HttpLimits, isHttpFailure, RequestTimeout, Watcher } from './http';
import { Listing, ListWatch, WatchHandle, WatchQuery, WatchSource } from './watch';

export const FIELD_MANAGER = 'uyuni-cdk';

const NETWORK_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ECONNRESET', 'EHOSTUNREACH', 'ENETUNREACH', 'ETIMEDOUT', 'EPIPE', 'EPROTO', 'UND_ERR_SOCKET']);

/** What a failed request may carry: a system error (code, errno, cause) or the client's answer (code, body, headers). */
interface Thrown {
  readonly code?: unknown;
  readonly errno?: unknown;
  readonly cause?: unknown;
  readonly type?: unknown;
  readonly name?: unknown;
  readonly body?: unknown;
  readonly headers?: Record<string, string | undefined>;
}

const asThrown = (e: unknown): Thrown | undefined => (typeof e === 'object' && e !== null ? e as Thrown : undefined);

/** The system error code behind a failed request (`ECONNREFUSED`, a TLS code, ...), if any. */
export function networkCode(e: unknown): string | undefined {
  for (let x = asThrown(e), depth = 0; x && depth < 4; x = asThrown(x.cause), depth++) {
    if (typeof x.code === 'string' && (NETWORK_CODES.has(x.code) || /CERT|TLS|SSL|SIGNATURE/.test(x.code))) return x.code;
    if (typeof x.errno === 'string') return x.errno;
  }
  const t = asThrown(e);
  if (t?.type === 'system' || t?.name === 'FetchError') return 'FetchError';
  return undefined;
}

/** The part of a Status body we report. */
interface StatusBody {
  readonly message?: string;
  readonly reason?: string;
  readonly details?: { readonly causes?: ReadonlyArray<{ readonly field?: string; readonly message?: string; readonly reason?: string }> };
}

function statusBody(body: unknown): StatusBody | string | undefined {
  if (typeof body !== 'string') return typeof body === 'object' && body !== null ? body as StatusBody : undefined;
  try {
    return JSON.parse(body) as StatusBody;
  } catch {
    return body; // plain text
  }
}

/** Turns what the client throws into an ApiError when the server answered. */
export function toApiError(e: unknown): ApiError | undefined {
  if (e instanceof ApiError) return e;
  const t = asThrown(e);
  if (!(e instanceof ApiException) && typeof t?.code !== 'number') return undefined;
  const code = t!.code as number;
  const body = statusBody(t!.body);
  const status = typeof body === 'object' ? body : undefined;
  const causes = (status?.details?.causes ?? []).map((c) => `${c.field ? `${c.field}: ` : ''}${c.message ?? c.reason}`);
  const message = status?.message ?? (typeof body === 'string' && body ? body : `HTTP ${code}`);
  return new ApiError(code, status?.reason ?? '', message, causes, parseRetryAfter(t!.headers?.['retry-after'] ?? t!.headers?.['Retry-After']));
}

/** Worth retrying: 429, 5xx, a reset connection; once the server answered, also a refused one (it restarts). */
function transient(e: unknown, reachable: boolean, attempt: number): boolean {
  if (e instanceof RequestTimeout) return !e.deadlinePassed && attempt < 2; // a server silent twice is not coming back
  if (isHttpFailure(e)) return e.code === 'EBADANSWER';
  const api = toApiError(e);
  if (api) return api.status === 429 || api.status >= 500;
  const code = networkCode(e);
  return code === 'ECONNRESET' || code === 'EPIPE' || code === 'UND_ERR_SOCKET' || code === 'FetchError' || (reachable && code === 'ECONNREFUSED');
}

/** Exposes discovery, which the object API keeps protected, through kubectl's cache on disk. */
class ObjectApi extends KubernetesObjectApi {
  /** src/runtime/discovery-cache.ts; unset: every process asks the server. */
  disk?: DiscoveryCache;
  /** Group versions read from disk that the server has not confirmed in this process. */
  private readonly fromDisk = new Set<string>();

  async discover(apiVersion: string, kind: string): Promise<V1APIResource | undefined> {
    const read = this.apiVersionResourceCache[apiVersion] ? undefined : this.disk?.read(apiVersion);
    if (read) {
      this.apiVersionResourceCache[apiVersion] = read;
      this.fromDisk.add(apiVersion);
    }
    const before = this.apiVersionResourceCache[apiVersion];
    const r = await this.resource(apiVersion, kind); // asks the server when the kind is not listed
    const answer = this.apiVersionResourceCache[apiVersion];
    if (answer && answer !== before) {
      this.fromDisk.delete(apiVersion);
      this.disk?.write(apiVersion, answer);
    }
    return r;
  }

  /** A 404 for a kind read from disk: forget the group version (true), so discovery asks the server. */
  forgetFromDisk(apiVersion: string): boolean {
    if (!this.fromDisk.delete(apiVersion)) return false;
    delete this.apiVersionResourceCache[apiVersion];
    this.disk?.forget(apiVersion);
    return true;
  }

  /** The resources discovery listed for a group/version, when it answered: what a missing kind's message names. */
  served(apiVersion: string): string[] | undefined {
    return this.apiVersionResourceCache[apiVersion]?.resources.map((r) => r.name).filter((n) => !n.includes('/'));
  }

  /** GET /apis/<group>: its preferred version (an ApplySet parent names its kinds by group only). */
  async preferredVersion(group: string): Promise<string | undefined> {
    const ctx = this.configuration.baseServer.makeRequestContext(`/apis/${group}`, 'GET' as Parameters<ServerConfiguration<Record<string, string>>['makeRequestContext']>[1]);
    ctx.setHeaderParam('Accept', 'application/json');
    const g = await this.requestPromise(ctx, 'V1APIGroup') as unknown as { preferredVersion?: { groupVersion?: string } };
    return g.preferredVersion?.groupVersion;
  }
}

function refOf(obj: KubernetesObject): ObjectRef {
  return { apiVersion: obj.apiVersion ?? '', kind: obj.kind ?? '', name: obj.metadata?.name ?? '', namespace: obj.metadata?.namespace };
}

export function refString(r: ObjectRef): string {
  return `${r.kind}/${r.name}${r.namespace ? ` (${r.namespace})` : ''}`;
}

/** Plain JSON (the client deserializes into model classes with Dates; we want what the API sent). */
function plain<T>(x: unknown): T {
  return (x === undefined ? undefined : JSON.parse(JSON.stringify(x))) as T;
}

/** What a page of a list holds, as JSON. */
interface ListPage {
  readonly items?: KubernetesObject[];
  readonly metadata?: { readonly resourceVersion?: string; readonly continue?: string; readonly _continue?: string };
}

export class Cluster {
  readonly api: ObjectApi;
  private readonly version: VersionApi;
  private readonly watcher: Watcher;
  private readonly logs: Log;
  /** Timeouts, size cap and deadline of every request (src/runtime/http.ts). */
  readonly limits: HttpLimits = defaultLimits();
  /** Set once a step ran: a misbehaving API is then a failed step (1), not an unusable cluster (3). */
  private inStep = false;
  /** Counts requests that were retried, for the run summary. */
  retries = 0;
  /** Set once the API server answered: later refused connections are an API server restart. */
  private reachable = false;

  constructor(readonly kc: KubeConfig, readonly backoff: BackoffOptions = {}) {
    const cluster = kc.getCurrentCluster();
    if (!cluster) throw new Error('No active cluster!');
    const config = createConfiguration({
      baseServer: new ServerConfiguration(cluster.server, {}),
      authMethods: { default: kc },
      httpApi: guardedHttpLibrary(this.limits),
    });
    this.api = new ObjectApi(config);
    this.api.disk = new DiscoveryCache(discoveryCacheDir(cluster.server));
    this.version = new VersionApi(config);
    this.watcher = new GuardedWatch(kc, this.limits);
    this.logs = new Log(kc);
  }

  /** Nothing (requests, retries, Retry-After waits) outlasts this absolute time (ms). */
  setDeadline(at: number): void {
    this.limits.deadline = this.limits.deadline === undefined ? at : Math.min(this.limits.deadline, at);
  }

  /** A step began: later misbehaviour of the API fails the step (exit 1). */
  stepStarted(): void {
    this.inStep = true;
  }

  get server(): string {
    return this.kc.getCurrentCluster()?.server ?? '(none)';
  }

  /** Retries transient failures with backoff (Retry-After honoured); anything else is thrown as ApiError or as is. */
  async call<T>(what: string, fn: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await fn();
      } catch (e) {
        const api = toApiError(e);
        const deadline = this.limits.deadline;
        if (api?.retryAfter !== undefined && deadline !== undefined && api.status === 429 && Date.now() + api.retryAfter * 1000 > deadline) {
          throw this.misbehaved(`${what}: HTTP 429, Retry-After ${api.retryAfter} s is beyond the run's deadline (${Math.max(0, Math.round((deadline - Date.now()) / 1000))} s left); giving up`);
        }
        let delay = transient(e, this.reachable, attempt) ? retryDelayMs(attempt, api?.retryAfter, this.backoff) : undefined;
        if (delay !== undefined && deadline !== undefined && Date.now() + delay >= deadline) delay = undefined;
        if (delay === undefined) throw this.gaveUp(what, e, api, attempt);
        this.retries++;
        await sleep(delay);
      }
    }
  }

  private misbehaved(message: string): ClusterMisbehaved {
    return new ClusterMisbehaved(message, this.inStep);
  }

  /** Whom the requests go to, as whom: what error messages tell the user to check. */
  get endpoint(): Endpoint {
    return { server: this.server, cluster: this.kc.getCurrentCluster()?.name ?? '', user: this.kc.getCurrentUser()?.name ?? '', context: this.kc.getCurrentContext() };
  }

  /**
   * A request that failed for good, as the error the verbs report: an API refusal worded and
   * coded (src/runtime/errors.ts `refusal`), a connection failure in the user's words, a
   * misbehaving API; anything else as it was thrown.
   */
  private gaveUp(what: string, e: unknown, api: ApiError | undefined, attempts: number): unknown {
    if (api) {
      const r = refusal(what, api, this.endpoint, attempts, this.inStep);
      return new ApiError(api.status, api.reason, r?.message ?? `${what}: ${api.message}`, api.causes, api.retryAfter, r?.exitCode);
    }
    // the HTTP layer names the request itself (`GET /version: ...`): no second name when it is the same
    const said = (m: string) => (m.startsWith(`${what}: `) ? m : `${what}: ${m}`);
    if (e instanceof RequestTimeout) return this.misbehaved(`${said(e.message)}; check the API server's load and the network to it ($UYUNI_CDK_REQUEST_TIMEOUT_SECONDS sets the limit)`);
    if (isHttpFailure(e)) return this.misbehaved(said(e.message));
    const code = networkCode(e);
    if (code) return new Unreachable(`${what}: ${connectionFailure(code, (e as Error).message, this.endpoint)}`, this.inStep);
    return e;
  }

  /**
   * GET /version: proves the API server answers and accepts our credentials. Network and TLS
   * failures, and a server that is no Kubernetes API server, become Unreachable (exit 3);
   * refused credentials are bad input (exit 2).
   */
  async ping(): Promise<string> {
    try {
      const v = await this.call('GET /version', () => this.version.getCode());
      this.reachable = true;
      return v.gitVersion;
    } catch (e) {
      if (e instanceof ApiError) {
        if (e.status === 401 || e.status === 429 || e.status >= 500) throw e;
        if (e.status === 404) {
          throw new Unreachable(`${this.server} answers, but not as a Kubernetes API server (GET /version: HTTP 404); check the server of cluster "${this.endpoint.cluster}" of the kubeconfig`);
        }
        this.reachable = true;
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
      const o = await this.call(`GET ${refString(ref)}`, () =>
        this.api.read({ apiVersion: ref.apiVersion, kind: ref.kind, metadata: { name: ref.name, namespace: ref.namespace } }));
      return plain<T>(o);
    } catch (e) {
      if (e instanceof ApiError && e.status === 404) {
        await this.recheckKind(ref, e);
        return undefined;
      }
      throw e;
    }
  }

  /** Every object of a kind (all pages); typed as the kind asked for. */
  async list<T extends KubernetesObject = KubernetesObject>(q: WatchQuery): Promise<Listing<T>> {
    await this.resource(q.apiVersion, q.kind);
    const items: T[] = [];
    let cont: string | undefined;
    let rv = '';
    do {
      const page: KubernetesListObject<KubernetesObject> = await this.call(`LIST ${q.kind}`, () =>
        this.api.list(q.apiVersion, q.kind, q.namespace, undefined, undefined, undefined, q.fieldSelector, q.labelSelector, 500, cont))
        .catch(async (e) => {
          if (e instanceof ApiError && e.status === 404) await this.recheckKind(q, e);
          throw e;
        });
      const p = plain<ListPage>(page);
      for (const it of p.items ?? []) items.push({ apiVersion: q.apiVersion, kind: q.kind, ...it } as T);
      rv = p.metadata?.resourceVersion ?? rv;
      cont = p.metadata?._continue ?? p.metadata?.continue;
    } while (cont);
    return { items, resourceVersion: rv };
  }

  /** Server-side apply, one field manager, force (we own what we synthesized). */
  async apply(obj: KubernetesObject, dryRun = false): Promise<KubernetesObject> {
    await this.resource(obj.apiVersion!, obj.kind!);
    const o = await this.call(`apply ${refString(refOf(obj))}`, () =>
      this.api.patch(obj, undefined, dryRun ? 'All' : undefined, FIELD_MANAGER, true, PatchStrategy.ServerSideApply));
    return plain<KubernetesObject>(o);
  }

  async create(obj: KubernetesObject): Promise<KubernetesObject> {
    await this.resource(obj.apiVersion!, obj.kind!);
    return plain<KubernetesObject>(await this.call(`create ${refString(refOf(obj))}`, () => this.api.create(obj, undefined, undefined, FIELD_MANAGER)));
  }

  async mergePatch(ref: ObjectRef, patch: object): Promise<KubernetesObject> {
    await this.resource(ref.apiVersion, ref.kind);
    const body = { apiVersion: ref.apiVersion, kind: ref.kind, metadata: { name: ref.name, namespace: ref.namespace }, ...patch };
    return plain<KubernetesObject>(await this.call(`patch ${refString(ref)}`, () =>
      this.api.patch(body as KubernetesObject, undefined, undefined, FIELD_MANAGER, undefined, PatchStrategy.MergePatch)));
  }

  /** Deletes with propagationPolicy Background (without it a Job's pods are orphaned). False when already gone. */
  async delete(ref: ObjectRef, propagationPolicy = 'Background'): Promise<boolean> {
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

  /** A list-watch (src/runtime/watch.ts); the items are typed as the kind asked for. */
  watch<T extends KubernetesObject = KubernetesObject>(q: WatchQuery, onChange: (items: ReadonlyMap<string, T>) => void, onError?: (e: Error) => void): WatchHandle {
    const source: WatchSource = {
      list: (x) => this.list(x),
      collectionPath: (x) => this.collectionPath(x),
      watcher: this.watcher,
      backoff: this.backoff,
      retried: () => { this.retries++; },
    };
    return new ListWatch(source, q, onChange as (items: ReadonlyMap<string, KubernetesObject>) => void, onError);
  }

  /** A container's log so far (for facts and for failure reports); `previous`: its run before the last restart. */
  async readLog(namespace: string, pod: string, container: string, tailLines?: number, previous?: boolean): Promise<string> {
    const chunks: Buffer[] = [];
    const sink = new Writable({ write(chunk, _enc, cb) { chunks.push(Buffer.from(chunk)); cb(); } });
    const finished = new Promise<void>((resolve) => sink.on('finish', resolve));
    await this.call(`logs ${pod}/${container}`, () => this.logs.log(namespace, pod, container, sink, { follow: false, tailLines, ...(previous ? { previous } : {}) }));
    await finished;
    return Buffer.concat(chunks).toString('utf8');
  }

  /**
   * Follows a container's log. Resolves once streaming began; `onEnd` when the stream closes
   * (the container terminated). Rejects with ApiError 400 while the container is still waiting.
   */
  async followLog(namespace: string, pod: string, container: string, onChunk: (text: string) => void, onEnd: () => void): Promise<WatchHandle> {
    const sink = new Writable({
      write(chunk, _enc, cb) { onChunk(Buffer.from(chunk).toString('utf8')); cb(); },
    });
    let ended = false;
    const end = () => { if (!ended) { ended = true; onEnd(); } };
    sink.on('finish', end);
    sink.on('close', end);
    sink.on('error', end);
    const c = await this.logs.log(namespace, pod, container, sink, { follow: true });
    return { stop: () => { c.abort(); end(); } };
  }
}
