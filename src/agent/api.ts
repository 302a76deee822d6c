/**
 * The agent's Kubernetes API client: JSON requests and watch streams over plain http/https, with
 * the connection settings of the kubeconfig (pods.ts `apiConnection`). Small on purpose: the full
 * @kubernetes/client-node costs ~35 MB of RSS and 0.2 s to load (docs/agent.md).
 *
 * Every request has a deadline; a watch has an inactivity limit instead (the server sends
 * bookmarks, and closes the stream itself at `timeoutSeconds`).
 */
import * as http from 'http';
import * as https from 'https';
import { Answer, exchange } from './http-exchange';
import { apiConnection, ApiConnection } from './pods';

/** An answer that is not 2xx, with the API's Status `reason` when it sent one. */
export class ApiError extends Error {
  constructor(message: string, readonly status: number, readonly reason?: string) {
    super(message);
  }
}

/** The request never got a complete answer (refused, reset, timed out, cut off). */
export class ApiUnreachable extends Error {}

export interface WatchEvent {
  readonly type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  readonly object: { metadata?: { resourceVersion?: string }; code?: number; reason?: string; message?: string } & Record<string, unknown>;
}

export interface WatchHandle {
  /** Resolves when the server ends the stream; rejects on errors (ApiError for a non-200 answer). */
  readonly done: Promise<void>;
  abort(): void;
}

export interface ApiClient {
  readonly server: URL;
  request<T = unknown>(method: string, path: string, options?: { body?: unknown; contentType?: string; timeoutMs?: number }): Promise<T>;
  /** Streams the events of a watch URL; `onOpen` runs once the server answered 200. */
  watch(path: string, onEvent: (e: WatchEvent) => void, options: { idleTimeoutMs: number; onOpen?: () => void }): WatchHandle;
  close(): void;
}

function statusMessage(status: number, body: string): { message: string; reason?: string } {
  try {
    const s = JSON.parse(body) as { message?: unknown; reason?: unknown };
    return { message: typeof s.message === 'string' ? s.message : body.slice(0, 200), reason: typeof s.reason === 'string' ? s.reason : undefined };
  } catch {
    return { message: body.slice(0, 200) || `HTTP ${status}` };
  }
}

export async function apiClient(kubeconfig: string, defaultTimeoutMs: number): Promise<ApiClient> {
  const conn: ApiConnection = await apiConnection(kubeconfig);
  const tls = conn.server.protocol === 'https:';
  // One keep-alive agent: status patches and lease renewals reuse connections.
  const { ca, cert, key, rejectUnauthorized, servername } = conn.request;
  const agent = tls ? new https.Agent({ ca, cert, key, rejectUnauthorized, servername, keepAlive: true }) : new http.Agent({ keepAlive: true });
  const lib = tls ? https : http;
  const base = conn.server.href.endsWith('/') ? conn.server.href : `${conn.server.href}/`;
  const urlOf = (p: string): URL => new URL(p.replace(/^\//, ''), base);

  async function request<T>(method: string, p: string, options: { body?: unknown; contentType?: string; timeoutMs?: number } = {}): Promise<T> {
    const url = urlOf(p);
    const timeoutMs = options.timeoutMs ?? defaultTimeoutMs;
    const payload = options.body === undefined ? undefined : Buffer.from(JSON.stringify(options.body));
    const headers: Record<string, string | number> = { ...(conn.request.headers as Record<string, string>), Accept: 'application/json' };
    if (payload) {
      headers['Content-Type'] = options.contentType ?? 'application/json';
      headers['Content-Length'] = payload.length;
    }
    let answer: Answer;
    try {
      answer = await exchange(url, { ...conn.request, agent, method, headers }, payload, timeoutMs);
    } catch (e) {
      throw new ApiUnreachable(`${method} ${url.pathname}: ${(e as Error).message}`);
    }
    if (answer.status < 200 || answer.status > 299) {
      const s = statusMessage(answer.status, answer.body);
      throw new ApiError(`${method} ${url.pathname}: HTTP ${answer.status}: ${s.message}`, answer.status, s.reason);
    }
    try {
      return (answer.body ? JSON.parse(answer.body) : undefined) as T;
    } catch (e) {
      throw new ApiUnreachable(`${method} ${url.pathname}: the answer is not JSON (${(e as Error).message})`);
    }
  }

  function watch(p: string, onEvent: (e: WatchEvent) => void, options: { idleTimeoutMs: number; onOpen?: () => void }): WatchHandle {
    const url = urlOf(p);
    let req: http.ClientRequest | undefined;
    let aborted = false;
    const done = new Promise<void>((resolve, reject) => {
      let idle: NodeJS.Timeout | undefined;
      const fail = (e: Error): void => {
        clearTimeout(idle);
        req?.destroy();
        reject(e);
      };
      const touch = (): void => {
        clearTimeout(idle);
        idle = setTimeout(() => fail(new ApiUnreachable(`watch ${url.pathname}: nothing received for ${options.idleTimeoutMs} ms`)), options.idleTimeoutMs);
      };
      // A watch is long-lived: its own connection, not one of the keep-alive pool's.
      req = lib.request(url, { ...conn.request, agent: false, method: 'GET', headers: { ...(conn.request.headers as Record<string, string>), Accept: 'application/json' } }, (res) => {
        if (res.statusCode !== 200) {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const s = statusMessage(res.statusCode ?? 0, Buffer.concat(chunks).toString('utf8'));
            fail(new ApiError(`watch ${url.pathname}: HTTP ${res.statusCode}: ${s.message}`, res.statusCode ?? 0, s.reason));
          });
          return;
        }
        options.onOpen?.();
        touch();
        let buffered = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          touch();
          buffered += chunk;
          let nl: number;
          while ((nl = buffered.indexOf('\n')) >= 0) {
            const line = buffered.slice(0, nl).trim();
            buffered = buffered.slice(nl + 1);
            if (!line) continue;
            let event: WatchEvent;
            try {
              event = JSON.parse(line) as WatchEvent;
            } catch (e) {
              return fail(new ApiUnreachable(`watch ${url.pathname}: an event is not JSON (${(e as Error).message})`));
            }
            try {
              onEvent(event);
            } catch (e) {
              return fail(e as Error);
            }
          }
        });
        res.on('end', () => {
          clearTimeout(idle);
          if (aborted) return resolve();
          if (!res.complete) return reject(new ApiUnreachable(`watch ${url.pathname}: the stream was cut off`));
          resolve();
        });
        res.on('aborted', () => {
          clearTimeout(idle);
          if (aborted) resolve();
          else reject(new ApiUnreachable(`watch ${url.pathname}: the stream was cut off`));
        });
        res.on('error', (e) => (aborted ? resolve() : fail(new ApiUnreachable(`watch ${url.pathname}: ${e.message}`))));
      });
      req.on('error', (e) => {
        clearTimeout(idle);
        if (aborted) resolve();
        else reject(new ApiUnreachable(`watch ${url.pathname}: ${e.message}`));
      });
      req.on('close', () => {
        clearTimeout(idle);
        if (aborted) resolve();
      });
      req.end();
    });
    return {
      done,
      abort: () => {
        aborted = true;
        req?.destroy();
      },
    };
  }

  return { server: conn.server, request, watch, close: () => agent.destroy() };
}
