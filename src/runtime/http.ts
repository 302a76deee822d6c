/**
 * The HTTP layer under @kubernetes/client-node's API classes and our watches: every answer is
 * complete (content-length honoured, no early close), bounded in size and time, and a success
 * is JSON, or it is an error naming the request (`GET /api/v1: ...`). Node's http/https with the
 * agent the KubeConfig built (TLS, client certificates, proxies), so nothing of the
 * authentication changes. Only client.ts uses this file.
 */
import * as http from 'http';
import * as https from 'https';
import {
  HttpLibrary, KubeConfig, RequestContext, ResponseContext, HttpMethod, wrapHttpLibrary,
} from '@kubernetes/client-node';

import { parseRetryAfter } from './backoff';

const MiB = 1024 ** 2;

function envSeconds(name: string, fallback: number): number {
  const v = Number(process.env[name]);
  return Number.isFinite(v) && v > 0 ? v * 1000 : fallback;
}

/** Shared by every request of one Cluster. */
export interface HttpLimits {
  /** Connect + answer, per request. @default 30 s ($UYUNI_CDK_REQUEST_TIMEOUT_SECONDS) */
  requestTimeoutMs: number;
  /** A watch that sends nothing (not even a bookmark) this long is restarted with a fresh list. @default 330 s ($UYUNI_CDK_WATCH_IDLE_SECONDS) */
  watchIdleMs: number;
  /** No answer body (or watch line) may be larger. @default 64 MiB ($UYUNI_CDK_MAX_BODY_MIB) */
  maxBodyBytes: number;
  /** Absolute time (ms) nothing may outlast: the run's deadline. */
  deadline?: number;
}

export function defaultLimits(): HttpLimits {
  return {
    requestTimeoutMs: envSeconds('UYUNI_CDK_REQUEST_TIMEOUT_SECONDS', 30_000),
    watchIdleMs: envSeconds('UYUNI_CDK_WATCH_IDLE_SECONDS', 330_000),
    maxBodyBytes: (Number(process.env.UYUNI_CDK_MAX_BODY_MIB) > 0 ? Number(process.env.UYUNI_CDK_MAX_BODY_MIB) : 64) * MiB,
  };
}

/** A broken answer: cut short, not JSON. Retried like a 5xx. */
export class BadAnswer extends Error {
  readonly code = 'EBADANSWER';
}

/** No complete answer in time (per-request timeout or the run's deadline). Retried once unless the deadline passed. */
export class RequestTimeout extends Error {
  readonly code = 'EREQUESTTIMEOUT';
  constructor(message: string, readonly deadlinePassed: boolean) {
    super(message);
  }
}

/** An answer larger than the cap, or a Retry-After beyond the deadline: not retried. */
export class Refused extends Error {
  readonly code = 'EREFUSED';
}

export const isHttpFailure = (e: unknown): e is BadAnswer | RequestTimeout | Refused =>
  e instanceof BadAnswer || e instanceof RequestTimeout || e instanceof Refused;

interface Answer {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: Buffer;
}

export interface HttpRequest {
  readonly url: string;
  readonly method: string;
  readonly headers: Record<string, string>;
  readonly body?: string | Buffer;
  readonly agent?: http.Agent;
  readonly signal?: AbortSignal;
}

/** `GET /api/v1`: how errors name a request. */
export function requestLine(method: string, url: string): string {
  try {
    return `${method.toUpperCase()} ${new URL(url).pathname}`;
  } catch {
    return `${method.toUpperCase()} ${url}`;
  }
}

function headersOf(res: http.IncomingMessage): Record<string, string> {
  const h: Record<string, string> = {};
  for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) h[k] = Array.isArray(v) ? v.join(', ') : v;
  return h;
}

/** How long this request may take: the per-request timeout, or less when the deadline is nearer. */
function budget(limits: HttpLimits, what: string): { ms: number; byDeadline: boolean } {
  const left = limits.deadline === undefined ? Infinity : limits.deadline - Date.now();
  if (left <= 0) throw new RequestTimeout(`${what}: not sent, the run's deadline has passed`, true);
  return left < limits.requestTimeoutMs ? { ms: left, byDeadline: true } : { ms: limits.requestTimeoutMs, byDeadline: false };
}

