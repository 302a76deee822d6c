/**
 * The one module that opens HTTP connections (node's http/https), for every caller: the API
 * classes of @kubernetes/client-node (through its `HttpLibrary` seam, `boundedHttpLibrary`), our
 * watches and pod logs (`openStream`). Every answer is complete (content-length honoured, no early
 * close) and bounded in size and time; a stream is bounded by how long it may stay silent. The
 * agent (TLS, client certificates, proxies) is the one the KubeConfig built for the request, so
 * nothing of the authentication changes here, except that connections are reused (`pooledAgent`).
 */
import { AsyncLocalStorage } from 'async_hooks';
import { createHash } from 'crypto';
import * as http from 'http';
import * as https from 'https';
import { HttpLibrary, RequestContext, ResponseContext, wrapHttpLibrary } from '@kubernetes/client-node';

import { ApiError, BadAnswer, parseRetryAfter, Refused, RequestTimeout, StreamIdle } from './errors';

const MiB = 1024 ** 2;

function envSeconds(name: string, fallback: number): number {
  const v = Number(process.env[name]);
  return Number.isFinite(v) && v > 0 ? v * 1000 : fallback;
}

/** Shared by every request of one connection. */
export interface HttpLimits {
  /** Connect + answer, per request (a stream: until its headers). @default 30 s ($UYUNI_CDK_REQUEST_TIMEOUT_SECONDS) */
  requestTimeoutMs: number;
  /** A watch or followed log that sends nothing (not even a bookmark) this long is cut off. @default 330 s ($UYUNI_CDK_WATCH_IDLE_SECONDS) */
  watchIdleMs: number;
  /** No answer body (or watch line) may be larger. @default 64 MiB ($UYUNI_CDK_MAX_BODY_MIB) */
  maxBodyBytes: number;
  /** Absolute time (ms) nothing may outlast: the run's deadline. */
  deadline?: number;
  /** When (ms) the API server last answered anything: an answer's headers, a stream's chunk (a watch event, a bookmark). */
  lastAnswerAt?: number;
}

export function defaultLimits(): HttpLimits {
  return {
    requestTimeoutMs: envSeconds('UYUNI_CDK_REQUEST_TIMEOUT_SECONDS', 30_000),
    watchIdleMs: envSeconds('UYUNI_CDK_WATCH_IDLE_SECONDS', 330_000),
    maxBodyBytes: (Number(process.env.UYUNI_CDK_MAX_BODY_MIB) > 0 ? Number(process.env.UYUNI_CDK_MAX_BODY_MIB) : 64) * MiB,
  };
}

export interface Answer {
  readonly status: number;
  readonly headers: Record<string, string>;
  /** Each `Warning` header apart (node joins repeated headers with ", ", which the texts contain). */
  readonly warnings?: readonly string[];
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
  if (left <= 0) throw new RequestTimeout(`${what}: not sent, the run's deadline has passed`, true, 0);
  return left < limits.requestTimeoutMs ? { ms: left, byDeadline: true } : { ms: limits.requestTimeoutMs, byDeadline: false };
}

function timedOut(what: string, ms: number, byDeadline: boolean): RequestTimeout {
  return byDeadline
    ? new RequestTimeout(`${what}: no complete answer before the run's deadline`, true, ms)
    : new RequestTimeout(`${what}: no complete answer within ${ms / 1000} s (timed out)`, false, ms);
}

function tooLarge(what: string, limits: HttpLimits, size: string): Refused {
  return new Refused(`${what}: answer ${size} is larger than the ${Math.round(limits.maxBodyBytes / MiB)} MiB size cap; refused`);
}

/**
 * Connection reuse, fixed at client-node's seam. Its `KubeConfig.applySecurityAuthentication`
 * (client-node 1.4 dist/config.js `createAgent`) builds a new `http(s).Agent` for every request,
 * without keep-alive: every API call opens a new TCP connection and, against a real API server, pays
 * a new TLS handshake (client certificate included). Such an agent is swapped here for one shared
 * keep-alive agent per set of its options (CA, client certificate and key, TLS verification, server
 * name): the same credentials reuse connections, other ones (a rotated client certificate from an
 * exec plugin) get their own. Proxy agents (a cluster's `proxy-url`) are left as they are. Idle
 * sockets do not keep the process alive (node unrefs them) and honour a server's Keep-Alive hint.
 */
const POOL_SIZE = 8;
const pool = new Map<string, http.Agent>();

function optionsKey(scheme: string, options: Record<string, unknown>): string {
  const h = createHash('sha256').update(scheme);
  for (const k of Object.keys(options).sort()) {
    const v = options[k];
    if (v === undefined || v === null || typeof v === 'function') continue;
    const values = Array.isArray(v) ? v : [v];
    h.update(`\0${k}=`);
    for (const x of values) h.update(Buffer.isBuffer(x) || typeof x === 'string' ? x : JSON.stringify(x)).update('\0');
  }
  return h.digest('hex');
}

