/**
 * The one place that knows HTTP: server-side apply, reads, deletes, watches and log streams
 * through @kubernetes/client-node, with retries for transient errors (429 Retry-After, 5xx,
 * dropped connections) and relist on 410 Gone. Everything above this file deals in objects.
 */
import { Writable } from 'stream';
import {
  ApiException, KubeConfig, KubernetesObject, KubernetesObjectApi, Log, PatchStrategy, V1APIResource, VersionApi, Watch,
} from '@kubernetes/client-node';
import type { ObjectRef } from '../plan/types';
import { BackoffOptions, parseRetryAfter, retryDelayMs, sleep } from './backoff';
import { RuntimeError, Unreachable } from './errors';

export const FIELD_MANAGER = 'uyuni-cdk';

/** An API answer that is not a success, with the Status body's reason and message. */
export class ApiError extends Error {
  constructor(readonly status: number, readonly reason: string, message: string, readonly causes: string[] = []) {
    super(message);
  }
}

/** A kind the cluster does not serve: its CRD is not installed. */
export class MissingKind extends RuntimeError {
  constructor(readonly apiVersion: string, readonly kind: string) {
    const group = apiVersion.includes('/') ? apiVersion.split('/')[0] : '';
    const crd = group ? `${kind.toLowerCase()}s.${group}` : kind;
    super(`${apiVersion} ${kind} is not served by this cluster: the CustomResourceDefinition ${crd} is missing${group === 'cert-manager.io' ? ' (install cert-manager first)' : ''}`, 1);
  }
}

const NETWORK_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ECONNRESET', 'EHOSTUNREACH', 'ENETUNREACH', 'ETIMEDOUT', 'EPIPE', 'EPROTO', 'UND_ERR_SOCKET']);

/** The system error code behind a failed request (`ECONNREFUSED`, a TLS code, ...), if any. */
export function networkCode(e: any): string | undefined {
  for (let x = e, depth = 0; x && depth < 4; x = x.cause, depth++) {
    if (typeof x.code === 'string' && (NETWORK_CODES.has(x.code) || /CERT|TLS|SSL|SIGNATURE/.test(x.code))) return x.code;
    if (typeof x.errno === 'string') return x.errno;
  }
  if (e?.type === 'system' || e?.name === 'FetchError') return 'FetchError';
  return undefined;
}

/** Turns what the client throws into an ApiError when the server answered. */
export function toApiError(e: any): ApiError | undefined {
  if (e instanceof ApiError) return e;
  if (!(e instanceof ApiException) && typeof e?.code !== 'number') return undefined;
  let body = e.body;
  if (typeof body === 'string') {
    try { body = JSON.parse(body); } catch { /* plain text */ }
  }
  const causes = (body?.details?.causes ?? []).map((c: any) => `${c.field ? `${c.field}: ` : ''}${c.message ?? c.reason}`);
  const message = body?.message ?? (typeof body === 'string' && body ? body : `HTTP ${e.code}`);
  const err = new ApiError(e.code, body?.reason ?? '', message, causes);
  (err as any).retryAfter = parseRetryAfter(e.headers?.['retry-after'] ?? e.headers?.['Retry-After']);
  return err;
}

/** Worth retrying: 429, 5xx, a reset connection; once the server answered, also a refused one (it restarts). */
function transient(e: any, reachable: boolean): boolean {
  const api = toApiError(e);
  if (api) return api.status === 429 || api.status >= 500;
  const code = networkCode(e);
  return code === 'ECONNRESET' || code === 'EPIPE' || code === 'UND_ERR_SOCKET' || code === 'FetchError' || (reachable && code === 'ECONNREFUSED');
}

export interface WatchQuery {
  readonly apiVersion: string;
  readonly kind: string;
  readonly namespace?: string;
  readonly fieldSelector?: string;
  readonly labelSelector?: string;
}

export interface WatchHandle {
  stop(): void;
}

