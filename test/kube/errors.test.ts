/**
 * One ApiError for the runtime and the agent (src/kube/errors.ts): the same answer of the API
 * server reaches both as the same class with the same fields (status, reason, message, causes,
 * Retry-After), parsed where the answer is read; and one rule for a Retry-After beyond the
 * deadline, in the transport.
 */
import { apiClient } from '../../src/agent/api';
import { ApiError as AgentApiError } from '../../src/agent/api';
import { KubeClient } from '../../src/kube/connection';
import { ApiError, Refused } from '../../src/kube/errors';
import { loadKubeConfig } from '../../src/kube/kubeconfig';
import { Cluster } from '../../src/kube/cluster';
import { ApiError as RuntimeApiError, ClusterMisbehaved, RuntimeError } from '../../src/kube/api-errors';
import { EXIT } from '../../src/plan/exit-codes';
import { startSimulator, Simulator } from '../sim';

let sim: Simulator;
beforeAll(async () => { sim = await startSimulator(); });
afterAll(() => sim.stop());

const failure = (p: Promise<unknown>): Promise<unknown> => p.then(() => { throw new Error('expected a failure'); }, (e: unknown) => e);

const badJob = {
  apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'bad', namespace: 'default' },
  spec: { template: { spec: { restartPolicy: 'Always', containers: [{ name: 'c', image: 'x:1' }] } } },
};

describe('one ApiError', () => {
  it('is the same class in the runtime, the agent and the Kubernetes layer, and an error with an exit code', () => {
    expect(RuntimeApiError).toBe(ApiError);
    expect(AgentApiError).toBe(ApiError);
    expect(new ApiError(404, 'NotFound', 'x')).toBeInstanceOf(RuntimeError);
  });

  it('carries the same status, reason and causes of a refused write, from the runtime and from the agent', async () => {
    const cluster = new Cluster(loadKubeConfig({ kubeconfig: sim.kubeconfigPath }));
    const api = await apiClient(sim.kubeconfigPath, 5000);
    const fromRuntime = await failure(cluster.create(badJob)) as ApiError;
    const fromAgent = await failure(api.request('POST', '/apis/batch/v1/namespaces/default/jobs', { body: badJob })) as ApiError;
    for (const e of [fromRuntime, fromAgent]) {
      expect(e).toBeInstanceOf(ApiError);
      expect(e.status).toBe(422);
      expect(e.reason).toBe('Invalid');
      expect(e.causes.join('\n')).toMatch(/restartPolicy/);
    }
    expect(fromAgent.causes).toEqual(fromRuntime.causes);
    // each words it for its own report
    expect(fromAgent.message).toMatch(/^POST \/apis\/batch\/v1\/namespaces\/default\/jobs: HTTP 422: /);
    expect(fromRuntime.message).toMatch(/^create Job\/bad \(default\): /);
  });

  it('carries a 429\'s Retry-After in seconds', async () => {
    const client = new KubeClient(loadKubeConfig({ kubeconfig: sim.kubeconfigPath }));
    sim.throttleNext(1, 7, '/api/v1/namespaces');
    const e = await failure(client.request('GET', '/api/v1/namespaces')) as ApiError;
    expect(e).toBeInstanceOf(ApiError);
    expect([e.status, e.retryAfter]).toEqual([429, 7]);
  });
});

describe('a Retry-After beyond the deadline', () => {
  it('is refused by the transport, for any caller, without waiting', async () => {
    const client = new KubeClient(loadKubeConfig({ kubeconfig: sim.kubeconfigPath }));
    client.limits.deadline = Date.now() + 5000;
    sim.throttleNext(1, 3600, '/api/v1/namespaces');
    const started = Date.now();
    const e = await failure(client.request('GET', '/api/v1/namespaces'));
    expect(e).toBeInstanceOf(Refused);
    expect((e as Error).message).toMatch(/^GET \/api\/v1\/namespaces: HTTP 429, Retry-After 3600 s is beyond the run's deadline \(\d+ s left\); giving up$/);
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it('is, in the runtime, a misbehaving cluster that is not retried', async () => {
    const cluster = new Cluster(loadKubeConfig({ kubeconfig: sim.kubeconfigPath }));
    await cluster.ping();
    cluster.setDeadline(Date.now() + 5000);
    sim.throttleNext(1, 3600, '/api/v1/namespaces');
    const e = await failure(cluster.list({ apiVersion: 'v1', kind: 'Namespace' }));
    expect(e).toBeInstanceOf(ClusterMisbehaved);
    expect((e as ClusterMisbehaved).exitCode).toBe(EXIT.unreachable);
    expect(cluster.retries).toBe(0);
  });
});
