import { listNodePods, PodListError } from '../../src/agent/pods';
import { startPodsServer, PodsServer } from './harness/pods-server';

function pod(name: string, node: string, namespace = 'default'): Record<string, unknown> {
  return { metadata: { name, namespace }, spec: { nodeName: node, containers: [{ name: 'c', image: 'x:1', command: ['/bin/true'] }] } };
}

describe('listing the pods of a node (fail closed)', () => {
  let api: PodsServer;
  beforeEach(async () => {
    api = await startPodsServer([
      ...Array.from({ length: 7 }, (_, i) => pod(`p${i}`, 'localhost')),
      pod('elsewhere', 'node-2'),
    ]);
  });
  afterEach(() => api.close());

  it('reads every page, following continue tokens, with the spec.nodeName field selector', async () => {
    const pods = await listNodePods({ kubeconfig: api.kubeconfig, node: 'localhost', pageSize: 3 });
    expect(pods.map((p) => p.metadata?.name)).toEqual(['p0', 'p1', 'p2', 'p3', 'p4', 'p5', 'p6']);
    expect(api.requests).toHaveLength(3);
    for (const r of api.requests) {
      const q = new URL(r, 'http://x').searchParams;
      expect(q.get('fieldSelector')).toBe('spec.nodeName=localhost');
      expect(q.get('limit')).toBe('3');
    }
    expect(new URL(api.requests[0], 'http://x').searchParams.has('continue')).toBe(false);
    expect(new URL(api.requests[2], 'http://x').searchParams.get('continue')).toBeTruthy();
  });

  it('keeps only what the agent reads of each pod: no managedFields, labels, annotations or status it does not write', async () => {
    const spec = { nodeName: 'node-3', restartPolicy: 'Never', containers: [{ name: 'c', image: 'x:1', command: ['/bin/true'], env: [{ name: 'A', value: 'b' }] }] };
    const full = {
      metadata: {
        name: 'full', namespace: 'ns', uid: 'u-1', resourceVersion: '42', deletionTimestamp: '2026-01-01T00:00:00Z', deletionGracePeriodSeconds: 30,
        labels: { app: 'x' }, annotations: { 'kubectl.kubernetes.io/last-applied-configuration': 'x'.repeat(1000) },
        managedFields: [{ manager: 'kubectl', operation: 'Apply', fieldsV1: { 'f:spec': {} } }], ownerReferences: [{ kind: 'ReplicaSet', name: 'r', uid: 'o' }],
      },
      spec,
      status: { phase: 'Running', startTime: '2026-01-01T00:00:00Z', conditions: [{ type: 'Ready', status: 'True' }], qosClass: 'BestEffort', podIP: '10.0.0.1' },
    };
    await api.close();
    api = await startPodsServer([full]);
    const [kept] = await listNodePods({ kubeconfig: api.kubeconfig, node: 'node-3' });
    expect(kept).toEqual({
      metadata: { name: 'full', namespace: 'ns', uid: 'u-1', resourceVersion: '42', deletionTimestamp: '2026-01-01T00:00:00Z', deletionGracePeriodSeconds: 30 },
      spec,
      status: { phase: 'Running', startTime: '2026-01-01T00:00:00Z', conditions: [{ type: 'Ready', status: 'True' }], podIP: '10.0.0.1' },
    });
  });

  it('ignores pods of other nodes even when the server ignores the field selector', async () => {
    api.ignoreFieldSelector = true;
    const pods = await listNodePods({ kubeconfig: api.kubeconfig, node: 'node-2', pageSize: 4 });
    expect(pods.map((p) => p.metadata?.name)).toEqual(['elsewhere']);
    expect(api.requests).toHaveLength(2);
  });

  it.each([
    ['http-500', /HTTP 500: etcdserver: request timed out/],
    ['not-json', /not JSON/],
    ['not-a-pod-list', /not a PodList/],
    ['bad-item', /items\[\d+\] is not a pod/],
    ['cut-off', /complete|aborted|socket hang up/],
    ['hang', /within 500 ms/],
  ] as const)('rejects when page 2 fails with %s', async (kind, message) => {
    api.failure = { page: 2, kind };
    const listing = listNodePods({ kubeconfig: api.kubeconfig, node: 'localhost', pageSize: 3, timeoutMs: 500 });
    await expect(listing).rejects.toBeInstanceOf(PodListError);
    await expect(listing).rejects.toThrow(message);
    await expect(listing).rejects.toThrow(/page 2/);
  });

  it('takes the token of an exec credential plugin, through the full Kubernetes client', async () => {
    const fs = await import('fs');
    const pods = await listNodePods({ kubeconfig: api.execKubeconfig, node: 'localhost' });
    expect(pods).toHaveLength(7);
    expect(fs.readFileSync(api.execRuns, 'utf8')).toBe('run\n');
  });

  it('rejects when the server refuses the credentials', async () => {
    const fs = await import('fs');
    fs.writeFileSync(api.kubeconfig, fs.readFileSync(api.kubeconfig, 'utf8').replace(/token: .*/, 'token: wrong'));
    await expect(listNodePods({ kubeconfig: api.kubeconfig, node: 'localhost' })).rejects.toThrow(/HTTP 401: Unauthorized/);
  });

  it('rejects when nothing listens', async () => {
    const fs = await import('fs');
    const copy = require("path").join(require("os").tmpdir(), `kubeconfig-${process.pid}`);
    fs.writeFileSync(copy, fs.readFileSync(api.kubeconfig));
    await api.close();
    try {
      await expect(listNodePods({ kubeconfig: copy, node: 'localhost' })).rejects.toThrow(/page 1.*ECONNREFUSED/);
    } finally {
      fs.rmSync(copy, { force: true });
    }
  });
});
