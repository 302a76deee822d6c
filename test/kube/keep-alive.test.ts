/**
 * Connections are reused (src/kube/transport.ts `pooledAgent`): client-node builds a new agent
 * without keep-alive for every request, so each API call would pay a TCP connection and a TLS
 * handshake. Against a real TLS server on 127.0.0.1 (a certificate made by openssl), sequential
 * requests of one set of credentials share one connection; other credentials get their own.
 */
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as https from 'https';
import { AddressInfo } from 'net';
import * as os from 'os';
import * as path from 'path';
import { KubeConfig } from '@kubernetes/client-node';
import { KubeClient } from '../../src/kube/connection';

let dir: string;
let server: https.Server;
let url: string;
let ca: string;
let handshakes = 0;
let connections = 0;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kube-keepalive-'));
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1',
    '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', path.join(dir, 'key.pem'), '-out', path.join(dir, 'cert.pem')], { stdio: 'pipe' });
  ca = fs.readFileSync(path.join(dir, 'cert.pem'), 'utf8');
  server = https.createServer({ key: fs.readFileSync(path.join(dir, 'key.pem')), cert: ca }, (req, res) => {
    req.resume();
    req.on('end', () => {
      const body = JSON.stringify({ kind: 'NamespaceList', apiVersion: 'v1', metadata: {}, items: [] });
      res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) }).end(body);
    });
  });
  server.on('secureConnection', () => { handshakes += 1; });
  server.on('connection', () => { connections += 1; });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  fs.rmSync(dir, { recursive: true, force: true });
});

function client(token: string): KubeClient {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: url, caData: Buffer.from(ca).toString('base64') }],
    users: [{ name: 'u', token }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return new KubeClient(kc);
}

describe('API connections', () => {
  it('are reused: ten sequential requests make one TLS handshake', async () => {
    const before = { handshakes, connections };
    const c = client('t1');
    for (let i = 0; i < 10; i++) await c.request('GET', '/api/v1/namespaces');
    expect(handshakes - before.handshakes).toBe(1);
    expect(connections - before.connections).toBe(1);
  });

  it('are shared by clients with the same options (the token is a header, not a connection property)', async () => {
    const before = handshakes;
    await client('t2').request('GET', '/api/v1/namespaces');
    await client('t3').request('GET', '/api/v1/namespaces');
    expect(handshakes - before).toBe(0);
  });

  it('are not shared across TLS options: a client certificate gets a connection of its own', async () => {
    const before = handshakes;
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: url, caData: Buffer.from(ca).toString('base64') }],
      users: [{ name: 'u', certData: Buffer.from(ca).toString('base64'), keyData: fs.readFileSync(path.join(dir, 'key.pem')).toString('base64') }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    const c = new KubeClient(kc);
    await c.request('GET', '/api/v1/namespaces');
    await c.request('GET', '/api/v1/namespaces');
    expect(handshakes - before).toBe(1);
  });

  it('run in parallel on several connections, then stay pooled', async () => {
    const before = handshakes;
    const c = client('t4');
    await Promise.all(Array.from({ length: 4 }, () => c.request('GET', '/api/v1/namespaces')));
    const parallel = handshakes - before;
    expect(parallel).toBeGreaterThanOrEqual(1);
    expect(parallel).toBeLessThanOrEqual(4);
    await Promise.all(Array.from({ length: 4 }, () => c.request('GET', '/api/v1/namespaces')));
    expect(handshakes - before).toBe(parallel);
  });
});
