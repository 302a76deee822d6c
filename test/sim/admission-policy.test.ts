import * as k8s from '@kubernetes/client-node';
import { Simulator, startSimulator } from './index';
import { apiError, clients, job, until } from './helpers';

const eventsOf = (sim: Simulator, ns: string, name: string) => sim.list('v1', 'Event', ns).filter((e) => e.involvedObject?.name === name);

describe('API simulator: Events, ResourceQuota, PodSecurity, webhooks, namespace termination', () => {
  let sim: Simulator;
  let c: ReturnType<typeof clients>;
  afterEach(() => sim.stop());

  it('a Job whose pods exceed a ResourceQuota gets FailedCreate Events with the API server\'s wording, counted on retries', async () => {
    sim = await startSimulator({ clockSpeed: 500 });
    c = clients(sim);
    await c.core.createNamespacedResourceQuota({ namespace: 'default', body: { metadata: { name: 'no-pods' }, spec: { hard: { pods: '0' } } } });
    await c.batch.createNamespacedJob({ namespace: 'default', body: job('quota') as any });
    const ev = await until(() => eventsOf(sim, 'default', 'quota').find((e) => e.reason === 'FailedCreate' && e.count >= 2), 'two FailedCreate tries');
    expect(ev).toMatchObject({ type: 'Warning', involvedObject: { kind: 'Job', apiVersion: 'batch/v1', name: 'quota', namespace: 'default' }, source: { component: 'job-controller' } });
    expect(ev.message).toMatch(/^Error creating: pods "quota-" is forbidden: exceeded quota: no-pods, requested: pods=1, used: pods=0, limited: pods=0$/);
    expect(Date.parse(ev.lastTimestamp)).toBeGreaterThanOrEqual(Date.parse(ev.firstTimestamp));
    expect(sim.list('v1', 'Pod', 'default')).toHaveLength(0);
    // read through the API with a field selector, as a client does
    const listed = await c.core.listNamespacedEvent({ namespace: 'default', fieldSelector: 'involvedObject.name=quota' });
    expect(listed.items.map((e: k8s.CoreV1Event) => e.reason)).toContain('FailedCreate');
    // a direct create is refused with the Status body
    const err = await apiError(c.core.createNamespacedPod({ namespace: 'default', body: { metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'x' }] } } }));
    expect(err.code).toBe(403);
    expect(err.body).toMatchObject({ kind: 'Status', reason: 'Forbidden', message: 'pods "p" is forbidden: exceeded quota: no-pods, requested: pods=1, used: pods=0, limited: pods=0' });
  });

  it('PodSecurity restricted refuses a root or privileged pod of a namespace labelled enforce=restricted', async () => {
    sim = await startSimulator();
    c = clients(sim);
    await c.core.createNamespace({ body: { metadata: { name: 'strict', labels: { 'pod-security.kubernetes.io/enforce': 'restricted' } } } });
    const err = await apiError(c.core.createNamespacedPod({ namespace: 'strict', body: { metadata: { name: 'root' }, spec: { containers: [{ name: 'c', image: 'x', securityContext: { privileged: true } }] } } }));
    expect(err.code).toBe(403);
    expect(err.body.reason).toBe('Forbidden');
    expect(err.body.message).toMatch(/^pods "root" is forbidden: violates PodSecurity "restricted:latest": privileged \(container "c" must not set securityContext.privileged=true\), runAsNonRoot != true/);
    await c.core.createNamespacedPod({ namespace: 'strict', body: { metadata: { name: 'ok' }, spec: { securityContext: { runAsNonRoot: true }, containers: [{ name: 'c', image: 'x' }] } } });
    // a ReplicaSet's refused pods: FailedCreate from the replicaset-controller
    sim.setDeployment('web', {});
    await c.apps.createNamespacedDeployment({ namespace: 'strict', body: { metadata: { name: 'web' }, spec: { selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image: 'x' }] } } } } });
    const ev = await until(() => sim.list('v1', 'Event', 'strict').find((e) => e.reason === 'FailedCreate' && e.involvedObject.kind === 'ReplicaSet'), 'FailedCreate of the ReplicaSet');
    expect(ev.message).toMatch(/^Error creating: pods "web-[a-z0-9]+-" is forbidden: violates PodSecurity "restricted:latest"/);
  });

  it('a webhook stand-in denies with its message, or fails with 500 naming the webhook', async () => {
    sim = await startSimulator({ webhooks: [{ name: 'validation.gatekeeper.sh', kinds: ['ConfigMap'], action: 'deny', message: '[no-cm] configmaps are not allowed' }] });
    c = clients(sim);
    const denied = await apiError(c.core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'x' } } }));
    expect(denied.code).toBe(403);
    expect(denied.body).toMatchObject({ reason: 'Forbidden', message: 'admission webhook "validation.gatekeeper.sh" denied the request: [no-cm] configmaps are not allowed' });
    sim.setWebhooks([{ name: 'pods.policy.example', kinds: ['Pod'], action: 'fail' }]);
    await c.core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'x' } } });
    await c.batch.createNamespacedJob({ namespace: 'default', body: job('hooked') as any });
    const ev = await until(() => eventsOf(sim, 'default', 'hooked').find((e) => e.reason === 'FailedCreate'), 'FailedCreate');
    expect(ev.message).toMatch(/^Error creating: Internal error occurred: failed calling webhook "pods.policy.example"/);
    const failed = await apiError(c.core.createNamespacedPod({ namespace: 'default', body: { metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'x' }] } } }));
    expect(failed.code).toBe(500);
    expect(failed.body).toMatchObject({ reason: 'InternalError' });
    expect(failed.body.message).toMatch(/failed calling webhook "pods.policy.example"/);
  });

  it('a crash-looping container gets BackOff Events from the kubelet', async () => {
    sim = await startSimulator({ clockSpeed: 1000, deployments: { crash: { outcome: 'crash-loop' } } });
    c = clients(sim);
    await c.apps.createNamespacedDeployment({ namespace: 'default', body: { metadata: { name: 'crash' }, spec: { selector: { matchLabels: { app: 'crash' } }, template: { metadata: { labels: { app: 'crash' } }, spec: { containers: [{ name: 'c', image: 'x' }] } } } } });
    const ev = await until(() => sim.list('v1', 'Event', 'default').find((e) => e.reason === 'BackOff'), 'BackOff');
    expect(ev).toMatchObject({ type: 'Warning', involvedObject: { kind: 'Pod' }, source: { component: 'kubelet' } });
  });

  it('a deleted namespace terminates: new objects get 403 NamespaceTerminating, an apply does not resurrect it, it goes once empty', async () => {
    sim = await startSimulator();
    c = clients(sim);
    await c.core.createNamespace({ body: { metadata: { name: 'doomed' } } });
    await c.core.createNamespacedConfigMap({ namespace: 'doomed', body: { metadata: { name: 'held', finalizers: ['example.com/hold'] } } });
    await c.core.deleteNamespace({ name: 'doomed' });
    const ns = sim.get('v1', 'Namespace', 'doomed');
    expect(ns.status.phase).toBe('Terminating');
    expect(ns.metadata.deletionTimestamp).toBeDefined();
    const refused = await apiError(c.core.createNamespacedConfigMap({ namespace: 'doomed', body: { metadata: { name: 'new' } } }));
    expect(refused.code).toBe(403);
    expect(refused.body).toMatchObject({
      reason: 'Forbidden', message: 'configmaps "new" is forbidden: unable to create new content in namespace doomed because it is being terminated',
      details: { causes: [{ reason: 'NamespaceTerminating', field: 'metadata.namespace' }] },
    });
    await c.objects.patch({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'doomed' } } as any, undefined, undefined, 'uyuni', true, k8s.PatchStrategy.ServerSideApply);
    const applied = sim.get('v1', 'Namespace', 'doomed');
    expect(applied.status.phase).toBe('Terminating');
    expect(applied.metadata.deletionTimestamp).toBe(ns.metadata.deletionTimestamp);
    const cm = sim.get('v1', 'ConfigMap', 'held', 'doomed');
    await c.core.replaceNamespacedConfigMap({ namespace: 'doomed', name: 'held', body: { ...cm, metadata: { ...cm.metadata, finalizers: [] } } });
    await until(() => !sim.get('v1', 'Namespace', 'doomed'), 'the namespace gone');
  });
});
