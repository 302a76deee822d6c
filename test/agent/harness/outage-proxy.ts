/**
 * A TCP proxy on 127.0.0.1 in front of the API simulator that can go down: `down()` cuts every
 * open connection (the agent's watch breaks mid-stream) and refuses new ones until `up()`, as an
 * API server that restarts or a network that fails does. (test/sim/faults.ts breaks single
 * answers; this takes the whole API away for a while.)
 */
import * as fs from 'fs';
import * as net from 'net';
import * as os from 'os';
import * as path from 'path';
import { stringify } from 'yaml';

export interface OutageProxy {
  readonly url: string;
  readonly kubeconfigPath: string;
  down(): Promise<void>;
  up(): Promise<void>;
  stop(): Promise<void>;
}

export async function startOutageProxy(target: string): Promise<OutageProxy> {
  const t = new URL(target);
  const sockets = new Set<net.Socket>();
  const track = (s: net.Socket): void => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => s.destroy());
  };
  const server = net.createServer((client) => {
    track(client);
    const upstream = net.connect(Number(t.port), t.hostname);
    track(upstream);
    client.pipe(upstream);
    upstream.pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  const listen = (port: number): Promise<void> => new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  await listen(0);
  const port = (server.address() as net.AddressInfo).port;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-outage-'));
  const kubeconfigPath = path.join(dir, 'kubeconfig');
  const url = `http://127.0.0.1:${port}`;
  fs.writeFileSync(kubeconfigPath, stringify({
    apiVersion: 'v1', kind: 'Config', 'current-context': 'outage',
    clusters: [{ name: 'outage', cluster: { server: url } }],
    users: [{ name: 'outage', user: {} }],
    contexts: [{ name: 'outage', context: { cluster: 'outage', user: 'outage' } }],
  }));
  let listening = true;
  const close = (): Promise<void> => new Promise((resolve) => {
    for (const s of sockets) s.destroy();
    if (!listening) return resolve();
    listening = false;
    server.close(() => resolve());
  });
  return {
    url,
    kubeconfigPath,
    down: close,
    async up() {
      if (listening) return;
      await listen(port);
      listening = true;
    },
    async stop() {
      await close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