function tooLarge(what: string, limits: HttpLimits, size: string): Refused {
  return new Refused(`${what}: answer ${size} is larger than the ${Math.round(limits.maxBodyBytes / MiB)} MiB size cap; refused`);
}

/** One request, its whole answer read (bounded), or an error naming it. */
export function send(r: HttpRequest, limits: HttpLimits): Promise<Answer> {
  const what = requestLine(r.method, r.url);
  const { ms, byDeadline } = budget(limits, what);
  return new Promise<Answer>((resolve, reject) => {
    let settled = false;
    const mod = r.url.startsWith('https:') ? https : http;
    const req = mod.request(r.url, { method: r.method, headers: r.headers, agent: r.agent });
    const finish = (e: Error | undefined, a?: Answer) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      r.signal?.removeEventListener('abort', onAbort);
      if (e) {
        req.destroy();
        reject(e);
      } else resolve(a!);
    };
    const timer = setTimeout(() => finish(byDeadline
      ? new RequestTimeout(`${what}: no complete answer before the run's deadline`, true)
      : new RequestTimeout(`${what}: no complete answer within ${ms / 1000} s (timed out)`, false)), ms);
    const onAbort = () => finish(Object.assign(new Error(`${what}: aborted`), { name: 'AbortError' }));
    r.signal?.addEventListener('abort', onAbort);
    req.on('error', (e) => finish(e));
    req.on('response', (res) => {
      const expected = res.headers['content-length'] !== undefined ? Number(res.headers['content-length']) : undefined;
      if (expected !== undefined && expected > limits.maxBodyBytes) {
        finish(tooLarge(what, limits, `of ${expected} bytes (content-length)`));
        return;
      }
      const chunks: Buffer[] = [];
      let total = 0;
      const cut = (why: string) => finish(new BadAnswer(`${what}: answer truncated (${why}: ${total}${expected !== undefined ? ` of ${expected}` : ''} bytes received)`));
      res.on('data', (c: Buffer) => {
        total += c.length;
        if (total > limits.maxBodyBytes) finish(tooLarge(what, limits, `of more than ${total} bytes`));
        else chunks.push(c);
      });
      res.on('aborted', () => cut('connection closed early'));
      res.on('error', () => cut('connection closed early'));
      res.on('end', () => {
        if (!res.complete || (expected !== undefined && total !== expected)) cut('connection closed early');
        else finish(undefined, { status: res.statusCode ?? 0, headers: headersOf(res), body: Buffer.concat(chunks) });
      });
      res.on('close', () => cut('connection closed early'));
    });
    if (r.body !== undefined) req.write(r.body);
    req.end();
  });
}

/** A success must be JSON: an HTML login page or a cut body is an error, not an object. */
export function checkJson(what: string, a: Answer): void {
  if (a.status < 200 || a.status >= 300) return;
  const text = a.body.toString('utf8');
  try {
    JSON.parse(text);
  } catch {
    const type = a.headers['content-type'] ?? 'no content-type';
    const start = text.slice(0, 60).replace(/\s+/g, ' ').trim();
    throw new BadAnswer(`${what}: answer is not JSON (HTTP ${a.status}, ${type}${start ? `: "${start}${text.length > 60 ? '…' : ''}"` : ', empty'})`);
  }
}

/** client-node's HttpLibrary (its API classes' transport) on top of `send`. */
export function guardedHttpLibrary(limits: HttpLimits): HttpLibrary {
  return wrapHttpLibrary({
    async send(ctx: RequestContext): Promise<ResponseContext> {
      const body = ctx.getBody();
      if (body !== undefined && typeof body !== 'string' && !Buffer.isBuffer(body)) throw new Error(`${requestLine(ctx.getHttpMethod(), ctx.getUrl())}: unsupported request body`);
      const a = await send({
        url: ctx.getUrl(), method: ctx.getHttpMethod(), headers: ctx.getHeaders(), body,
        agent: ctx.getAgent() as http.Agent | undefined, signal: ctx.getSignal() as AbortSignal | undefined,
      }, limits);
      const what = requestLine(ctx.getHttpMethod(), ctx.getUrl());
      const after = a.status === 429 ? parseRetryAfter(a.headers['retry-after']) : undefined;
      if (after !== undefined && limits.deadline !== undefined && Date.now() + after * 1000 > limits.deadline) {
        throw new Refused(`${what}: HTTP 429, Retry-After ${after} s is beyond the run's deadline (${Math.max(0, Math.round((limits.deadline - Date.now()) / 1000))} s left); giving up`);
      }
      checkJson(what, a);
      return new ResponseContext(a.status, a.headers, { text: () => Promise.resolve(a.body.toString('utf8')), binary: () => Promise.resolve(a.body) });
    },
  });
}