/** Exposes discovery, which the object API keeps protected. */
class ObjectApi extends KubernetesObjectApi {
  discover(apiVersion: string, kind: string): Promise<V1APIResource | undefined> {
    return this.resource(apiVersion, kind);
  }
}

function refOf(obj: any): ObjectRef {
  return { apiVersion: obj.apiVersion, kind: obj.kind, name: obj.metadata?.name, namespace: obj.metadata?.namespace };
}

export function refString(r: ObjectRef): string {
  return `${r.kind}/${r.name}${r.namespace ? ` (${r.namespace})` : ''}`;
}

/** Plain JSON (the client deserializes into model classes with Dates; we want what the API sent). */
function plain<T>(x: T): any {
  return x === undefined ? undefined : JSON.parse(JSON.stringify(x));
}

export class Cluster {
  readonly api: ObjectApi;
  private readonly watcher: Watch;
  private readonly logs: Log;
  /** Counts requests that were retried, for the run summary. */
  retries = 0;
  /** Set once the API server answered: later refused connections are an API server restart. */
  private reachable = false;

  constructor(readonly kc: KubeConfig, readonly backoff: BackoffOptions = {}) {
    this.api = kc.makeApiClient(ObjectApi);
    this.watcher = new Watch(kc);
    this.logs = new Log(kc);
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
        const delay = transient(e, this.reachable) ? retryDelayMs(attempt, (api as any)?.retryAfter, this.backoff) : undefined;
        if (delay === undefined) {
          if (api) {
            api.message = `${what}: ${api.message}`;
            throw api;
          }
          throw e;
        }
        this.retries++;
        await sleep(delay);
      }
    }
  }

  /** GET /version: proves the API server answers. Network and TLS failures become Unreachable (exit 3). */
  async ping(): Promise<string> {
    try {
      const v = await this.call('GET /version', () => this.kc.makeApiClient(VersionApi).getCode());
      this.reachable = true;
      return v.gitVersion;
    } catch (e) {
      if (e instanceof ApiError) {
        this.reachable = true;
        return `unknown (GET /version: ${e.status})`;
      }
      const code = networkCode(e) ?? (e as Error).message;
      throw new Unreachable(`cannot reach the cluster at ${this.server}: ${code}`);
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
    if (!r) throw new MissingKind(apiVersion, kind);
    return r;
  }

  async get(ref: ObjectRef): Promise<any | undefined> {
    await this.resource(ref.apiVersion, ref.kind);
    try {
      const o = await this.call(`GET ${refString(ref)}`, () =>
        this.api.read({ apiVersion: ref.apiVersion, kind: ref.kind, metadata: { name: ref.name, namespace: ref.namespace } }));
      return plain(o);
    } catch (e) {
      if (e instanceof ApiError && e.status === 404) return undefined;
      throw e;
    }
  }

  /** Every object of a kind (all pages). */
  async list(q: WatchQuery): Promise<{ items: any[]; resourceVersion: string }> {
    await this.resource(q.apiVersion, q.kind);
    const items: any[] = [];
    let cont: string | undefined;
    let rv = '';
    do {
      const page: any = await this.call(`LIST ${q.kind}`, () =>
        this.api.list(q.apiVersion, q.kind, q.namespace, undefined, undefined, undefined, q.fieldSelector, q.labelSelector, 500, cont));
      const p = plain(page);
      for (const it of p.items ?? []) items.push({ apiVersion: q.apiVersion, kind: q.kind, ...it });
      rv = p.metadata?.resourceVersion ?? rv;
      cont = p.metadata?._continue ?? p.metadata?.continue;
    } while (cont);
    return { items, resourceVersion: rv };
  }

  /** Server-side apply, one field manager, force (we own what we synthesized). */
  async apply(obj: KubernetesObject, dryRun = false): Promise<any> {
    await this.resource(obj.apiVersion!, obj.kind!);
    const o = await this.call(`apply ${refString(refOf(obj))}`, () =>
      this.api.patch(obj, undefined, dryRun ? 'All' : undefined, FIELD_MANAGER, true, PatchStrategy.ServerSideApply));
    return plain(o);
  }

  async create(obj: KubernetesObject): Promise<any> {
    await this.resource(obj.apiVersion!, obj.kind!);
    return plain(await this.call(`create ${refString(refOf(obj))}`, () => this.api.create(obj, undefined, undefined, FIELD_MANAGER)));
  }

  async mergePatch(ref: ObjectRef, patch: object): Promise<any> {
    await this.resource(ref.apiVersion, ref.kind);
    const body = { apiVersion: ref.apiVersion, kind: ref.kind, metadata: { name: ref.name, namespace: ref.namespace }, ...patch };
    return plain(await this.call(`patch ${refString(ref)}`, () =>
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
      if (e instanceof ApiError && e.status === 404) return false;
      throw e;
    }
  }

  private async collectionPath(q: WatchQuery): Promise<string> {
    const r = await this.resource(q.apiVersion, q.kind);
    const base = q.apiVersion.includes('/') ? `/apis/${q.apiVersion}` : `/api/${q.apiVersion}`;
    return r.namespaced && q.namespace ? `${base}/namespaces/${q.namespace}/${r.name}` : `${base}/${r.name}`;
  }

  /**
   * List, then watch from the list's resourceVersion; `onChange` gets the full current set after
   * every change. A dropped or server-closed watch resumes from the last resourceVersion seen;
   * 410 Gone (history compacted) relists. Errors are retried with backoff until `stop()`.
   */
  watch(q: WatchQuery, onChange: (items: Map<string, any>) => void, onError?: (e: Error) => void): WatchHandle {
    let stopped = false;
    let controller: AbortController | undefined;
    let session = 0;
    const items = new Map<string, any>();
    let rv = '';
    let failures = 0;
    const keyOf = (o: any) => `${o.metadata?.namespace ?? ''}/${o.metadata?.name}`;

    const relist = async (): Promise<void> => {
      const l = await this.list(q);
      items.clear();
      for (const it of l.items) items.set(keyOf(it), it);
      rv = l.resourceVersion;
      onChange(items);
    };

    const restart = (needRelist: boolean) => {
      if (stopped) return;
      const mine = ++session;
      controller?.abort();
      controller = undefined;
      const delay = failures === 0 ? 0 : retryDelayMs(Math.min(failures, 6), undefined, { ...this.backoff, attempts: 100 }) ?? 1000;
      setTimeout(() => {
        if (stopped || mine !== session) return;
        (async () => {
          if (needRelist || !rv) await relist();
          if (stopped || mine !== session) return;
          const path = await this.collectionPath(q);
          const params = {
            resourceVersion: rv, allowWatchBookmarks: true, timeoutSeconds: 300,
            fieldSelector: q.fieldSelector, labelSelector: q.labelSelector,
          };
          const c = await this.watcher.watch(path, params, (type, obj) => {
            if (mine !== session) return;
            failures = 0;
            if (type === 'ERROR') {
              this.retries++;
              restart(true); // 410 Expired or any other error event: start over from a fresh list
              return;
            }
            if (obj?.metadata?.resourceVersion) rv = obj.metadata.resourceVersion;
            if (type === 'BOOKMARK') return;
            const full = { apiVersion: q.apiVersion, kind: q.kind, ...obj };
            if (type === 'DELETED') items.delete(keyOf(full));
            else items.set(keyOf(full), full);
            onChange(items);
          }, (err) => {
            if (stopped || mine !== session) return;
            if (err) {
              failures++;
              this.retries++;
            }
            restart(err?.statusCode === 410);
          });
          // stop() or a restart may have come while the watch was being opened.
          if (mine === session && !stopped) controller = c;
          else c.abort();
        })().catch((e) => {
          if (stopped || mine !== session) return;
          failures++;
          this.retries++;
          if (e instanceof MissingKind) {
            onError?.(e);
            return;
          }
          if (failures > 20) onError?.(e);
          restart(true);
        });
      }, delay);
    };
    restart(true);
    return {
      stop: () => {
        stopped = true;
        controller?.abort();
      },
    };
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