export function pooledAgent(agent: http.Agent | undefined): http.Agent | undefined {
  if (!agent) return agent;
  const Kind = agent.constructor === https.Agent ? https.Agent : agent.constructor === http.Agent ? http.Agent : undefined;
  if (!Kind) return agent;
  const options = { ...(agent as http.Agent & { options: Record<string, unknown> }).options };
  const key = optionsKey(Kind === https.Agent ? 'https' : 'http', options);
  let shared = pool.get(key);
  if (!shared) {
    shared = new Kind({ ...options, keepAlive: true, scheduling: 'lifo' });
    pool.set(key, shared);
    if (pool.size > POOL_SIZE) {
      const [oldest, old] = pool.entries().next().value as [string, http.Agent];
      pool.delete(oldest);
      old.destroy();
    }
  }
  agent.destroy();
  return shared;
}

function request(r: HttpRequest): http.ClientRequest {
  const mod = r.url.startsWith('https:') ? https : http;
  const headers = { ...r.headers };
  // node frames a DELETE's body only with a length (it chunks POST and PATCH, not DELETE)
  if (r.body !== undefined && !Object.keys(headers).some((k) => k.toLowerCase() === 'content-length')) headers['Content-Length'] = String(Buffer.byteLength(r.body));
  return mod.request(r.url, { method: r.method, headers, agent: pooledAgent(r.agent) });
}

/** Reads a whole answer, bounded by the size cap; `finish` gets it or why not. */
function readAll(res: http.IncomingMessage, what: string, limits: HttpLimits, finish: (e: Error | undefined, a?: Answer) => void): void {
  const expected = res.headers['content-length'] !== undefined ? Number(res.headers['content-length']) : undefined;
  if (expected !== undefined && expected > limits.maxBodyBytes) {
    finish(tooLarge(what, limits, `of ${expected} bytes (content-length)`));
    return;
  }
  const chunks: Buffer[] = [];
  let total = 0;
  const cut = (why: string) => finish(new BadAnswer(`${what}: answer incomplete (${why}: ${total}${expected !== undefined ? ` of ${expected}` : ''} bytes received)`));
  res.on('data', (c: Buffer) => {
    total += c.length;
    if (total > limits.maxBodyBytes) finish(tooLarge(what, limits, `of more than ${total} bytes`));
    else chunks.push(c);
  });
  res.on('aborted', () => cut('connection closed early'));
  res.on('error', () => cut('connection closed early'));
  res.on('end', () => {
    if (!res.complete || (expected !== undefined && total !== expected)) cut('connection closed early');
    else finish(undefined, { status: res.statusCode ?? 0, headers: headersOf(res), warnings: res.headersDistinct.warning, body: Buffer.concat(chunks) });
  });
  res.on('close', () => cut('connection closed early'));
}

/** One request, its whole answer read (bounded), or an error naming it. */
export function send(r: HttpRequest, limits: HttpLimits): Promise<Answer> {
  const what = requestLine(r.method, r.url);
  const { ms, byDeadline } = budget(limits, what);
  return new Promise<Answer>((resolve, reject) => {
    let settled = false;
    const req = request(r);
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
    const timer = setTimeout(() => finish(timedOut(what, ms, byDeadline)), ms);
    const onAbort = () => finish(Object.assign(new Error(`${what}: aborted`), { name: 'AbortError' }));
    r.signal?.addEventListener('abort', onAbort);
    req.on('error', (e) => finish(e));
    req.on('response', (res) => {
      limits.lastAnswerAt = Date.now();
      readAll(res, what, limits, finish);
    });
    if (r.body !== undefined) req.write(r.body);
    req.end();
  });
}

/** An answer's body as JSON, or its text when it is none (what an error's Status is read from). */
export function bodyOf(a: Answer): unknown {
  const text = a.body.toString('utf8');
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * A success's body, parsed once: JSON, or an error naming the request (an HTML login page or a
 * cut body is an error, not an object). A failure: the ApiError of its Status.
 */
export function jsonOf<T>(what: string, a: Answer): T {
  if (a.status < 200 || a.status >= 300) throw ApiError.fromAnswer(a.status, a.headers, bodyOf(a));
  const text = a.body.toString('utf8');
  if (text === '') return undefined as T;
  try {
    return JSON.parse(text) as T;
  } catch {
    const type = a.headers['content-type'] ?? 'no content-type';
    const start = text.slice(0, 60).replace(/\s+/g, ' ').trim();
    throw new BadAnswer(`${what}: answer is not JSON (HTTP ${a.status}, ${type}${start ? `: "${start}${text.length > 60 ? '…' : ''}"` : ', empty'})`);
  }
}

/** The one rule for 429: a Retry-After beyond the deadline is not waited for, it is refused. */
function throttledPastDeadline(what: string, a: Answer, limits: HttpLimits): Refused | undefined {
  const after = a.status === 429 ? parseRetryAfter(a.headers['retry-after']) : undefined;
  if (after === undefined || limits.deadline === undefined || Date.now() + after * 1000 <= limits.deadline) return undefined;
  return new Refused(`${what}: HTTP 429, Retry-After ${after} s is beyond the run's deadline (${Math.max(0, Math.round((limits.deadline - Date.now()) / 1000))} s left); giving up`);
}

