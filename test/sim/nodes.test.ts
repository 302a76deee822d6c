// What a node agent (a kubelet outside the simulator) needs: Node registration with status,
// Leases in kube-node-lease, pods/status merge patches, pods of its node left to it, and the
// grace-period-0 delete that ends a terminating pod.
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { startSimulator, Simulator } from './index';
import { clients, kubectl, until } from './helpers';

const NODE = 'agent-node';

const pod = (name: string, nodeName = NODE) => ({
  apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default' },
  spec: { nodeName, terminationGracePeriodSeconds: 30, containers: [{ name: 'c', image: 'svc:1', command: ['start.sh'] }] },
});

async function call(sim: Simulator, method: string, p: string, body?: unknown, contentType = 'application/json'): Promise<{ status: number; body: any }> {
  const res = await fetch(`${sim.url}${p}`, { method, headers: body ? { 'Content-Type': contentType } : {}, body: body ? JSON.stringify(body) : undefined });
  return { status: res.status, body: await res.json() };
}

describe('simulator: what a node agent uses', () => {
  let sim: Simulator;
  let cache: string;
  beforeEach(async () => {
    sim = await startSimulator({ externalNodes: [NODE] });
    cache = fs.mkdtempSync(path.join(os.tmpdir(), 'sim-nodes-kubectl-'));
  });
  afterEach(async () => {
    await sim.stop();
    fs.rmSync(cache, { recursive: true, force: true });
  });

  it('serves coordination.k8s.io/v1 Leases: create, merge-patch renewTime, discovery', async () => {
    const lease = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: NODE, namespace: 'kube-node-lease' }, spec: { holderIdentity: NODE, leaseDurationSeconds: 40, renewTime: '2026-01-01T00:00:00.000000Z' } };
    expect((await call(sim, 'POST', '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases', lease)).status).toBe(201);
    const renewed = await call(sim, 'PATCH', `/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/${NODE}`, { spec: { renewTime: '2026-01-01T00:00:10.000000Z' } }, 'application/merge-patch+json');
    expect(renewed.body.spec).toEqual({ holderIdentity: NODE, leaseDurationSeconds: 40, renewTime: '2026-01-01T00:00:10.000000Z' });
    const got = await kubectl(sim, cache, ['get', 'lease', '-n', 'kube-node-lease', NODE, '-o', 'jsonpath={.spec.holderIdentity}']);
    expect(got.stdout).toBe(NODE);
  });

  it('registers a Node and merge-patches its status subresource', async () => {
    const node = { apiVersion: 'v1', kind: 'Node', metadata: { name: NODE, labels: { 'kubernetes.io/arch': 'stackable-linux' } }, spec: { taints: [{ key: 'kubernetes.io/arch', value: 'stackable-linux', effect: 'NoSchedule' }] } };
    expect((await call(sim, 'POST', '/api/v1/nodes', node)).status).toBe(201);
    const patched = await call(sim, 'PATCH', `/api/v1/nodes/${NODE}/status`, { status: { conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady' }] } }, 'application/merge-patch+json');
    expect(patched.status).toBe(200);
    expect(sim.get('v1', 'Node', NODE).status.conditions[0].reason).toBe('KubeletReady');
    expect(sim.get('v1', 'Node', NODE).spec.taints).toHaveLength(1);
  });

  it('leaves pods of an external node to it: not run, a pods/status merge patch is what shows', async () => {
    await clients(sim).core.createNamespacedPod({ namespace: 'default', body: pod('agent-pod') as any });
    await new Promise((r) => setTimeout(r, 100)); // 5 virtual s: the simulated kubelet would have started it
    expect(sim.get('v1', 'Pod', 'agent-pod', 'default').status.phase).toBe('Pending');
    const patch = { status: { phase: 'Running', hostIP: '10.1.1.1', containerStatuses: [{ name: 'c', ready: true, restartCount: 0, state: { running: { startedAt: '2026-01-01T00:00:00Z' } } }] } };
    expect((await call(sim, 'PATCH', '/api/v1/namespaces/default/pods/agent-pod/status', patch, 'application/merge-patch+json')).status).toBe(200);
    const p = sim.get('v1', 'Pod', 'agent-pod', 'default');
    expect(p.status).toMatchObject(patch.status);
    expect(p.spec.containers[0].command).toEqual(['start.sh']);
    // A condition sent without lastProbeTime comes back with `lastProbeTime: null`, as kube-apiserver v1.34 answers it.
    const ready = { type: 'Ready', status: 'True', lastTransitionTime: '2026-01-01T00:00:00Z' };
    const withCondition = await call(sim, 'PATCH', '/api/v1/namespaces/default/pods/agent-pod/status', { status: { conditions: [ready] } }, 'application/merge-patch+json');
    expect(withCondition.body.status.conditions).toEqual([{ ...ready, lastProbeTime: null }]);
  });

  it('keeps a gracefully deleted pod of an external node terminating until it is deleted with grace period 0', async () => {
    const core = clients(sim).core;
    await core.createNamespacedPod({ namespace: 'default', body: pod('agent-pod') as any });
    await core.createNamespacedPod({ namespace: 'default', body: pod('sim-pod', 'sim-node-1') as any });
    const deleting = kubectl(sim, cache, ['delete', 'pod', 'agent-pod', '--timeout=20s']);
    await until(() => sim.get('v1', 'Pod', 'agent-pod', 'default')?.metadata.deletionTimestamp, 'deletionTimestamp');
    await new Promise((r) => setTimeout(r, 200)); // 10 virtual s, longer than the simulated kubelet's kill
    expect(sim.get('v1', 'Pod', 'agent-pod', 'default').metadata.deletionGracePeriodSeconds).toBe(30);
    // The simulated kubelet still runs the pods of its own node.
    await core.deleteNamespacedPod({ namespace: 'default', name: 'sim-pod' });
    await until(() => !sim.get('v1', 'Pod', 'sim-pod', 'default'), 'sim-pod gone');

    const gone = await call(sim, 'DELETE', '/api/v1/namespaces/default/pods/agent-pod', { apiVersion: 'v1', kind: 'DeleteOptions', gracePeriodSeconds: 0 });
    expect(gone.status).toBe(200);
    expect(sim.get('v1', 'Pod', 'agent-pod', 'default')).toBeUndefined();
    const r = await deleting;
    expect(r.stdout.trim()).toBe('pod "agent-pod" deleted');
    expect(r.code).toBe(0);
  });

  it('schedules a pod that selects and tolerates the agent\'s node there only while its allocatable pods have room (as kube-scheduler v1.34)', async () => {
    const core = clients(sim).core;
    const taint = { key: 'kubernetes.io/arch', value: 'stackable-linux' };
    await call(sim, 'POST', '/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: NODE, labels: { 'kubernetes.io/arch': 'stackable-linux' } }, spec: { taints: [{ ...taint, effect: 'NoSchedule' }, { ...taint, effect: 'NoExecute' }] } });
    const selecting = (name: string) => ({
      apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default' },
      spec: { nodeSelector: { 'kubernetes.io/arch': 'stackable-linux' }, tolerations: [{ ...taint, operator: 'Equal' }], containers: [{ name: 'c', image: 'svc:1', command: ['start.sh'] }] },
    });
    const scheduled = (name: string) => sim.get('v1', 'Pod', name, 'default')?.status?.conditions?.find((c: any) => c.type === 'PodScheduled');
    // A Node without status.allocatable takes no pod, and sim-node-1 does not match the selector.
    await core.createNamespacedPod({ namespace: 'default', body: selecting('one') as any });
    const refused = await until(() => scheduled('one'), 'PodScheduled');
    expect(refused).toMatchObject({ status: 'False', reason: 'Unschedulable' });
    expect(refused.message).toMatch(/^0\/2 nodes are available: 1 Too many pods, 1 node\(s\) didn't match Pod's node affinity\/selector\./);
    // Room for one pod: the waiting pod is placed when the node changes; a second one is not.
    await call(sim, 'PATCH', `/api/v1/nodes/${NODE}/status`, { status: { allocatable: { pods: '1' }, capacity: { pods: '1' } } }, 'application/merge-patch+json');
    await until(() => sim.get('v1', 'Pod', 'one', 'default').spec.nodeName === NODE, 'one on the agent node');
    expect(scheduled('one').status).toBe('True');
    await core.createNamespacedPod({ namespace: 'default', body: selecting('two') as any });
    expect(await until(() => scheduled('two'), 'two PodScheduled')).toMatchObject({ status: 'False', message: expect.stringMatching(/1 Too many pods/) });
    // Without the toleration the taint keeps it off.
    const plain = selecting('three');
    delete (plain.spec as any).tolerations;
    await core.createNamespacedPod({ namespace: 'default', body: plain as any });
    expect((await until(() => scheduled('three'), 'three PodScheduled')).message).toMatch(/1 node\(s\) had untolerated taint \{kubernetes.io\/arch: stackable-linux\}/);
  });

  it('deletes a pod bound to the agent\'s node that does not tolerate its NoExecute taint (kube-controller-manager\'s taint eviction)', async () => {
    const core = clients(sim).core;
    const taint = { key: 'kubernetes.io/arch', value: 'stackable-linux' };
    // Bound before the node has the taint: evicted once it has.
    await core.createNamespacedPod({ namespace: 'default', body: pod('early') as any });
    await core.createNamespacedPod({ namespace: 'default', body: { ...pod('tolerating'), spec: { ...pod('tolerating').spec, tolerations: [{ ...taint, operator: 'Equal' }] } } as any });
    await call(sim, 'POST', '/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: NODE }, spec: { taints: [{ ...taint, effect: 'NoSchedule' }, { ...taint, effect: 'NoExecute' }] } });
    await until(() => sim.get('v1', 'Pod', 'early', 'default').metadata.deletionTimestamp, 'early evicted');
    await core.createNamespacedPod({ namespace: 'default', body: pod('late') as any });
    await until(() => sim.get('v1', 'Pod', 'late', 'default').metadata.deletionTimestamp, 'late evicted');
    expect(sim.get('v1', 'Pod', 'late', 'default').metadata.deletionGracePeriodSeconds).toBe(30);
    expect(sim.get('v1', 'Pod', 'tolerating', 'default').metadata.deletionTimestamp).toBeUndefined();
  });
});
