import * as k8s from '@kubernetes/client-node';
import { PassThrough } from 'node:stream';
import { Simulator, startSimulator } from './index';
import { apiError, clients, job, record, until } from './helpers';

const jobPods = (sim: Simulator, name: string) => sim.list('v1', 'Pod', 'default').filter((p) => p.metadata.labels?.['job-name'] === name);
const condTypes = (j: any) => (j?.status?.conditions ?? []).map((c: any) => c.type);

describe('API simulator: Jobs, pods and logs', () => {
  let sim: Simulator;
  let c: ReturnType<typeof clients>;
  beforeEach(async () => {
    sim = await startSimulator();
    c = clients(sim);
  });
  afterEach(() => sim.stop());

  it('defaults a Job: selector on controller-uid, template labels, backoffLimit 6, completions and parallelism 1', async () => {
    const spec = job('defaults');
    delete (spec.spec as any).backoffLimit;
    const j = await c.batch.createNamespacedJob({ namespace: 'default', body: spec as any });
    const uid = j.metadata!.uid!;
    expect(j.spec!.selector!.matchLabels).toEqual({ 'batch.kubernetes.io/controller-uid': uid });
    expect(j.spec!.template.metadata!.labels).toMatchObject({ 'controller-uid': uid, 'batch.kubernetes.io/controller-uid': uid, 'job-name': 'defaults', 'batch.kubernetes.io/job-name': 'defaults' });
    expect(j.spec).toMatchObject({ backoffLimit: 6, completions: 1, parallelism: 1 });
  });

  it('refuses a change to spec.template with 422 "field is immutable", also on dry run', async () => {
    await c.objects.patch(job('migrate') as any, undefined, undefined, 'uyuni', true, k8s.PatchStrategy.ServerSideApply);
    // the same apply again is fine: defaulted labels and selector stay
    await c.objects.patch(job('migrate') as any, undefined, undefined, 'uyuni', true, k8s.PatchStrategy.ServerSideApply);
    for (const dryRun of ['All', undefined]) {
      const err = await apiError(c.objects.patch(job('migrate', 'default', 'registry.example/tool:2') as any, undefined, dryRun, 'uyuni', true, k8s.PatchStrategy.ServerSideApply));
      expect(err.code).toBe(422);
      expect(err.body).toMatchObject({ kind: 'Status', reason: 'Invalid', details: { name: 'migrate', group: 'batch', kind: 'Job' } });
      expect(err.body.message).toMatch(/^Job\.batch "migrate" is invalid: spec\.template: Invalid value: .*: field is immutable$/);
      expect(err.body.details.causes).toEqual([expect.objectContaining({ reason: 'FieldValueInvalid', field: 'spec.template' })]);
    }
    const bad = await apiError(c.batch.createNamespacedJob({ namespace: 'default', body: { ...job('always'), spec: { template: { spec: { restartPolicy: 'Always', containers: [{ name: 'x', image: 'x' }] } } } } as any }));
    expect(bad.code).toBe(422);
    expect(bad.body.details.causes[0].field).toBe('spec.template.spec.restartPolicy');
  });

  it('runs a Job to Complete: pod Pending -> Running -> Succeeded, SuccessCriteriaMet before Complete', async () => {
    sim.setJob('setup', { durationMs: 1000, logs: ['one', 'two'] });
    const seen: string[] = [];
    const watch = await new k8s.Watch(c.kc).watch('/apis/batch/v1/namespaces/default/jobs', {}, (_t, o: any) => {
      const types = condTypes(o).join(',');
      if (seen[seen.length - 1] !== types) seen.push(types);
    }, () => {});
    const pods = await record(c.kc, '/api/v1/namespaces/default/pods');
    await c.batch.createNamespacedJob({ namespace: 'default', body: job('setup') as any });
    await until(() => jobPods(sim, 'setup').length === 1, 'pod created');
    const pod = jobPods(sim, 'setup')[0];
    expect(pod.metadata.name).toMatch(/^setup-[a-z0-9]{5}$/);
    expect(pod.metadata.labels).toMatchObject({ 'job-name': 'setup', 'batch.kubernetes.io/job-name': 'setup' });
    expect(pod.metadata.ownerReferences[0]).toMatchObject({ kind: 'Job', name: 'setup', controller: true });
    const done = await until(() => {
      const j = sim.get('batch/v1', 'Job', 'setup', 'default');
      return condTypes(j).includes('Complete') && j;
    }, 'Job Complete');
    const phases = new Set(pods.states.map((p) => p.status.phase));
    pods.stop();
    expect(phases).toEqual(new Set(['Pending', 'Running', 'Succeeded']));
    expect(condTypes(done)).toEqual(['SuccessCriteriaMet', 'Complete']);
    expect(done.status).toMatchObject({ succeeded: 1, ready: 0 });
    expect(done.status.completionTime).toBeTruthy();
    expect(done.status.active).toBeUndefined();
    const finished = sim.get('v1', 'Pod', pod.metadata.name, 'default');
    expect(finished.status.containerStatuses[0].state.terminated).toMatchObject({ exitCode: 0, reason: 'Completed' });
    expect(finished.spec.nodeName).toBeTruthy();
    // a watcher saw the interim condition on its own before Complete
    await until(() => seen.includes('SuccessCriteriaMet,Complete'), 'watch saw Complete');
    expect(seen).toContain('SuccessCriteriaMet');
    watch.abort();
    expect(sim.events.filter((e) => e.kind === 'Job' && e.name === 'setup').map((e) => e.what)).toEqual(['SuccessCriteriaMet', 'Complete']);
  });

  it('fails a Job with the exit code; FailureTarget comes before Failed', async () => {
    sim.setJob('broken', { outcome: 'fail', exitCode: 3, logs: ['about to fail'] });
    await c.batch.createNamespacedJob({ namespace: 'default', body: job('broken') as any });
    const j = await until(() => {
      const x = sim.get('batch/v1', 'Job', 'broken', 'default');
      return condTypes(x).includes('Failed') && x;
    }, 'Job Failed');
    expect(condTypes(j)).toEqual(['FailureTarget', 'Failed']);
    expect(j.status.conditions[1]).toMatchObject({ status: 'True', reason: 'BackoffLimitExceeded' });
    expect(j.status.failed).toBe(1);
    const pod = jobPods(sim, 'broken')[0];
    expect(pod.status.phase).toBe('Failed');
    expect(pod.status.containerStatuses[0].state.terminated).toMatchObject({ exitCode: 3, reason: 'Error' });
    const log = await c.core.readNamespacedPodLog({ name: pod.metadata.name, namespace: 'default', container: 'main' });
    expect(log).toBe('about to fail\n');
  });

  it('fails a Job that outlives activeDeadlineSeconds, killing its pod', async () => {
    sim.setJob('slow', { outcome: 'hang' });
    await c.batch.createNamespacedJob({ namespace: 'default', body: { ...job('slow'), spec: { ...job('slow').spec, activeDeadlineSeconds: 5 } } as any });
    const j = await until(() => {
      const x = sim.get('batch/v1', 'Job', 'slow', 'default');
      return condTypes(x).includes('Failed') && x;
    }, 'Job Failed');
    expect(condTypes(j)).toEqual(['FailureTarget', 'Failed']);
    expect(j.status.conditions[1].reason).toBe('DeadlineExceeded');
    await until(() => jobPods(sim, 'slow').length === 0, 'pod killed');
  });

  it('retries a failing pod up to backoffLimit', async () => {
    await sim.stop();
    sim = await startSimulator({ clockSpeed: 2000, jobs: { flaky: { outcome: 'fail', durationMs: 100 } } });
    c = clients(sim);
    await c.batch.createNamespacedJob({ namespace: 'default', body: { ...job('flaky'), spec: { ...job('flaky').spec, backoffLimit: 2 } } as any });
    await until(() => condTypes(sim.get('batch/v1', 'Job', 'flaky', 'default')).includes('Failed'), 'Job Failed', 20000);
    expect(jobPods(sim, 'flaky')).toHaveLength(3);
    expect(sim.get('batch/v1', 'Job', 'flaky', 'default').status.failed).toBe(3);
  });

  it('leaves a pod in ImagePullBackOff waiting and never fails the Job', async () => {
    sim.setJob('pull', { outcome: 'image-pull-backoff' });
    await c.batch.createNamespacedJob({ namespace: 'default', body: job('pull') as any });
    const pod = await until(() => {
      const p = jobPods(sim, 'pull')[0];
      return p?.status.containerStatuses?.[0]?.state.waiting?.reason === 'ImagePullBackOff' && p;
    }, 'ImagePullBackOff');
    expect(pod.status.phase).toBe('Pending');
    expect(pod.status.containerStatuses[0].state.waiting.message).toContain('registry.example/tool:1');
    expect(sim.events.some((e) => e.name === pod.metadata.name && e.what === 'ErrImagePull')).toBe(true);
    const j = sim.get('batch/v1', 'Job', 'pull', 'default');
    expect(condTypes(j)).toEqual([]);
    expect(j.status.active).toBe(1);
    const err = await apiError(c.core.readNamespacedPodLog({ name: pod.metadata.name, namespace: 'default', container: 'main' }));
    expect(err.code).toBe(400);
    expect(err.body.message).toBe(`container "main" in pod "${pod.metadata.name}" is waiting to start: trying and failing to pull image`);
  });

  it('reports CreateContainerConfigError and Unschedulable as Kubernetes does', async () => {
    sim.setJob('config', { outcome: 'create-container-config-error' });
    sim.setJob('nowhere', { outcome: 'unschedulable' });
    await c.batch.createNamespacedJob({ namespace: 'default', body: job('config') as any });
    await c.batch.createNamespacedJob({ namespace: 'default', body: job('nowhere') as any });
    await until(() => jobPods(sim, 'config')[0]?.status.containerStatuses?.[0]?.state.waiting?.reason === 'CreateContainerConfigError', 'config error');
    const p = await until(() => {
      const x = jobPods(sim, 'nowhere')[0];
      return x?.status.conditions?.[0]?.reason === 'Unschedulable' && x;
    }, 'Unschedulable');
    expect(p.status.conditions[0]).toMatchObject({ type: 'PodScheduled', status: 'False' });
    expect(p.spec.nodeName).toBeUndefined();
  });

  it('leaves a pod whose claim does not exist Unschedulable, as kube-scheduler v1.34.4 does, and schedules it once the claim is made', async () => {
    const body = job('claimed') as any;
    body.spec.template.spec.volumes = [{ name: 'data', persistentVolumeClaim: { claimName: 'later' } }];
    await c.batch.createNamespacedJob({ namespace: 'default', body });
    const p = await until(() => {
      const x = jobPods(sim, 'claimed')[0];
      return x?.status.conditions?.[0]?.reason === 'Unschedulable' && x;
    }, 'Unschedulable');
    // the condition's message as the real scheduler wrote it (test/cluster: a pod of a missing claim)
    expect(p.status.conditions[0]).toMatchObject({ type: 'PodScheduled', status: 'False', message: '0/1 nodes are available: persistentvolumeclaim "later" not found. not found' });
    expect(p.spec.nodeName).toBeUndefined();
    sim.put({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'later', namespace: 'default' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } });
    await until(() => sim.get('batch/v1', 'Job', 'claimed', 'default')?.status?.succeeded === 1, 'the Job complete once its claim exists');
  });

  it('streams logs with follow as the container prints them, and ends when it terminates', async () => {
    await sim.stop();
    sim = await startSimulator({ clockSpeed: 10 }); // 5 virtual s = 500 ms real
    c = clients(sim);
    const lines = Array.from({ length: 10 }, (_, i) => `line ${i}`);
    sim.setJob('talk', { durationMs: 5000, logs: lines });
    await c.batch.createNamespacedJob({ namespace: 'default', body: job('talk') as any });
    const pod = await until(() => {
      const x = jobPods(sim, 'talk')[0];
      return x?.status.phase === 'Running' && x;
    }, 'Running');
    const out = new PassThrough();
    let text = '';
    const arrivals: number[] = [];
    out.on('data', (b) => {
      text += b.toString();
      arrivals.push(Date.now());
    });
    const ended = new Promise((r) => out.on('end', r));
    await new k8s.Log(c.kc).log('default', pod.metadata.name, 'main', out, { follow: true });
    await ended;
    expect(text).toBe(lines.map((l) => l + '\n').join(''));
    expect(arrivals.length).toBeGreaterThan(3); // streamed, not one chunk at the end
    expect(sim.get('v1', 'Pod', pod.metadata.name, 'default').status.phase).toBe('Succeeded');

    const tail = await c.core.readNamespacedPodLog({ name: pod.metadata.name, namespace: 'default', tailLines: 2 });
    expect(tail).toBe('line 8\nline 9\n');
  });

  it('needs a container name for the logs of a pod with several containers', async () => {
    sim.setJob('pair', { outcome: 'hang' });
    const body = job('pair');
    (body.spec.template.spec.containers as any[]).push({ name: 'sidecar', image: 'busybox' });
    await c.batch.createNamespacedJob({ namespace: 'default', body: body as any });
    const pod = await until(() => jobPods(sim, 'pair').find((p) => p.status.phase === 'Running'), 'Running');
    const none = await apiError(c.core.readNamespacedPodLog({ name: pod.metadata.name, namespace: 'default' }));
    expect(none.code).toBe(400);
    expect(none.body.message).toBe(`a container name must be specified for pod ${pod.metadata.name}, choose one of: [main sidecar]`);
    const wrong = await apiError(c.core.readNamespacedPodLog({ name: pod.metadata.name, namespace: 'default', container: 'nope' }));
    expect(wrong.body.message).toBe(`container nope is not valid for pod ${pod.metadata.name}`);
    expect(await c.core.readNamespacedPodLog({ name: pod.metadata.name, namespace: 'default', container: 'sidecar' })).toBe('');
  });

  it('deletes pods with a Job only for Background/Foreground propagation; none orphans them', async () => {
    sim.setJob('keep', { outcome: 'hang' });
    sim.setJob('drop', { outcome: 'hang' });
    for (const n of ['keep', 'drop']) await c.batch.createNamespacedJob({ namespace: 'default', body: job(n) as any });
    await until(() => jobPods(sim, 'keep')[0]?.status.phase === 'Running' && jobPods(sim, 'drop')[0]?.status.phase === 'Running', 'pods running');
    await c.batch.deleteNamespacedJob({ name: 'keep', namespace: 'default' });
    await c.batch.deleteNamespacedJob({ name: 'drop', namespace: 'default', propagationPolicy: 'Background' });
    expect(sim.get('batch/v1', 'Job', 'drop', 'default')).toBeUndefined();
    await until(() => jobPods(sim, 'drop').length === 0, 'dependent pods deleted');
    const orphan = jobPods(sim, 'keep');
    expect(orphan).toHaveLength(1);
    expect(orphan[0].metadata.ownerReferences).toBeUndefined();
    // a recreated Job with the same name starts from scratch
    sim.setJob('drop', {});
    await c.batch.createNamespacedJob({ namespace: 'default', body: job('drop') as any });
    await until(() => condTypes(sim.get('batch/v1', 'Job', 'drop', 'default')).includes('Complete'), 'recreated Job Complete');
  });

  it('keeps a Foreground-deleted Job until its pods are gone', async () => {
    sim.setJob('fg', { outcome: 'hang' });
    await c.batch.createNamespacedJob({ namespace: 'default', body: job('fg') as any });
    await until(() => jobPods(sim, 'fg')[0]?.status.phase === 'Running', 'running');
    await c.batch.deleteNamespacedJob({ name: 'fg', namespace: 'default', propagationPolicy: 'Foreground' });
    const j = sim.get('batch/v1', 'Job', 'fg', 'default');
    expect(j.metadata.deletionTimestamp).toBeTruthy();
    expect(j.metadata.finalizers).toContain('foregroundDeletion');
    await until(() => !sim.get('batch/v1', 'Job', 'fg', 'default'), 'Job gone');
    expect(jobPods(sim, 'fg')).toEqual([]);
  });
});
