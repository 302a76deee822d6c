/**
 * Credentials are resolved at every request, not once (src/kube/connection.ts): a token file
 * rotated between two requests, and an exec plugin whose tokens expire, against the simulator
 * that accepts only the credential of the moment. The runtime's Cluster and the agent's pod
 * watch and Lease renewal all go through it.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { stringify } from 'yaml';
import { apiClient } from '../../src/agent/api';
import type { ApiPod } from '../../src/agent/api-pod';
import { NodePresence } from '../../src/agent/node-lease';
import { listNodePodList } from '../../src/agent/pods';
import { PodWatcher } from '../../src/agent/watch-pods';
import { KubeClient } from '../../src/kube/connection';
import { loadKubeConfig } from '../../src/kube/kubeconfig';
import { Cluster } from '../../src/kube/cluster';
import { startSimulator, Simulator } from '../sim';
import { until } from '../sim/helpers';
import { TOLERATIONS } from '../agent/harness/tolerations';

const NODE = 'cred-node';

let dir: string;
let sim: Simulator;

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kube-cred-'));
  sim = await startSimulator({ externalNodes: [NODE] });
});
afterEach(async () => {
  await sim.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** A kubeconfig of the simulator with this user. */
function kubeconfig(user: Record<string, unknown>): string {
  const file = path.join(dir, 'kubeconfig');
  fs.writeFileSync(file, stringify({
    apiVersion: 'v1', kind: 'Config', 'current-context': 'sim',
    clusters: [{ name: 'sim', cluster: { server: sim.url, 'insecure-skip-tls-verify': true } }],
    users: [{ name: 'u', user }],
    contexts: [{ name: 'sim', context: { cluster: 'sim', user: 'u' } }],
  }));
  return file;
}

const sent = () => sim.requests.filter((r) => r.authorization !== undefined).map((r) => r.authorization);

describe('a token file', () => {
  it('is read again at every request: a token rotated between two requests is the one sent', async () => {
    fs.writeFileSync(path.join(dir, 'token'), 'first-token\n');
    const file = kubeconfig({ 'token-file': 'token' }); // relative to the kubeconfig, as kubectl reads it
    let valid = 'Bearer first-token';
    sim.setAuthorize((h) => h === valid);
    const client = new KubeClient(loadKubeConfig({ kubeconfig: file }));
    await client.request('GET', '/api/v1/namespaces');

    fs.writeFileSync(path.join(dir, 'token'), 'second-token\n');
    valid = 'Bearer second-token'; // the old one is revoked
    await client.request('GET', '/api/v1/namespaces');
    expect(sent()).toEqual(['Bearer first-token', 'Bearer second-token']);
  });

  it('serves the runtime\'s Cluster the same way (its lists and reads after a rotation)', async () => {
    fs.writeFileSync(path.join(dir, 'token'), 'a');
    const cluster = new Cluster(loadKubeConfig({ kubeconfig: kubeconfig({ 'token-file': path.join(dir, 'token') }) }));
    let valid = 'Bearer a';
    sim.setAuthorize((h) => h === valid);
    await cluster.ping();
    fs.writeFileSync(path.join(dir, 'token'), 'b');
    valid = 'Bearer b';
    const l = await cluster.list({ apiVersion: 'v1', kind: 'Namespace' });
    expect(l.items.map((n) => n.metadata?.name)).toContain('default');
  });
});

