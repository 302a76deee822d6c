/**
 * The control plane itself (test/cluster/plane): what the other cluster suites rely on, shown with
 * the plane's kubectl against kube-apiserver — the real Job, Deployment, namespace and PV
 * controllers with the fake kubelet under them.
 */
import { plane, until } from './helpers';

const p = plane();
const json = async (args: string[]) => {
  const r = await p.kubectl([...args, '-o', 'json']);
  if (r.code) throw new Error(r.err);
  return JSON.parse(r.out);
};

describe('the real control plane', () => {
  const ns = p.namespace('plane');

  beforeAll(async () => {
    expect((await p.kubectl(['create', 'namespace', ns])).code).toBe(0);
  });

  afterAll(async () => {
    await p.kubectl(['delete', 'namespace', ns, '--wait=false']);
  });

  it('serves the pinned version, and every component runs', async () => {
    const v = await p.kubectl(['version', '-o', 'json']);
    const version = JSON.parse(v.out);
    expect(version.serverVersion.gitVersion).toBe(p.state.version);
    expect(version.serverVersion.gitVersion).toMatch(/^v1\.34\.\d+$/);
    expect(version.clientVersion.gitVersion).toBe(version.serverVersion.gitVersion);
  });

  it('runs a Job to Complete through the Job controller, and its logs come through pods/log', async () => {
    p.scenario({ jobs: { hello: { logs: ['hello from the fake kubelet', 'pg_version=16'], durationMs: 200 } } }, ns);
    const job = { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'hello', namespace: ns }, spec: { backoffLimit: 0, template: { spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'busybox:1.36', command: ['true'] }] } } } };
    expect((await p.kubectl(['apply', '-f', '-'], JSON.stringify(job))).code).toBe(0);
    const done = await until('Job hello Complete', async () => {
      const j = await json(['-n', ns, 'get', 'job', 'hello']);
      return j.status?.conditions?.find((c: { type: string; status: string }) => c.type === 'Complete' && c.status === 'True') ? j : undefined;
    });
    // The real controller sets SuccessCriteriaMet before Complete, and the defaults the simulator copies.
    expect(done.status.conditions.map((c: { type: string }) => c.type)).toEqual(['SuccessCriteriaMet', 'Complete']);
    expect(done.spec.selector.matchLabels['batch.kubernetes.io/controller-uid']).toBe(done.metadata.uid);
    const logs = await p.kubectl(['-n', ns, 'logs', 'job/hello']);
    expect(logs.out).toBe('hello from the fake kubelet\npg_version=16\n');
  });

  it('fails a Job whose pod exits non-zero, with the exit code in the pod', async () => {
    p.scenario({ jobs: { broken: { outcome: 'fail', exitCode: 3, logs: ['ERROR: boom'] } } }, ns);
    const job = { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'broken', namespace: ns }, spec: { backoffLimit: 0, template: { spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'busybox:1.36' }] } } } };
    await p.kubectl(['apply', '-f', '-'], JSON.stringify(job));
    const failed = await until('Job broken Failed', async () => {
      const j = await json(['-n', ns, 'get', 'job', 'broken']);
      return j.status?.conditions?.find((c: { type: string; status: string }) => c.type === 'Failed' && c.status === 'True');
    });
    expect(failed.reason).toBe('BackoffLimitExceeded');
    const pods = await json(['-n', ns, 'get', 'pods', '-l', 'job-name=broken']);
    expect(pods.items[0].status.containerStatuses[0].state.terminated.exitCode).toBe(3);
  });

  it('rolls a Deployment out, with a claim the fake provisioner binds once its pod is scheduled', async () => {
    const pvc = { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'data', namespace: ns }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } };
    const deploy = {
      apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: ns },
      spec: {
        replicas: 2, selector: { matchLabels: { app: 'web' } },
        template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image: 'nginx:1', volumeMounts: [{ name: 'd', mountPath: '/d' }] }], volumes: [{ name: 'd', persistentVolumeClaim: { claimName: 'data' } }] } },
      },
    };
    expect((await p.kubectl(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [pvc, deploy] }))).code).toBe(0);
    const rollout = await p.kubectl(['-n', ns, 'rollout', 'status', 'deployment/web', '--timeout=90s']);
    expect(rollout.out).toContain('successfully rolled out');
    const claim = await json(['-n', ns, 'get', 'pvc', 'data']);
    expect(claim.status.phase).toBe('Bound');
    expect(claim.spec.storageClassName).toBe('standard');
  });

  it('leaves a Job\'s pod of a claim that does not exist Unschedulable, and schedules it once the claim is made (the simulator models this: test/sim/jobs.test.ts)', async () => {
    p.scenario({ jobs: { claimed: { logs: ['done'] } } }, ns);
    const job = { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'claimed', namespace: ns }, spec: { backoffLimit: 0, template: { spec: {
      restartPolicy: 'Never', containers: [{ name: 'main', image: 'busybox:1.36' }], volumes: [{ name: 'd', persistentVolumeClaim: { claimName: 'later' } }] } } } };
    expect((await p.kubectl(['apply', '-f', '-'], JSON.stringify(job))).code).toBe(0);
    const pending = await until('the pod Unschedulable', async () => {
      const pods = await json(['-n', ns, 'get', 'pods', '-l', 'job-name=claimed']);
      return pods.items[0]?.status?.conditions?.find((c: { type: string; reason?: string }) => c.type === 'PodScheduled' && c.reason === 'Unschedulable');
    });
    expect(pending.message).toBe('0/1 nodes are available: persistentvolumeclaim "later" not found. not found');
    const pvc = { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'later', namespace: ns }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } };
    expect((await p.kubectl(['apply', '-f', '-'], JSON.stringify(pvc))).code).toBe(0);
    await until('Job claimed complete', async () => (await json(['-n', ns, 'get', 'job', 'claimed'])).status?.succeeded === 1);
  });

  it('deletes a namespace with everything in it (namespace and garbage collector controllers, the kubelet confirming pod deletions)', async () => {
    const gone = p.namespace('plane-gone');
    await p.kubectl(['create', 'namespace', gone]);
    await until('ServiceAccount default', async () => (await p.kubectl(['-n', gone, 'get', 'sa', 'default'])).code === 0);
    const deploy = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'x', namespace: gone }, spec: { selector: { matchLabels: { a: 'x' } }, template: { metadata: { labels: { a: 'x' } }, spec: { containers: [{ name: 'x', image: 'x' }] } } } };
    await p.kubectl(['apply', '-f', '-'], JSON.stringify(deploy));
    await p.kubectl(['-n', gone, 'rollout', 'status', 'deployment/x', '--timeout=60s']);
    const del = await p.kubectl(['delete', 'namespace', gone, '--timeout=90s']);
    expect(del.code).toBe(0);
    expect((await p.kubectl(['get', 'namespace', gone])).err).toContain('NotFound');
  });
});