/** `send`, with the 429-past-deadline rule. */
/** Where `collectWarnings` gathers the warnings of the requests made within it. */
const warningScope = new AsyncLocalStorage<string[]>();

/**
 * The text of a `Warning` header (RFC 9111 §5.5: `299 - "text"`, as kube-apiserver sends an
 * admission plugin's warnings, e.g. PodSecurity's `would violate PodSecurity "baseline:latest": ...`).
 */
export function warningText(header: string): string {
  const m = /^\d{3} \S+ "((?:[^"\\]|\\.)*)"/.exec(header.trim());
  return m ? m[1].replace(/\\(.)/g, '$1') : header.trim();
}

/** Runs `fn`; the `Warning` headers of every answer to the requests it made (retries too), as texts. */
export async function collectWarnings<T>(fn: () => Promise<T>): Promise<{ value: T; warnings: string[] }> {
  const warnings: string[] = [];
  const value = await warningScope.run(warnings, fn);
  return { value, warnings: [...new Set(warnings)] };
}

export async function exchange(r: HttpRequest, limits: HttpLimits): Promise<Answer> {
  const a = await send(r, limits);
  if (a.warnings?.length) warningScope.getStore()?.push(...a.warnings.map(warningText));
  const refused = throttledPastDeadline(requestLine(r.method, r.url), a, limits);
  if (refused) throw refused;
  return a;
}

/** client-node's HttpLibrary (its API classes' transport) on top of `exchange`. */
export function boundedHttpLibrary(limits: HttpLimits): HttpLibrary {
  return wrapHttpLibrary({
    async send(ctx: RequestContext): Promise<ResponseContext> {
      const body = ctx.getBody();
      if (body !== undefined && typeof body !== 'string' && !Buffer.isBuffer(body)) throw new Error(`${requestLine(ctx.getHttpMethod(), ctx.getUrl())}: unsupported request body`);
      const a = await exchange({
        url: ctx.getUrl(), method: ctx.getHttpMethod(), headers: ctx.getHeaders(), body,
        agent: ctx.getAgent() as http.Agent | undefined, signal: ctx.getSignal() as AbortSignal | undefined,
      }, limits);
      return new ResponseContext(a.status, a.headers, { text: () => Promise.resolve(a.body.toString('utf8')), binary: () => Promise.resolve(a.body) });
    },
  });
}

/** An open stream: stop it (its `onEnd` gets null). */
export interface StreamHandle {
  abort(): void;
}

export interface StreamOptions {
  /** Silence longer than this cuts the stream (StreamIdle). @default limits.watchIdleMs */
  readonly idleMs?: number;
  /** Each chunk as it arrives. */
  readonly onData: (chunk: Buffer) => void;
  /** Once: null for the server's clean end or `abort()`, else why it broke. */
  readonly onEnd: (err: Error | null) => void;
}

/**
 * A long answer read as it comes (a watch, a followed log): resolves once the server answered 200
 * (within the request timeout), rejects with the ApiError of any other answer or the connection's
 * failure. Then every chunk goes to `onData` until the stream ends, breaks or stays silent past
 * its idle limit.
 */
export function openStream(r: HttpRequest, limits: HttpLimits, o: StreamOptions): Promise<StreamHandle> {
  const what = requestLine(r.method, r.url);
  const idleMs = o.idleMs ?? limits.watchIdleMs;
  const { ms, byDeadline } = budget(limits, what);
  return new Promise<StreamHandle>((resolve, reject) => {
    let open = false;
    let finished = false;
    let idle: NodeJS.Timeout | undefined;
    const req = request(r);
    const end = (err: Error | null) => {
      if (finished) return;
      finished = true;
      clearTimeout(idle);
      req.destroy();
      if (open) o.onEnd(err);
      else reject(err ?? new BadAnswer(`${what}: aborted before the answer`));
    };
    const handle: StreamHandle = { abort: () => end(null) };
    idle = setTimeout(() => end(timedOut(what, ms, byDeadline)), ms);
    req.on('error', (e) => end(e));
    req.on('response', (res) => {
      limits.lastAnswerAt = Date.now();
      if (res.statusCode !== 200) {
        readAll(res, what, limits, (e, a) => end(e ?? ApiError.fromAnswer(a!.status, a!.headers, bodyOf(a!))));
        return;
      }
      open = true;
      const quiet = () => {
        clearTimeout(idle);
        idle = setTimeout(() => end(new StreamIdle(`${what}: nothing received for ${idleMs / 1000} s; cut off`)), idleMs);
      };
      quiet();
      res.on('data', (chunk: Buffer) => {
        if (finished) return;
        limits.lastAnswerAt = Date.now();
        quiet();
        try {
          o.onData(chunk);
        } catch (e) {
          end(e as Error);
        }
      });
      const cut = () => end(res.complete ? null : new BadAnswer(`${what}: stream cut`));
      res.on('error', () => end(new BadAnswer(`${what}: stream cut`)));
      res.on('aborted', () => end(new BadAnswer(`${what}: stream cut`)));
      res.on('end', cut);
      res.on('close', cut);
      resolve(handle);
    });
    req.end();
  });
}
