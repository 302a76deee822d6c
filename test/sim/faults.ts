/**
 * A misbehaving API in front of the simulator: an HTTP proxy on 127.0.0.1 that forwards every
 * request to the simulator, except those a rule matches, which get a broken answer at the socket
 * level (what `failNext`/`throttleNext` in http.ts cannot do: those answer well-formed Status
 * errors). Used by test/runtime/e2e/faults.test.ts.
 *
 * | fault | what the client gets |
 * |---|---|
 * | `truncate` | 200, `content-length: 4096`, 20 bytes of JSON, then the socket is closed |
 * | `hang` | the request is accepted and never answered |
 * | `drip` | 200, `content-length: 1000`, one byte per second |
 * | `retry-after` | 429 with `Retry-After: <retryAfterSeconds>` (default 100000) |
 * | `html` | 200 `text/html` (a proxy's login page) |
 * | `huge` | 200 `application/json`, `content-length` 1 GiB, streamed lazily (only as fast as the client reads) |
 *
 * `blackhole()` turns it, from then on, into an API server behind a black-holed load balancer: it
 * accepts connections and never answers, and the answers under way (watches) stop too.
 */
import { createServer, IncomingMessage, request, Server, ServerResponse } from 'http';
import type { AddressInfo, Socket } from 'net';
import { mkdtempSync, rmSync, writeFileSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import YAML from 'yaml';

export type FaultKind = 'truncate' | 'hang' | 'drip' | 'retry-after' | 'html' | 'huge';

export interface FaultRule {
  readonly fault: FaultKind;
  /** Substring or pattern of `"METHOD /path?query"`; absent: every request. */
  readonly match?: string | RegExp;
  /** How many matching requests get the fault. @default every one */
  readonly count?: number;
  /** For `retry-after`. @default 100000 */
  readonly retryAfterSeconds?: number;
}

export interface FaultProxy {
  readonly url: string;
  readonly kubeconfigPath: string;
  /** `"METHOD /path?query"` of every request that got a fault. */
  readonly faulted: string[];
  /** Bytes the `huge` fault wrote in all. */
  readonly hugeBytesSent: () => number;
  /** From now on nothing is answered: new requests hang, the answers under way (watches) stop sending. */
  blackhole(): void;
  stop(): Promise<void>;
}

export const GiB = 1024 ** 3;

function forward(target: URL, req: IncomingMessage, res: ServerResponse, flowing: Set<IncomingMessage>): void {
  const up = request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers }, (r) => {
    res.writeHead(r.statusCode ?? 502, r.headers);
    r.pipe(res);
    flowing.add(r);
    r.on('close', () => flowing.delete(r));
  });
  up.on('error', () => res.destroy());
  res.on('close', () => up.destroy());
  req.pipe(up);
}

export async function startFaultProxy(targetUrl: string, rules: FaultRule[]): Promise<FaultProxy> {
  const target = new URL(targetUrl);
  const left = rules.map((r) => ({ rule: r, remaining: r.count ?? Infinity }));
  const faulted: string[] = [];
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  let hugeSent = 0;
  let holed = false;
  const flowing = new Set<IncomingMessage>();

  const server: Server = createServer((req, res) => {
    const line = `${req.method} ${req.url}`;
    if (holed) {
      faulted.push(line);
      req.resume();
      return;
    }
    const hit = left.find((l) => l.remaining > 0 && (!l.rule.match || (typeof l.rule.match === 'string' ? line.includes(l.rule.match) : l.rule.match.test(line))));
    if (!hit) {
      forward(target, req, res, flowing);
      return;
    }
    hit.remaining--;
    faulted.push(line);
    req.resume();
    const r = hit.rule;
    switch (r.fault) {
      case 'hang':
        return;
      case 'truncate':
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '4096' });
        res.write('{"kind":"APIResource');
        setTimeout(() => res.socket?.destroy(), 20);
        return;
      case 'drip': {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
        const t = setInterval(() => { if (!res.destroyed) res.write(' '); }, 1000);
        timers.add(t);
        res.on('close', () => { clearInterval(t); timers.delete(t); });
        return;
      }
      case 'retry-after': {
        const s = r.retryAfterSeconds ?? 100000;
        res.writeHead(429, { 'content-type': 'application/json', 'retry-after': String(s) });
        res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'TooManyRequests', message: 'Too many requests, please try again later.', code: 429, details: { retryAfterSeconds: s } }));
        return;
      }
      case 'html':
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end('<!DOCTYPE html><html><head><title>Sign in</title></head><body>Please sign in</body></html>\n');
        return;
      case 'huge': {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(GiB) });
        const chunk = Buffer.alloc(64 * 1024, ' ');
        let sent = 0;
        const pump = () => {
          while (!res.destroyed && sent < GiB) {
            const n = Math.min(chunk.length, GiB - sent);
            sent += n;
            hugeSent += n;
            if (!res.write(n === chunk.length ? chunk : chunk.subarray(0, n))) {
              res.once('drain', pump);
              return;
            }
          }
          if (!res.destroyed) res.end();
        };
        pump();
        return;
      }
    }
  });
  server.on('connection', (s) => { sockets.add(s); s.on('close', () => sockets.delete(s)); });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const dir = mkdtempSync(join(tmpdir(), 'k8s-faults-'));
  const kubeconfigPath = join(dir, 'kubeconfig');
  writeFileSync(kubeconfigPath, YAML.stringify({
    apiVersion: 'v1', kind: 'Config', 'current-context': 'faulty',
    clusters: [{ name: 'faulty', cluster: { server: url, 'insecure-skip-tls-verify': true } }],
    users: [{ name: 'faulty', user: {} }],
    contexts: [{ name: 'faulty', context: { cluster: 'faulty', user: 'faulty', namespace: 'default' } }],
  }));
  return {
    url,
    kubeconfigPath,
    faulted,
    hugeBytesSent: () => hugeSent,
    blackhole() {
      holed = true;
      for (const r of flowing) {
        r.unpipe();
        r.pause();
      }
    },
    async stop() {
      for (const t of timers) clearInterval(t);
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
