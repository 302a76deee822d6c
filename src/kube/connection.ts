/**
 * One connection to an API server: a loaded kubeconfig, the limits every request shares, and the
 * credentials resolved at every request, never once. client-node's `KubeConfig` does it for each
 * kind of user (a static token, client certificates, an exec plugin whose credential it runs again
 * once expired, an auth provider); on top, a user's `token-file` is read again at every request,
 * so a rotated token is used as soon as it is on disk. Every answer is parsed once, here.
 */
import * as fs from 'fs';
import {
  Configuration, createConfiguration, HttpLibrary, HttpMethod, KubeConfig, RequestContext, SecurityAuthentication, ServerConfiguration,
} from '@kubernetes/client-node';
import { ApiError, KubeconfigError } from './errors';
import { tokenFileOf } from './kubeconfig';
import {
  bodyOf, boundedHttpLibrary, defaultLimits, exchange, HttpLimits, jsonOf, openStream, requestLine, StreamHandle, StreamOptions,
} from './transport';

export type Query = Record<string, string | number | boolean | undefined>;

export interface RequestOptions {
  readonly query?: Query;
  /** Sent as JSON. */
  readonly body?: unknown;
  /** @default application/json */
  readonly contentType?: string;
  /** This request's own timeout. @default limits.requestTimeoutMs */
  readonly timeoutMs?: number;
}

export class KubeClient implements SecurityAuthentication {
  /** client-node's transport, bounded (src/kube/transport.ts): for its API classes. */
  readonly httpApi: HttpLibrary;
  /** The configuration client-node's API classes take: our transport, our credentials. */
  readonly configuration: Configuration;

  constructor(readonly kc: KubeConfig, readonly limits: HttpLimits = defaultLimits()) {
    const cluster = kc.getCurrentCluster();
    if (!cluster) throw new Error('No active cluster!');
    this.httpApi = boundedHttpLibrary(limits);
    this.configuration = createConfiguration({ baseServer: new ServerConfiguration(cluster.server, {}), authMethods: { default: this }, httpApi: this.httpApi });
  }

  get server(): string {
    return this.kc.getCurrentCluster()?.server ?? '(none)';
  }

  getName(): string {
    return 'kubeconfig';
  }

  /** The current credentials onto one request: the kubeconfig's (client-node), then a token file read now. */
  async applySecurityAuthentication(ctx: RequestContext): Promise<void> {
    await this.kc.applySecurityAuthentication(ctx);
    const user = this.kc.getCurrentUser();
    const file = user ? tokenFileOf(this.kc, user.name) : undefined;
    if (!file) return;
    let token: string;
    try {
      token = (await fs.promises.readFile(file, 'utf8')).trim();
    } catch (e) {
      throw new KubeconfigError(`user "${user!.name}" of the kubeconfig: cannot read its token-file ${file} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
    }
    ctx.setHeaderParam('Authorization', `Bearer ${token}`);
  }

  /** `/api/v1/pods` with a query, as a URL of this server. */
  url(path: string, query: Query = {}): string {
    const u = new URL(this.server.replace(/\/+$/, '') + (path.startsWith('/') ? path : `/${path}`));
    for (const [k, v] of Object.entries(query)) if (v !== undefined) u.searchParams.set(k, String(v));
    return u.toString();
  }

  /** One request through the bounded transport, credentials applied: its JSON (parsed once) or ApiError. */
  async send<T>(ctx: RequestContext, timeoutMs?: number): Promise<T> {
    await this.applySecurityAuthentication(ctx);
    const body = ctx.getBody();
    if (body !== undefined && typeof body !== 'string' && !Buffer.isBuffer(body)) throw new Error(`${requestLine(ctx.getHttpMethod(), ctx.getUrl())}: unsupported request body`);
    const limits = timeoutMs === undefined ? this.limits : { ...this.limits, requestTimeoutMs: timeoutMs };
    const a = await exchange({
      url: ctx.getUrl(), method: ctx.getHttpMethod(), headers: ctx.getHeaders(), body,
      agent: ctx.getAgent() as never, signal: ctx.getSignal() as AbortSignal | undefined,
    }, limits);
    return jsonOf<T>(requestLine(ctx.getHttpMethod(), ctx.getUrl()), a);
  }

  /** A GET whose answer is text (a container's log), bounded like every answer; ApiError when it is not a success. */
  async text(path: string, query: Query = {}): Promise<string> {
    const ctx = new RequestContext(this.url(path, query), HttpMethod.GET);
    await this.applySecurityAuthentication(ctx);
    const a = await exchange({ url: ctx.getUrl(), method: 'GET', headers: ctx.getHeaders(), agent: ctx.getAgent() as never }, this.limits);
    if (a.status < 200 || a.status >= 300) throw ApiError.fromAnswer(a.status, a.headers, bodyOf(a));
    return a.body.toString('utf8');
  }

  /** A JSON request to a path of this server. */
  request<T = unknown>(method: string, path: string, o: RequestOptions = {}): Promise<T> {
    const ctx = new RequestContext(this.url(path, o.query), method.toUpperCase() as HttpMethod);
    ctx.setHeaderParam('Accept', 'application/json');
    if (o.body !== undefined) {
      ctx.setHeaderParam('Content-Type', o.contentType ?? 'application/json');
      ctx.setBody(JSON.stringify(o.body));
    }
    return this.send<T>(ctx, o.timeoutMs);
  }

  /** A long GET (a watch, a followed log) through the bounded transport, credentials applied at its start. */
  async stream(path: string, query: Query, o: StreamOptions & { accept?: string }): Promise<StreamHandle> {
    const ctx = new RequestContext(this.url(path, query), HttpMethod.GET);
    ctx.setHeaderParam('Accept', o.accept ?? 'application/json');
    await this.applySecurityAuthentication(ctx);
    return openStream({ url: ctx.getUrl(), method: 'GET', headers: ctx.getHeaders(), agent: ctx.getAgent() as never }, this.limits, o);
  }
}
