/**
 * kube-apiserver stopped and started again under a run (issue 37, point 5, "faults with real
 * components"), on a plane of this suite's own (the shared one is never restarted): its PID gets
 * SIGTERM (SIGKILL after 10 s), the other components and the runtime see connections refused,
 * then it starts again with the same command line (plane.ts `stopApiServer`, `startApiServer`).
 *
 * What the real server does: after a restart its watch cache starts from the current etcd
 * revision, so a watch from a resourceVersion before the restart is answered HTTP 200 with one
 * ERROR event `410 Expired` ("too old resource version: N (M)"), whether or not etcd was compacted
 * (watch.test.ts shows the other side: without a restart, a version compacted in etcd is still
 * replayed from the cache). kube-controller-manager's informers come back by themselves, up to
 * about 50 s later (its Deployment controller wrote nothing for 50 s after a restart here).
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { KubeClient } from '../../src/kube/connection';
import { Informer } from '../../src/kube/informer';
import { loadKubeConfig } from '../../src/kube/kubeconfig';
import { listAll, ListPage } from '../../src/kube/pager';
import { openWatch, WatchEvent } from '../../src/kube/watch';
import { spawnCli } from '../runtime/e2e/harness';
import { until } from './helpers';
import { down, kubectl, PlaneState, ROOT, startApiServer, stopApiServer, up } from './plane/plane';
import { writeScenario } from './plane/scenario';

const DIST = path.join(ROOT, 'dist', 'install');
let base: string;
let dir: string;
let state: PlaneState;

beforeAll(async () => {
  base = fs.mkdtempSync(path.join(os.tmpdir(), 'uyuni-cdk-restart-'));
  dir = path.join(base, 'plane');
  state = await up(dir);
}, 180_000);

afterAll(async () => {
  if (dir && fs.existsSync(path.join(dir, 'plane.json'))) await down(dir);
  fs.rmSync(base, { recursive: true, force: true });
}, 60_000);

const get = (ns: string, kind: string, name: string): any => {
  try {
    return JSON.parse(kubectl(state, ['-n', ns, 'get', kind, name, '-o', 'json']));
  } catch {
    return undefined;
  }
};

describe('kube-apiserver stopped and started again while run waits', () => {
  it('the run says the API server does not answer, waits, and converges: plan then shows no change', async () => {
    const ns = 'restart';
    // the server's first start holds until the scenario lets it go: the run is waiting then
    writeScenario(dir, { deployments: { uyuni: { startupMs: 'hold' } } }, ns);
    const run = spawnCli(['run', DIST, '--yes', '-n', ns, '--kubeconfig', state.kubeconfig, '--run-dir', path.join(base, 'run')]);
    let out = '';
    let err = '';
    run.child.stdout!.on('data', (d) => { out += d; });
    run.child.stderr!.on('data', (d) => { err += d; });
    await until('the run waiting for the server to start', async () => /\[7\/7\] server: Deployment uyuni/.test(out) && get(ns, 'deployment', 'uyuni'), 120_000);

    await stopApiServer(dir);
    await until('the run saying the API server does not answer', async () => /uyuni-cdk: the API server does not answer \(ECONNREFUSED from https:\/\/127\.0\.0\.1:\d+/.test(err), 60_000);
    await startApiServer(dir);
    writeScenario(dir, {}, ns);

    const done = await run.done;
    expect({ code: done.code, err: done.err }).toEqual({ code: 0, err: expect.stringMatching(/the API server answers again \(it did not for \d+ s\)/) });
    expect(done.err).toMatch(/retrying until it does, for up to 300 s after its last answer/);
    expect(done.out).toMatch(/Run complete/);
    expect(get(ns, 'deployment', 'uyuni').status.availableReplicas).toBe(1);

    const plan = spawnCli(['plan', DIST, '--detailed-exitcode', '-n', ns, '--kubeconfig', state.kubeconfig]);
    const planned = await plan.done;
    expect({ code: planned.code, err: planned.err }).toEqual({ code: 0, err: '' });
  }, 300_000);
});

describe('a watch from before a restart of kube-apiserver', () => {
  const ns = 'relist';
  const client = () => new KubeClient(loadKubeConfig({ kubeconfig: state.kubeconfig }));
  const configMaps = `/api/v1/namespaces/${ns}/configmaps`;

  it('is answered 410 Expired, and the informer lists again instead of failing', async () => {
    kubectl(state, ['create', 'namespace', ns]);
    kubectl(state, ['-n', ns, 'create', 'configmap', 'w', '--from-literal=a=1']);
    const before = get(ns, 'configmap', 'w');
    kubectl(state, ['-n', ns, 'patch', 'configmap', 'w', '-p', '{"data":{"a":"2"}}']);
    await stopApiServer(dir);
    await startApiServer(dir);

    const raw = await new Promise<{ ended: Error | null; events: WatchEvent[] }>((resolve, reject) => {
      const events: WatchEvent[] = [];
      openWatch(client(), configMaps, { resourceVersion: before.metadata.resourceVersion, timeoutSeconds: 3 }, {
        onEvent: (e) => events.push(e), onEnd: (ended) => resolve({ ended, events }),
      }).catch(reject);
    });
    expect(raw.events.map((e) => [e.type, (e.object as any).code, (e.object as any).reason])).toEqual([['ERROR', 410, 'Expired']]);
    expect((raw.events[0].object as any).message).toMatch(new RegExp(`^too old resource version: ${before.metadata.resourceVersion} \\(\\d+\\)$`));

    // the informer starts from the list as it was before the restart (a=1) and its version
    const c = client();
    const listed: Array<Record<string, string> | undefined> = [];
    const failures: Error[] = [];
    type ConfigMap = { metadata?: { name?: string }; data?: Record<string, string> };
    const informer = new Informer<ConfigMap>({
      client: c,
      list: () => listAll((token) => c.request<ListPage<ConfigMap>>('GET', configMaps, { query: { limit: 500, continue: token } })),
      path: () => configMaps,
      backoffMs: () => 100,
    }, {
      // the namespace's kube-root-ca.crt is listed too: ConfigMap w is what this test changed
      listed: (items) => listed.push(items.find((i) => i.metadata?.name === 'w')?.data),
      changed: () => undefined,
      failed: (e) => { failures.push(e); },
    });
    informer.start({ items: [before], resourceVersion: before.metadata.resourceVersion });
    try {
      await until('the informer listing again', async () => listed.length >= 2, 30_000);
    } finally {
      await informer.stop();
    }
    expect(listed.slice(0, 2)).toEqual([{ a: '1' }, { a: '2' }]);
    expect(failures).toEqual([]);
  }, 120_000);
});
