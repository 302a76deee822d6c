/**
 * kubectl's discovery cache on disk (src/kube/discovery-cache.ts), against the API simulator
 * through the real client: a second command asks nothing about its kinds, an expired file or a
 * kind missing from one is asked for again, and a 404 that contradicts a file is believed.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { Cluster } from '../../../src/kube/cluster';
import { DISCOVERY_TTL_MS, DiscoveryCache, discoveryCacheDir } from '../../../src/kube/discovery-cache';
import { MissingKind } from '../../../src/kube/api-errors';
import { loadKubeConfig } from '../../../src/kube/load-kubeconfig';
import { spawnCli } from '../e2e/harness';
import { certificate, deployment, namespace, writePlan } from '../plans';
import { Simulator, startSimulator } from '../../sim';

const CERT = { apiVersion: 'cert-manager.io/v1', kind: 'Certificate', name: 'uyuni-cert', namespace: 'default' };
const CM = { apiVersion: 'v1', kind: 'ConfigMap', name: 'absent', namespace: 'default' };
const DEPLOY = { apiVersion: 'apps/v1', kind: 'Deployment', name: 'absent', namespace: 'default' };

/** Requests of discovery: `/api/v1`, `/apis/<group>/<version>` and nothing below them. */
const discovery = (sim: Simulator, from = 0) => sim.requests.slice(from).filter((r) => r.method === 'GET' && /^\/(api\/v1|apis\/[^/]+\/[^/]+)$/.test(r.path)).map((r) => r.path);

let sim: Simulator | undefined;
let cacheRoot: string;
const savedEnv = process.env.KUBECACHEDIR;

beforeEach(() => {
  cacheRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'uyuni-kubecache-'));
  process.env.KUBECACHEDIR = cacheRoot;
});
afterEach(async () => {
  await sim?.stop();
  sim = undefined;
  fs.rmSync(cacheRoot, { recursive: true, force: true });
  if (savedEnv === undefined) delete process.env.KUBECACHEDIR;
  else process.env.KUBECACHEDIR = savedEnv;
});

/** A fresh client, as a new command would have. */
const connect = (s: Simulator) => new Cluster(loadKubeConfig({ kubeconfig: s.kubeconfigPath }));

