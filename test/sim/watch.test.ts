import * as k8s from '@kubernetes/client-node';
import { Simulator, startSimulator } from './index';
import { apiError, clients, until } from './helpers';

interface Seen {
  events: Array<{ type: string; name?: string; rv?: string; object: any }>;
  done?: Error | null;
  ended: boolean;
}

async function watch(c: ReturnType<typeof clients>, path: string, query: Record<string, any>): Promise<{ seen: Seen; ctl: AbortController }> {
  const seen: Seen = { events: [], ended: false };
  const ctl = await new k8s.Watch(c.kc).watch(path, query, (type, o: any) => seen.events.push({ type, name: o?.metadata?.name, rv: o?.metadata?.resourceVersion, object: o }), (err) => {
    seen.ended = true;
    seen.done = err;
  });
  return { seen, ctl };
}

const cm = (name: string, labels: Record<string, string> = {}) => ({ metadata: { name, labels }, data: { v: name } });

describe('API simulator: watch, selectors, pagination, faults', () => {
  let sim: Simulator;
  let c: ReturnType<typeof clients>;
  beforeEach(async () => {
    sim = await startSimulator();
    c = clients(sim);
  });
  afterEach(() => sim.stop());

  it('starts a watch with the current objects, then streams ADDED/MODIFIED/DELETED', async () => {
    await c.core.createNamespacedConfigMap({ namespace: 'default', body: cm('before') });
    const { seen, ctl } = await watch(c, '/api/v1/namespaces/default/configmaps', {});
    await until(() => seen.events.length === 1, 'initial ADDED');
    await c.core.createNamespacedConfigMap({ namespace: 'default', body: cm('after') });
    await c.core.patchNamespacedConfigMap({ namespace: 'default', name: 'after', body: [{ op: 'add', path: '/data/x', value: '1' }] });
    await c.core.deleteNamespacedConfigMap({ namespace: 'default', name: 'before' });
    await until(() => seen.events.length === 4, 'four events');
    expect(seen.events.map((e) => `${e.type} ${e.name}`)).toEqual(['ADDED before', 'ADDED after', 'MODIFIED after', 'DELETED before']);
    ctl.abort();
  });

  it('replays history after a resourceVersion, and answers 410 Expired once it was compacted', async () => {
    const first = await c.core.createNamespacedConfigMap({ namespace: 'default', body: cm('a') });
    const rv = first.metadata!.resourceVersion!;
    await c.core.createNamespacedConfigMap({ namespace: 'default', body: cm('b') });
    await c.core.deleteNamespacedConfigMap({ namespace: 'default', name: 'a' });
    const replay = await watch(c, '/api/v1/namespaces/default/configmaps', { resourceVersion: rv });
    await until(() => replay.seen.events.length === 2, 'replayed events');
    expect(replay.seen.events.map((e) => `${e.type} ${e.name}`)).toEqual(['ADDED b', 'DELETED a']);
    replay.ctl.abort();

    sim.compact();
    const stale = await watch(c, '/api/v1/namespaces/default/configmaps', { resourceVersion: rv });
    await until(() => stale.seen.ended, 'stream closed');
    expect(stale.seen.events).toHaveLength(1);
    expect(stale.seen.events[0].type).toBe('ERROR');
    expect(stale.seen.events[0].object).toMatchObject({ kind: 'Status', code: 410, reason: 'Expired' });
    expect(stale.seen.events[0].object.message).toMatch(/^too old resource version: \d+ \(\d+\)$/);

    // resuming from the current resourceVersion still works after compaction
    const list = await c.core.listNamespacedConfigMap({ namespace: 'default' });
    const fresh = await watch(c, '/api/v1/namespaces/default/configmaps', { resourceVersion: list.metadata!.resourceVersion });
    await c.core.createNamespacedConfigMap({ namespace: 'default', body: cm('c') });
    await until(() => fresh.seen.events.length === 1, 'live event');
    expect(fresh.seen.events[0]).toMatchObject({ type: 'ADDED', name: 'c' });
    fresh.ctl.abort();
  });

  it('sends a BOOKMARK every virtual minute and one before closing at timeoutSeconds', async () => {
    await sim.stop();
    sim = await startSimulator({ clockSpeed: 500 }); // 150 virtual s = 300 ms real
    c = clients(sim);
    const t0 = Date.now();
    const { seen } = await watch(c, '/api/v1/namespaces/default/configmaps', { timeoutSeconds: 150, allowWatchBookmarks: true });
    await until(() => seen.ended, 'server closed the stream');
    expect(seen.done).toBeNull(); // a clean end, not an error
    expect(Date.now() - t0).toBeGreaterThanOrEqual(250);
    expect(seen.events.map((e) => e.type)).toEqual(['BOOKMARK', 'BOOKMARK', 'BOOKMARK']); // at 60 s, 120 s, 150 s
    expect(seen.events[0].object).toMatchObject({ kind: 'ConfigMap', apiVersion: 'v1' });
    expect(Number(seen.events[0].rv)).toBeGreaterThan(0);
  });

  it('closes a watch without bookmarks at timeoutSeconds with no event', async () => {
    const { seen } = await watch(c, '/api/v1/namespaces/default/configmaps', { timeoutSeconds: 1 });
    await until(() => seen.ended, 'server closed the stream');
    expect(seen.events).toEqual([]);
  });

  it('serves a watch-list: current objects, then a BOOKMARK marking the end of initial events', async () => {
    await c.core.createNamespacedConfigMap({ namespace: 'default', body: cm('a') });
    const { seen, ctl } = await watch(c, '/api/v1/namespaces/default/configmaps', { sendInitialEvents: true, resourceVersionMatch: 'NotOlderThan', allowWatchBookmarks: true });
    await until(() => seen.events.length === 2, 'initial events');
    expect(seen.events.map((e) => e.type)).toEqual(['ADDED', 'BOOKMARK']);
    expect(seen.events[1].object.metadata.annotations).toEqual({ 'k8s.io/initial-events-end': 'true' });
    ctl.abort();
  });

  it('drops every watch on demand: the client sees a premature close', async () => {
    const a = await watch(c, '/api/v1/namespaces/default/pods', {});
    const b = await watch(c, '/apis/batch/v1/jobs', {});
    sim.dropWatches();
    await until(() => a.seen.ended && b.seen.ended, 'both streams ended');
    // cut mid-stream, unlike the clean end at timeoutSeconds
    expect((a.seen.done as any)?.code).toBe('ERR_STREAM_PREMATURE_CLOSE');
    expect((b.seen.done as any)?.code).toBe('ERR_STREAM_PREMATURE_CLOSE');
    // and new watches are served again
    const again = await watch(c, '/api/v1/namespaces/default/pods', {});
    expect(again.seen.ended).toBe(false);
    again.ctl.abort();
  });

  it('sends ADDED/DELETED when an object enters or leaves a label selector', async () => {
    const { seen, ctl } = await watch(c, '/api/v1/namespaces/default/configmaps', { labelSelector: 'tier=db' });
    await c.core.createNamespacedConfigMap({ namespace: 'default', body: cm('x', { tier: 'web' }) });
    await c.core.patchNamespacedConfigMap({ namespace: 'default', name: 'x', body: [{ op: 'replace', path: '/metadata/labels/tier', value: 'db' }] });
    await c.core.patchNamespacedConfigMap({ namespace: 'default', name: 'x', body: [{ op: 'replace', path: '/metadata/labels/tier', value: 'cache' }] });
    await until(() => seen.events.length === 2, 'two events');
    expect(seen.events.map((e) => e.type)).toEqual(['ADDED', 'DELETED']);
    ctl.abort();
  });

  it('filters lists by label and field selectors, and rejects unknown fields', async () => {
    await c.core.createNamespacedConfigMap({ namespace: 'default', body: cm('a', { app: 'uyuni', tier: 'db' }) });
    await c.core.createNamespacedConfigMap({ namespace: 'default', body: cm('b', { app: 'uyuni', tier: 'web' }) });
    await c.core.createNamespacedConfigMap({ namespace: 'default', body: cm('c', { app: 'other' }) });
    const names = async (q: { labelSelector?: string; fieldSelector?: string }) => (await c.core.listNamespacedConfigMap({ namespace: 'default', ...q })).items.map((i) => i.metadata!.name);
    expect(await names({ labelSelector: 'app=uyuni' })).toEqual(['a', 'b']);
    expect(await names({ labelSelector: 'app=uyuni,tier!=db' })).toEqual(['b']);
    expect(await names({ labelSelector: 'tier in (db,web)' })).toEqual(['a', 'b']);
    expect(await names({ labelSelector: '!tier' })).toEqual(['c']);
    expect(await names({ fieldSelector: 'metadata.name=c' })).toEqual(['c']);
    expect(await names({ fieldSelector: 'metadata.name!=c,metadata.namespace=default', labelSelector: 'tier' })).toEqual(['a', 'b']);
    const err = await apiError(c.core.listNamespacedConfigMap({ namespace: 'default', fieldSelector: 'data.v=a' }));
    expect(err.code).toBe(400);
    expect(err.body.reason).toBe('BadRequest');
  });

  it('selects pods by spec.nodeName and status.phase', async () => {
    sim.put({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'here', namespace: 'default' }, spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'i' }] }, status: { phase: 'Running' } });
    sim.put({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'there', namespace: 'default' }, spec: { nodeName: 'n2', containers: [{ name: 'c', image: 'i' }] }, status: { phase: 'Succeeded' } });
    const byNode = await c.core.listPodForAllNamespaces({ fieldSelector: 'spec.nodeName=n1' });
    expect(byNode.items.map((p) => p.metadata!.name)).toEqual(['here']);
    const byPhase = await c.core.listNamespacedPod({ namespace: 'default', fieldSelector: 'status.phase!=Running' });
    expect(byPhase.items.map((p) => p.metadata!.name)).toEqual(['there']);
  });

  it('pages a list with limit and continue; a compacted continue token gets 410', async () => {
    for (const n of ['a', 'b', 'c', 'd', 'e']) await c.core.createNamespacedConfigMap({ namespace: 'default', body: cm(n) });
    const seen: string[] = [];
    let token: string | undefined;
    let pages = 0;
    do {
      const page = await c.core.listNamespacedConfigMap({ namespace: 'default', limit: 2, _continue: token });
      seen.push(...page.items.map((i) => i.metadata!.name!));
      if (page.metadata!._continue) expect(page.metadata!.remainingItemCount).toBe(5 - seen.length);
      token = page.metadata!._continue;
      pages++;
    } while (token);
    expect(seen).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(pages).toBe(3);

    // later pages are consistent with the first: changes made meanwhile do not show
    const first2 = await c.core.listNamespacedConfigMap({ namespace: 'default', limit: 2 });
    await c.core.deleteNamespacedConfigMap({ namespace: 'default', name: 'd' });
    await c.core.createNamespacedConfigMap({ namespace: 'default', body: cm('cc') });
    await c.core.patchNamespacedConfigMap({ namespace: 'default', name: 'e', body: [{ op: 'replace', path: '/data/v', value: 'changed' }] });
    const rest = await c.core.listNamespacedConfigMap({ namespace: 'default', limit: 10, _continue: first2.metadata!._continue });
    expect(rest.items.map((i) => i.metadata!.name)).toEqual(['c', 'd', 'e']);
    expect(rest.items[2].data).toEqual({ v: 'e' });
    expect(rest.metadata!.resourceVersion).toBe(first2.metadata!.resourceVersion);
    await c.core.createNamespacedConfigMap({ namespace: 'default', body: cm('d') });

    const first = await c.core.listNamespacedConfigMap({ namespace: 'default', limit: 2 });
    await c.core.createNamespacedConfigMap({ namespace: 'default', body: cm('f') });
    sim.compact(); // the list's resourceVersion is now older than the oldest one kept
    const err = await apiError(c.core.listNamespacedConfigMap({ namespace: 'default', limit: 2, _continue: first.metadata!._continue }));
    expect(err.code).toBe(410);
    expect(err.body.reason).toBe('Expired');
  });

  it('injects 5xx faults and 429 with Retry-After, matched by method and path', async () => {
    sim.failNext(2, 503, 'GET /api/v1/namespaces/default/configmaps');
    const e1 = await apiError(c.core.listNamespacedConfigMap({ namespace: 'default' }));
    expect(e1.code).toBe(503);
    // a request that does not match is served
    await c.core.readNamespace({ name: 'default' });
    const e2 = await apiError(c.core.listNamespacedConfigMap({ namespace: 'default' }));
    expect(e2.code).toBe(503);
    await c.core.listNamespacedConfigMap({ namespace: 'default' });

    sim.throttleNext(1, 7);
    const t = await apiError(c.core.readNamespace({ name: 'default' }));
    expect(t.code).toBe(429);
    expect(t.headers['retry-after']).toBe('7');
    const raw = await fetch(`${sim.url}/version`);
    expect(raw.status).toBe(200);

    sim.failNext(1, 500, 'watch=true');
    const w = await watch(c, '/api/v1/namespaces/default/pods', {});
    await until(() => w.seen.ended, 'watch refused');
    expect((w.seen.done as any).statusCode).toBe(500);
    expect(sim.requests.filter((r) => r.status >= 500).map((r) => r.status)).toEqual([503, 503, 500]);
    expect(sim.requests.some((r) => r.status === 429)).toBe(true);
  });
});
