/**
 * Container logs go through the bounded transport (src/kube/logs.ts), not around it: a log read
 * whole that stalls is cut off by the request timeout, a followed log that goes silent by the idle
 * limit, and the runtime follows a cut-off log again from then on (tailLines=0), nothing repeated.
 */
import * as fs from 'fs';
import * as http from 'http';
import type { AddressInfo } from 'net';
import * as os from 'os';
import * as path from 'path';
import { stringify } from 'yaml';
import { KubeClient } from '../../src/kube/connection';
import { RequestTimeout, StreamIdle } from '../../src/kube/errors';
import { loadKubeConfig } from '../../src/kube/kubeconfig';
import { followLog, readLog } from '../../src/kube/logs';
import { defaultLimits } from '../../src/kube/transport';
import { Cluster } from '../../src/kube/cluster';
import { StepLogs } from '../../src/runtime/apply/step-logs';

/** A log endpoint that sends the first line, then nothing, keeping the connection open. */
async function stallingServer(): Promise<{ url: string; requests: URL[]; close(): Promise<void> }> {
  const open = new Set<http.ServerResponse>();
  const requests: URL[] = [];
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    requests.push(url);
    res.writeHead(200, { 'Content-Type': 'text/plain' });
    res.flushHeaders();
    if (url.searchParams.get('tailLines') !== '0') res.write('started\n');
    open.add(res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: async () => {
      for (const r of open) r.destroy();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

let dir: string;
let srv: Awaited<ReturnType<typeof stallingServer>>;
let kubeconfig: string;

beforeEach(async () => {
  srv = await stallingServer();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kube-logs-'));
  kubeconfig = path.join(dir, 'kubeconfig');
  fs.writeFileSync(kubeconfig, stringify({
    apiVersion: 'v1', kind: 'Config', 'current-context': 'c',
    clusters: [{ name: 'c', cluster: { server: srv.url, 'insecure-skip-tls-verify': true } }],
    users: [{ name: 'u', user: { token: 't' } }],
    contexts: [{ name: 'c', context: { cluster: 'c', user: 'u' } }],
  }));
});
afterEach(async () => {
  await srv.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('container logs through the bounded transport', () => {
  it('cuts off a log read whole that stalls, at the request timeout', async () => {
    const client = new KubeClient(loadKubeConfig({ kubeconfig }), { ...defaultLimits(), requestTimeoutMs: 300 });
    const started = Date.now();
    const e = await readLog(client, 'ns', 'p', 'c').then(() => undefined, (x: unknown) => x);
    expect(e).toBeInstanceOf(RequestTimeout);
    expect((e as Error).message).toMatch(/^GET \/api\/v1\/namespaces\/ns\/pods\/p\/log: no complete answer within 0.3 s/);
    expect(Date.now() - started).toBeLessThan(5000);
    expect(srv.requests[0].searchParams.get('container')).toBe('c');
  });

  it('cuts off a followed log that goes silent, at the idle limit, after what it sent', async () => {
    const client = new KubeClient(loadKubeConfig({ kubeconfig }), { ...defaultLimits(), watchIdleMs: 300 });
    let text = '';
    const ended = new Promise<Error | null>((resolve) => {
      void followLog(client, 'ns', 'p', 'c', { onChunk: (t) => { text += t; }, onEnd: resolve });
    });
    const err = await ended;
    expect(text).toBe('started\n');
    expect(err).toBeInstanceOf(StreamIdle);
    expect(err!.message).toMatch(/pods\/p\/log: nothing received for 0.3 s; cut off/);
    expect(srv.requests[0].searchParams.get('follow')).toBe('true');
  });

  it('the runtime follows a cut-off step log again from then on, without repeating its lines', async () => {
    const cluster = new Cluster(loadKubeConfig({ kubeconfig }));
    cluster.limits.watchIdleMs = 200;
    const lines: string[] = [];
    const logs = new StepLogs(cluster, dir, 'step', { emit: (e: any) => { if (e.type === 'log') lines.push(e.line); } } as any);
    logs.observe([{
      metadata: { name: 'p', namespace: 'ns' },
      spec: { containers: [{ name: 'c' }] },
      status: { containerStatuses: [{ name: 'c', state: { running: {} } }] },
    } as any]);
    const deadline = Date.now() + 5000;
    while (srv.requests.length < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    logs.stop();
    expect(srv.requests.length).toBeGreaterThanOrEqual(3);
    expect(srv.requests[0].searchParams.get('tailLines')).toBeNull();
    for (const r of srv.requests.slice(1)) expect(r.searchParams.get('tailLines')).toBe('0');
    expect(lines).toEqual(['started']);
    expect(fs.readFileSync(path.join(dir, 'step', 'p.c.log'), 'utf8')).toBe('started\n');
  });
});