/** What a watch gives back: stop it. */
export interface WatchConnection {
  abort(): void;
}

/** The watch transport ListWatch uses (client-node's Watch has this shape too). */
export interface Watcher {
  watch(path: string, params: Record<string, unknown>, onEvent: (type: string, obj: unknown) => void, done: (err: unknown) => void): Promise<WatchConnection>;
}

/** A watch that went quiet: restarted with a fresh list. */
export class WatchIdle extends Error {}

/**
 * A watch stream: headers within the request timeout, then one JSON event per line; a line larger
 * than the size cap, a line that is not JSON, or silence longer than `watchIdleMs` ends it with an
 * error (ListWatch relists). `done(null)` is the server's clean end.
 */
export class GuardedWatch implements Watcher {
  constructor(private readonly kc: KubeConfig, private readonly limits: HttpLimits) {}

  async watch(path: string, params: Record<string, unknown>, onEvent: (type: string, obj: unknown) => void, done: (err: unknown) => void): Promise<WatchConnection> {
    const server = this.kc.getCurrentCluster()?.server;
    if (!server) throw new Error('no current cluster');
    const url = new URL(server + path);
    url.searchParams.set('watch', 'true');
    for (const [k, v] of Object.entries(params)) if (v !== undefined) url.searchParams.set(k, String(v));
    const ctx = new RequestContext(url.toString(), HttpMethod.GET);
    await this.kc.applySecurityAuthentication(ctx);
    const what = requestLine('GET', url.toString());
    const limits = this.limits;
    const mod = url.protocol === 'https:' ? https : http;
    let finished = false;
    let idle: NodeJS.Timeout | undefined;
    const req = mod.request(url, { method: 'GET', headers: ctx.getHeaders(), agent: ctx.getAgent() as http.Agent | undefined });
    const end = (err: unknown) => {
      if (finished) return;
      finished = true;
      clearTimeout(idle);
      req.destroy();
      done(err);
    };
    const quiet = (ms: number, why: string) => {
      clearTimeout(idle);
      idle = setTimeout(() => end(new WatchIdle(`${what}: ${why} for ${ms / 1000} s`)), ms);
    };
    quiet(limits.requestTimeoutMs, 'no answer');
    req.on('error', (e) => end(e));
    req.on('response', (res) => {
      if (res.statusCode !== 200) {
        end(Object.assign(new Error(`${what}: HTTP ${res.statusCode}`), { statusCode: res.statusCode }));
        return;
      }
      quiet(limits.watchIdleMs, 'watch silent');
      let buf = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        quiet(limits.watchIdleMs, 'watch silent');
        buf += chunk;
        let nl: number;
        while (!finished && (nl = buf.indexOf('\n')) >= 0) {
          const line = buf.slice(0, nl).trim();
          buf = buf.slice(nl + 1);
          if (!line) continue;
          let ev: { type?: unknown; object?: unknown };
          try {
            ev = JSON.parse(line) as { type?: unknown; object?: unknown };
          } catch {
            end(new BadAnswer(`${what}: watch event is not JSON`));
            return;
          }
          onEvent(String(ev.type), ev.object);
        }
        if (buf.length > limits.maxBodyBytes) end(tooLarge(what, limits, 'line'));
      });
      res.on('error', (e) => end(e));
      res.on('aborted', () => end(new BadAnswer(`${what}: watch cut`)));
      res.on('end', () => end(res.complete ? null : new BadAnswer(`${what}: watch cut`)));
      res.on('close', () => end(res.complete ? null : new BadAnswer(`${what}: watch cut`)));
    });
    req.end();
    return { abort: () => end(null) };
  }
}
