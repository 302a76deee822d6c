/**
 * Servers in front of the API simulator for the error-path tests, each on 127.0.0.1: one that
 * checks a bearer token as kube-apiserver does (401 with its Status body otherwise), one that
 * speaks TLS with a self-signed certificate made by openssl, and kubeconfigs that point at them.
 */
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as http from 'http';
import * as https from 'https';
import type { AddressInfo, Socket } from 'net';
import * as path from 'path';
import YAML from 'yaml';

export interface Front {
  readonly url: string;
  stop(): Promise<void>;
}

/** kube-apiserver's answer to a bad token, byte for byte as it sends it. */
const UNAUTHORIZED = JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'Unauthorized', reason: 'Unauthorized', code: 401 });

function forward(target: URL, req: http.IncomingMessage, res: http.ServerResponse): void {
  const up = http.request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers }, (r) => {
    res.writeHead(r.statusCode ?? 502, r.headers);
    r.pipe(res);
  });
  up.on('error', () => res.destroy());
  res.on('close', () => up.destroy());
  req.pipe(up);
}

async function listen(server: http.Server, scheme: 'http' | 'https'): Promise<Front> {
  const sockets = new Set<Socket>();
  server.on('connection', (s: Socket) => { sockets.add(s); s.on('close', () => sockets.delete(s)); });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `${scheme}://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async stop() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Forwards requests that carry `Authorization: Bearer <token>`; answers every other one 401. */
export function startAuthProxy(targetUrl: string, token: string): Promise<Front> {
  const target = new URL(targetUrl);
  return listen(http.createServer((req, res) => {
    if (req.headers.authorization === `Bearer ${token}`) return forward(target, req, res);
    req.resume();
    res.writeHead(401, { 'content-type': 'application/json' });
    res.end(UNAUTHORIZED);
  }), 'http');
}

/** A self-signed certificate for 127.0.0.1 (openssl), and an HTTPS server with it that forwards. */
export async function startTlsProxy(targetUrl: string, dir: string): Promise<Front & { caPem: string }> {
  const key = path.join(dir, 'tls.key');
  const cert = path.join(dir, 'tls.crt');
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '1',
    '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'], { stdio: 'ignore' });
  const target = new URL(targetUrl);
  const front = await listen(https.createServer({ key: fs.readFileSync(key), cert: fs.readFileSync(cert) }, (req, res) => forward(target, req, res)), 'https');
  return { ...front, caPem: fs.readFileSync(cert, 'utf8') };
}

export interface KubeconfigSpec {
  readonly server: string;
  readonly token?: string;
  /** PEM of the CA to trust. */
  readonly ca?: string;
  readonly insecure?: boolean;
}

/** A one-context kubeconfig (context, cluster and user all named `test`). */
export function writeKubeconfig(file: string, k: KubeconfigSpec): string {
  fs.writeFileSync(file, YAML.stringify({
    apiVersion: 'v1', kind: 'Config', 'current-context': 'test',
    clusters: [{ name: 'test', cluster: {
      server: k.server,
      ...(k.ca ? { 'certificate-authority-data': Buffer.from(k.ca).toString('base64') } : {}),
      ...(k.insecure ? { 'insecure-skip-tls-verify': true } : {}),
    } }],
    users: [{ name: 'test', user: k.token ? { token: k.token } : {} }],
    contexts: [{ name: 'test', context: { cluster: 'test', user: 'test', namespace: 'default' } }],
  }));
  return file;
}
