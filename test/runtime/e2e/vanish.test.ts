import * as k8s from '@kubernetes/client-node';
import { startSimulator, Simulator, SimOptions } from '../../sim';
import { cli, until } from './harness';
import { deployment, job, namespace, NS, writePlan } from '../plans';

let sim: Simulator;
async function start(opts: SimOptions = {}): Promise<Simulator> {
  sim = await startSimulator(opts);
  return sim;
}
afterEach(async () => {
  await sim?.stop();
});

function objects(): k8s.KubernetesObjectApi {
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(sim.kubeconfigPath);
  return k8s.KubernetesObjectApi.makeApiClient(kc);
}

describe('waits end when their object is gone', () => {
  it('a Job deleted by someone else during its wait fails the step at once, naming its last writer', async () => {
    await start({ jobs: { setup: { outcome: 'hang' } } });
    const dir = writePlan([{ name: 'namespace', objects: [namespace()] }, { name: 'setup', objects: [job('setup')], timeoutSeconds: 600 }, { name: 'server', objects: [deployment('uyuni')] }]);
    const t0 = Date.now();
    const run = cli('run', dir, { kubeconfig: sim.kubeconfigPath });
    await until('the Job running', () => (sim.get('batch/v1', 'Job', 'setup', NS)?.status?.active ?? 0) > 0);
    const api = objects();
    await api.patch({ apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'setup', namespace: NS, labels: { touched: 'yes' } } } as any, undefined, undefined, 'intruder', undefined, k8s.PatchStrategy.MergePatch);
    await api.delete({ apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'setup', namespace: NS } } as any, undefined, undefined, undefined, undefined, 'Background');
    const r = await run;
    expect(r.code).toBe(1);
    expect(Date.now() - t0).toBeLessThan(20_000);
    expect(r.out).toMatch(/setup: FAILED .*Job\/setup \(uyuni-test\) was deleted while waiting for complete/);
    expect(r.out).toContain('last written by "intruder"');
    expect(sim.get('apps/v1', 'Deployment', 'uyuni', NS)).toBeUndefined();
  });

  it('a Deployment deleted during its rollout fails the step at once', async () => {
    await start({ deployments: { uyuni: { startupMs: 'hold' } } });
    const dir = writePlan([{ name: 'namespace', objects: [namespace()] }, { name: 'server', objects: [deployment('uyuni')], timeoutSeconds: 600 }]);
    const t0 = Date.now();
    const run = cli('run', dir, { kubeconfig: sim.kubeconfigPath });
    await until('its pod', () => sim.list('v1', 'Pod', NS).length > 0);
    await objects().delete({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'uyuni', namespace: NS } } as any);
    const r = await run;
    expect(r.code).toBe(1);
    expect(Date.now() - t0).toBeLessThan(20_000);
    expect(r.out).toMatch(/Deployment\/uyuni \(uyuni-test\) was deleted while waiting for rollout.*last written by "uyuni-cdk"/);
  });
});

describe('refused pods are reported', () => {
  it('a Job whose pods a ResourceQuota refuses fails after the stuck grace with the API\'s reason', async () => {
    await start();
    sim.put({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS }, spec: { finalizers: ['kubernetes'] }, status: { phase: 'Active' } });
    sim.put({ apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'no-pods', namespace: NS }, spec: { hard: { pods: '0' } } });
    const dir = writePlan([{ name: 'namespace', objects: [namespace()] }, { name: 'setup', objects: [job('setup')], timeoutSeconds: 600 }]);
    const t0 = Date.now();
    const r = await cli('run', dir, { kubeconfig: sim.kubeconfigPath, stuckGrace: 1, progressInterval: 0.2 });
    expect(r.code).toBe(1);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1000);
    expect(Date.now() - t0).toBeLessThan(20_000);
    expect(r.out).toMatch(/setup: FAILED .*Job setup cannot create its pods: Error creating: pods "setup-" is forbidden: exceeded quota: no-pods, requested: pods=1, used: pods=0, limited: pods=0 \(FailedCreate/);
    expect(r.out).toContain('pods refused: Error creating');
  });

  it('a Deployment whose pods PodSecurity refuses fails after the stuck grace with the API\'s reason', async () => {
    await start({ deployments: { uyuni: {} } });
    sim.put({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS, labels: { 'pod-security.kubernetes.io/enforce': 'restricted' } }, spec: { finalizers: ['kubernetes'] }, status: { phase: 'Active' } });
    const dir = writePlan([{ name: 'server', objects: [deployment('uyuni')], timeoutSeconds: 600 }]);
    const r = await cli('run', dir, { kubeconfig: sim.kubeconfigPath, stuckGrace: 1 });
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/Deployment\/uyuni \(uyuni-test\) cannot create its pods: Error creating: pods "uyuni-\w+-" is forbidden: violates PodSecurity "restricted:latest"/);
  });
});