describe('discovery cache', () => {
  it("is kept where kubectl keeps it, named by the server's host and port", () => {
    expect(discoveryCacheDir('https://10.0.0.1:6443', {}, '/home/a')).toBe('/home/a/.kube/cache/discovery/10.0.0.1_6443');
    expect(discoveryCacheDir('http://127.0.0.1:8080/', { KUBECACHEDIR: '/c' }, '/home/a')).toBe('/c/discovery/127.0.0.1_8080/');
    const cache = new DiscoveryCache('/c/discovery/h_1');
    expect(cache.file('v1')).toBe('/c/discovery/h_1/v1/serverresources.json');
    expect(cache.file('apps/v1')).toBe('/c/discovery/h_1/apps/v1/serverresources.json');
  });

  it('lets a second client ask nothing about its kinds', async () => {
    sim = await startSimulator();
    const first = connect(sim);
    for (const ref of [CERT, CM, DEPLOY]) expect(await first.get(ref)).toBeUndefined();
    expect(discovery(sim).sort()).toEqual(['/api/v1', '/apis/apps/v1', '/apis/cert-manager.io/v1']);
    const dir = discoveryCacheDir(sim.url);
    expect(JSON.parse(fs.readFileSync(path.join(dir, 'apps', 'v1', 'serverresources.json'), 'utf8')).resources.map((r: { kind: string }) => r.kind)).toContain('Deployment');

    const seen = sim.requests.length;
    const second = connect(sim);
    for (const ref of [CERT, CM, DEPLOY]) expect(await second.get(ref)).toBeUndefined();
    await second.list({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'default' });
    expect(discovery(sim, seen)).toEqual([]);
  });

  it('asks once for a group whose kinds are discovered together (issue 36), and the run sends each group once', async () => {
    sim = await startSimulator();
    const c = connect(sim);
    const kinds = ['Deployment', 'ReplicaSet', 'StatefulSet', 'DaemonSet'];
    const found = await Promise.all([...kinds.map((k) => c.resource('apps/v1', k)), c.resource('v1', 'Pod'), c.resource('v1', 'Service')]);
    expect(found.map((r) => r.name)).toEqual(['deployments', 'replicasets', 'statefulsets', 'daemonsets', 'pods', 'services']);
    expect(discovery(sim).sort()).toEqual(['/api/v1', '/apis/apps/v1']);
    // a kind nobody serves, asked together with a served one of its group: each answered, one more GET for it
    const seen = sim.requests.length;
    const both = await Promise.allSettled([c.resource('batch/v1', 'Job'), c.resource('batch/v1', 'NoSuchKind')]);
    expect(both[0].status === 'fulfilled' && both[0].value.name).toBe('jobs');
    expect(both[1].status === 'rejected' && both[1].reason).toBeInstanceOf(MissingKind);
    expect(discovery(sim, seen)).toEqual(['/apis/batch/v1', '/apis/batch/v1']);
  });

  it('asks again once a file is older than the TTL, and renews it', async () => {
    sim = await startSimulator();
    await connect(sim).get(DEPLOY);
    const file = new DiscoveryCache(discoveryCacheDir(sim.url)).file('apps/v1');
    const old = (Date.now() - DISCOVERY_TTL_MS - 60_000) / 1000;
    fs.utimesSync(file, old, old);
    const seen = sim.requests.length;
    await connect(sim).get(DEPLOY);
    expect(discovery(sim, seen)).toEqual(['/apis/apps/v1']);
    expect(Date.now() - fs.statSync(file).mtimeMs).toBeLessThan(60_000);
  });

  it('asks once for a kind the file does not list, and keeps the answer', async () => {
    sim = await startSimulator();
    await connect(sim).get(CERT);
    const file = new DiscoveryCache(discoveryCacheDir(sim.url)).file('cert-manager.io/v1');
    const list = JSON.parse(fs.readFileSync(file, 'utf8'));
    fs.writeFileSync(file, JSON.stringify({ ...list, resources: list.resources.filter((r: { kind: string }) => r.kind !== 'Certificate') }));
    const seen = sim.requests.length;
    const cluster = connect(sim);
    await cluster.get(CERT);
    await cluster.get(CERT);
    expect(discovery(sim, seen)).toEqual(['/apis/cert-manager.io/v1']);
    expect(JSON.parse(fs.readFileSync(file, 'utf8')).resources.map((r: { kind: string }) => r.kind)).toContain('Certificate');
  });

  it('believes a 404 over a file that lists a kind the server no longer serves', async () => {
    sim = await startSimulator();
    await connect(sim).get(CERT);
    const file = new DiscoveryCache(discoveryCacheDir(sim.url)).file('cert-manager.io/v1');
    const cached = fs.readFileSync(file, 'utf8');
    await sim.stop();
    // A server without cert-manager, whose fresh file says it has it (as after an uninstall).
    sim = await startSimulator({ certManager: false });
    const stale = new DiscoveryCache(discoveryCacheDir(sim.url)).file('cert-manager.io/v1');
    fs.mkdirSync(path.dirname(stale), { recursive: true });
    fs.writeFileSync(stale, cached);
    const cluster = connect(sim);
    await expect(cluster.get(CERT)).rejects.toBeInstanceOf(MissingKind);
    await expect(cluster.list({ apiVersion: CERT.apiVersion, kind: CERT.kind, namespace: 'default' })).rejects.toBeInstanceOf(MissingKind);
    expect(fs.existsSync(stale)).toBe(false);
  });

  it('spares the second `uyuni-cdk status` process every discovery request', async () => {
    sim = await startSimulator();
    const plan = writePlan([{ name: 'namespace', objects: [namespace()] }, { name: 'tls', objects: [certificate('web')] }, { name: 'app', objects: [deployment('web')] }], { name: 'cached' });
    const env = { KUBECACHEDIR: cacheRoot };
    const first = await spawnCli(['status', plan, '--kubeconfig', sim.kubeconfigPath], env).done;
    expect(first.err).toBe('');
    expect(discovery(sim).length).toBeGreaterThan(0);
    const seen = sim.requests.length;
    const second = await spawnCli(['status', plan, '--kubeconfig', sim.kubeconfigPath], env).done;
    expect(second.out).toBe(first.out);
    expect(sim.requests.length).toBeGreaterThan(seen);
    expect(discovery(sim, seen)).toEqual([]);
  });
});
