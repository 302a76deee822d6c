import * as k8s from '@kubernetes/client-node';
import { Simulator, SimOptions, startSimulator } from './index';
import { clients, until } from './helpers';

const apply = (c: ReturnType<typeof clients>, o: any) => c.objects.patch(o, undefined, undefined, 'uyuni', true, k8s.PatchStrategy.ServerSideApply);
const cond = (o: any, type: string) => (o?.status?.conditions ?? []).find((x: any) => x.type === type);

/** Like the Uyuni server: a startup probe of up to 10 h, then a readiness probe. */
const server = (image = 'registry.opensuse.org/uyuni/server:latest') => ({
  apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'uyuni', namespace: 'default' },
  spec: {
    replicas: 1,
    selector: { matchLabels: { app: 'uyuni' } },
    template: {
      metadata: { labels: { app: 'uyuni' } },
      spec: {
        containers: [{
          name: 'uyuni', image,
          startupProbe: { exec: { command: ['/usr/bin/startup-check.sh'] }, periodSeconds: 10, failureThreshold: 3600 },
          readinessProbe: { httpGet: { path: '/rhn/manager/api/api/getVersion', port: 80 }, initialDelaySeconds: 120, periodSeconds: 10 },
        }],
      },
    },
  },
});

describe('API simulator: a scripted Deployment gets a ReplicaSet and pods', () => {
  let sim: Simulator;
  let c: ReturnType<typeof clients>;
  const start = async (opts: SimOptions) => {
    sim = await startSimulator(opts);
    c = clients(sim);
  };
  afterEach(() => sim.stop());
  const pods = () => sim.list('v1', 'Pod', 'default').filter((p) => p.metadata.name.startsWith('uyuni-'));
  const deployment = () => sim.get('apps/v1', 'Deployment', 'uyuni', 'default');

  it('keeps a held pod Running, not started and not ready, until its startup probe passes; then it rolls out', async () => {
    await start({ deployments: { uyuni: { startupMs: 'hold' } } });
    await apply(c, server());
    const pod = await until(() => pods().find((p) => p.status?.phase === 'Running'), 'the pod Running');
    const rs = sim.list('apps/v1', 'ReplicaSet', 'default')[0];
    expect(rs.metadata.name).toBe(`uyuni-${rs.metadata.labels['pod-template-hash']}`);
    expect(rs.metadata.annotations['deployment.kubernetes.io/revision']).toBe('1');
    expect(rs.metadata.ownerReferences[0]).toMatchObject({ kind: 'Deployment', name: 'uyuni', controller: true });
    expect(pod.metadata.ownerReferences[0]).toMatchObject({ kind: 'ReplicaSet', name: rs.metadata.name, controller: true });
    expect(pod.metadata.labels['pod-template-hash']).toBe(rs.metadata.labels['pod-template-hash']);
    expect(pod.status.containerStatuses[0]).toMatchObject({ name: 'uyuni', started: false, ready: false, restartCount: 0, state: { running: {} } });
    expect(cond(pod, 'Ready')).toMatchObject({ status: 'False', reason: 'ContainersNotReady' });

    await new Promise((r) => setTimeout(r, 200)); // 10 virtual seconds: still held
    expect(pods()[0].status.containerStatuses[0].started).toBe(false);
    const d = deployment();
    expect(d.status).toMatchObject({ observedGeneration: 1, replicas: 1, updatedReplicas: 1, unavailableReplicas: 1 });
    expect(d.status.readyReplicas).toBeUndefined();
    expect(d.metadata.annotations['deployment.kubernetes.io/revision']).toBe('1');

    sim.passStartupProbe('uyuni');
    await until(() => pods()[0].status.containerStatuses[0].started, 'started');
    expect(pods()[0].status.containerStatuses[0].ready).toBe(false); // the readiness probe's first period
    const done = await until(() => cond(deployment(), 'Progressing')?.reason === 'NewReplicaSetAvailable' && deployment(), 'rolled out');
    expect(done.status).toMatchObject({ replicas: 1, updatedReplicas: 1, readyReplicas: 1, availableReplicas: 1 });
    expect(cond(done, 'Available').status).toBe('True');
    expect(sim.events.map((e) => e.what)).toEqual(expect.arrayContaining(['uyuni started', 'uyuni ready', 'Available']));
  });

  it('reports ProgressDeadlineExceeded after progressDeadlineSeconds without progress, and NewReplicaSetAvailable once it rolls out', async () => {
    await start({ deployments: { uyuni: { startupMs: 'hold' } }, clockSpeed: 2000 }); // 600 s in 0.3 s
    await apply(c, server());
    const exceeded = await until(() => cond(deployment(), 'Progressing')?.reason === 'ProgressDeadlineExceeded' && deployment(), 'the deadline');
    expect(cond(exceeded, 'Progressing')).toMatchObject({ status: 'False', message: expect.stringContaining('has timed out progressing') });
    expect(pods()[0].status).toMatchObject({ phase: 'Running', containerStatuses: [{ started: false, ready: false }] });
    sim.passStartupProbe('uyuni');
    await until(() => cond(deployment(), 'Progressing')?.reason === 'NewReplicaSetAvailable', 'rolled out after the deadline');
  });

  it('crash-loops a container: restarts with a doubling back-off, lastState and the previous run\'s log', async () => {
    await start({ deployments: { uyuni: { outcome: 'crash-loop', exitCode: 2, logs: ['FATAL: could not connect to the database'] } } });
    await apply(c, server());
    const looping = await until(() => pods().find((p) => (p.status?.containerStatuses?.[0]?.restartCount ?? 0) >= 2 && p.status.containerStatuses[0].state.waiting), 'two restarts');
    const cs = looping.status.containerStatuses[0];
    expect(looping.status.phase).toBe('Running');
    expect(cs.state.waiting).toMatchObject({ reason: 'CrashLoopBackOff', message: expect.stringMatching(/^back-off 40s restarting failed container=uyuni pod=uyuni-/) });
    expect(cs.lastState.terminated).toMatchObject({ exitCode: 2, reason: 'Error' });
    expect(cs).toMatchObject({ started: false, ready: false });
    const log = await c.core.readNamespacedPodLog({ name: looping.metadata.name, namespace: 'default', container: 'uyuni', previous: true });
    expect(log).toBe('FATAL: could not connect to the database\n');
    expect(deployment().status.readyReplicas).toBeUndefined();
  });

  it('kills a container whose startup probe keeps failing (exit 137) after initialDelaySeconds + periodSeconds × failureThreshold', async () => {
    await start({ deployments: { uyuni: { outcome: 'startup-probe-fails' } } });
    const d = server();
    d.spec.template.spec.containers[0].startupProbe = { exec: { command: ['/usr/bin/startup-check.sh'] }, periodSeconds: 1, failureThreshold: 3 };
    await apply(c, d);
    const killed = await until(() => pods().find((p) => p.status?.containerStatuses?.[0]?.lastState?.terminated), 'the kill');
    expect(killed.status.containerStatuses[0].lastState.terminated).toMatchObject({ exitCode: 137 });
    expect(killed.status.containerStatuses[0].state.waiting.reason).toBe('CrashLoopBackOff');
  });

  it('rolls a new template out as a new ReplicaSet revision; the old one goes to 0 and its pods away', async () => {
    await start({ deployments: { uyuni: {} } });
    await apply(c, server());
    await until(() => cond(deployment(), 'Progressing')?.reason === 'NewReplicaSetAvailable', 'revision 1');
    const first = pods()[0].metadata.name;
    await apply(c, server('registry.opensuse.org/uyuni/server:2025.10'));
    await until(() => deployment().metadata.annotations['deployment.kubernetes.io/revision'] === '2'
      && cond(deployment(), 'Progressing')?.reason === 'NewReplicaSetAvailable' && !sim.get('v1', 'Pod', first, 'default'), 'revision 2');
    const sets = sim.list('apps/v1', 'ReplicaSet', 'default');
    expect(sets.map((x) => [x.metadata.annotations['deployment.kubernetes.io/revision'], x.spec.replicas]).sort()).toEqual([['1', 0], ['2', 1]]);
    expect(pods()).toHaveLength(1);
    expect(deployment().status).toMatchObject({ observedGeneration: 2, replicas: 1, updatedReplicas: 1, readyReplicas: 1 });

    await c.apps.deleteNamespacedDeployment({ name: 'uyuni', namespace: 'default', propagationPolicy: 'Background' });
    await until(() => sim.list('apps/v1', 'ReplicaSet', 'default').length === 0 && pods().length === 0, 'ReplicaSets and pods gone');
  });

  it('leaves Deployments without a script as before: a made-up status, no ReplicaSet, no pods', async () => {
    await start({ deployments: { other: {} } });
    await apply(c, server());
    await until(() => cond(deployment(), 'Available')?.status === 'True', 'Available');
    expect(sim.list('apps/v1', 'ReplicaSet', 'default')).toEqual([]);
    expect(pods()).toEqual([]);
  });
});