describe('an exec credential plugin whose tokens expire', () => {
  /** tokens issued: token → expiry (epoch seconds), as the plugin wrote them */
  const issued = (): Map<string, number> => new Map(fs.readFileSync(path.join(dir, 'issued'), 'utf8').trim().split('\n').map((l) => {
    const [t, exp] = l.split(' ');
    return [t, Number(exp)] as [string, number];
  }));

  beforeEach(() => {
    fs.writeFileSync(path.join(dir, 'issued'), '');
    // Each run issues a new token valid for 2 s (expirationTimestamp), recorded for the server.
    fs.writeFileSync(path.join(dir, 'plugin.sh'), [
      '#!/bin/sh',
      `n=$(wc -l < '${dir}/issued')`,
      'exp=$(( $(date +%s) + 2 ))',
      `echo "tok-$n $exp" >> '${dir}/issued'`,
      'printf \'{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"tok-%s","expirationTimestamp":"%s"}}\' "$n" "$(date -u -d @$exp +%Y-%m-%dT%H:%M:%SZ)"',
    ].join('\n'), { mode: 0o755 });
    // The server takes a token until it expires.
    sim.setAuthorize((h) => {
      const exp = issued().get(h?.replace(/^Bearer /, '') ?? '');
      return exp !== undefined && Date.now() / 1000 < exp;
    });
  });

  const execUser = () => ({ exec: { apiVersion: 'client.authentication.k8s.io/v1', command: path.join(dir, 'plugin.sh'), interactiveMode: 'Never' } });

  it('keeps the agent\'s pod watch and Lease renewal working past the first token\'s expiry', async () => {
    const file = kubeconfig(execUser());
    const api = await apiClient(file, 5000);
    const initial = await listNodePodList({ api, kubeconfig: file, node: NODE });
    const seen: string[] = [];
    const unreachable: string[] = [];
    const watcher = new PodWatcher({ api, kubeconfig: file, node: NODE, resyncMs: 3_600_000, apiTimeoutMs: 5000, backoffMs: 50, maxBackoffMs: 200 }, {
      listed: () => undefined,
      changed: (type, pod: ApiPod) => { seen.push(`${type} ${pod.metadata?.name}`); },
      reachability: (ok, why) => { if (!ok) unreachable.push(why ?? ''); },
    });
    watcher.start(initial);
    const presence = new NodePresence(api, NODE, '10.0.0.9');
    try {
      await presence.register();
      await presence.renewLease();
      const first = [...issued().keys()][0];
      await until(() => Date.now() / 1000 > issued().get(first)! + 0.2, 'the first token to expire', 5000);

      await presence.renewLease(); // a new token, run for this request
      sim.dropWatches(); // the watch reconnects: with a token valid now
      const watches = () => sim.requests.filter((r) => r.query.includes('watch=true') && r.status === 200);
      await until(() => watches().length >= 2, 'the watch to be opened again', 10_000);
      expect(watches()[1].authorization).not.toBe(watches()[0].authorization);
      sim.put({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'after-expiry', namespace: 'default' }, spec: { nodeName: NODE, tolerations: TOLERATIONS, containers: [{ name: 'c', image: 'x:1' }] } });
      await until(() => seen.includes('ADDED after-expiry'), 'the watch to see the pod created after the expiry', 10_000);
      expect(issued().size).toBeGreaterThanOrEqual(2);
      expect(sent()).not.toContain(undefined);
      // no request was refused: every one carried a token still valid
      expect(sim.requests.filter((r) => r.status === 401)).toEqual([]);
      expect(unreachable.filter((w) => /401/.test(w))).toEqual([]);
      const lease = sim.get('coordination.k8s.io/v1', 'Lease', NODE, 'kube-node-lease');
      expect(Date.parse(lease.spec.renewTime)).toBeGreaterThan(issued().get(first)! * 1000 - 2000);
    } finally {
      await watcher.stop();
    }
  });
});

describe('the agent\'s kubeconfig', () => {
  it('is read once per client: a relist after the file is gone still lists, with the credentials of the moment', async () => {
    fs.writeFileSync(path.join(dir, 'token'), 'one');
    const file = kubeconfig({ 'token-file': path.join(dir, 'token') });
    let valid = 'Bearer one';
    sim.setAuthorize((h) => h === valid);
    const api = await apiClient(file, 5000);
    const initial = await listNodePodList({ api, kubeconfig: file, node: NODE });
    let lists = 0;
    const unreachable: string[] = [];
    const watcher = new PodWatcher({ api, kubeconfig: file, node: NODE, resyncMs: 3_600_000, apiTimeoutMs: 5000, backoffMs: 50 }, {
      listed: () => { lists++; },
      changed: () => undefined,
      reachability: (ok, why) => { if (!ok) unreachable.push(why ?? ''); },
    });
    watcher.start(initial);
    try {
      expect(lists).toBe(1);
      fs.rmSync(file);
      fs.writeFileSync(path.join(dir, 'token'), 'two');
      valid = 'Bearer two';
      watcher.resync();
      await until(() => lists >= 2, 'the relist', 5000);
      expect(unreachable).toEqual([]);
      expect(sent().at(-1)).toBe('Bearer two');
    } finally {
      await watcher.stop();
    }
  });
});
