/**
 * A change the server refuses as immutable, on the simulator (its 422s worded as kube-apiserver
 * v1.34 words them: test/cluster/immutable.test.ts shows the same against the real server):
 * `plan` shows a re-create among the destructive changes, `run` asks, deletes, waits until the
 * object is gone and creates it; a claim is refused before any write.
 */
import { startSimulator, Simulator } from '../../sim';
import { cli } from './harness';
import { deployment, namespace, NS, pvc, service, writePlan } from '../plans';

let sim: Simulator;
afterEach(async () => {
  await sim?.stop();
});

const k = () => ({ kubeconfig: sim.kubeconfigPath });

describe('a change the server refuses as immutable', () => {
  it('a Service made headless: plan shows a destructive re-create, run asks, then deletes, waits and creates it', async () => {
    sim = await startSimulator();
    const first = writePlan([{ name: 'namespace', objects: [namespace()] }, { name: 'services', objects: [service('web')] }]);
    expect((await cli('run', first, { ...k(), yes: true })).code).toBe(0);
    const uid = sim.get('v1', 'Service', 'web', NS).metadata.uid;
    const headless = { ...service('web'), spec: { ...service('web').spec, clusterIP: 'None' } };
    const next = writePlan([{ name: 'namespace', objects: [namespace()] }, { name: 'services', objects: [headless] }]);

    const plan = await cli('plan', next, { ...k(), detailedExitcode: true });
    expect(plan.code).toBe(2);
    expect(plan.out).toMatch(/recreate\s+Service\/web \(uyuni-test\)\s+\(the server keeps a changed field once set \(spec\.clusterIPs\[0\]: Invalid value: \["None"\]: may not change once set\): deleted and created again\)/);
    expect(plan.out).toMatch(/destructive: objects deleted and created again[^\n]*\n\s+recreate\s+Service\/web \(uyuni-test\)\s+\[services\]/);
    expect(plan.out).toContain('Plan: 0 to create, 1 to update');

    const asked = await cli('run', next, k());
    expect(asked.code).toBe(2);
    expect(asked.out).toMatch(/destructive changes \(1\):\n\s+recreate\s+Service\/web \(uyuni-test\)\s+\[services\]\s+the server keeps a changed field once set/);
    expect(asked.err).toContain('1 destructive change and no terminal to ask on: nothing was done');
    expect(sim.get('v1', 'Service', 'web', NS).metadata.uid).toBe(uid);

    const run = await cli('run', next, { ...k(), yes: true, output: 'json' });
    expect(run.code).toBe(0);
    const events = run.out.trim().split('\n').map((l) => JSON.parse(l));
    const deleted = events.findIndex((e) => e.type === 'action' && e.object.name === 'web' && /^delete/.test(e.action));
    const applied = events.findIndex((e) => e.type === 'apply' && e.object.name === 'web');
    expect(deleted).toBeGreaterThanOrEqual(0);
    expect(events[applied].result).toBe('re-created');
    expect(applied).toBeGreaterThan(deleted);
    const now = sim.get('v1', 'Service', 'web', NS);
    expect(now.metadata.uid).not.toBe(uid);
    expect(now.spec.clusterIP).toBe('None');
    expect((await cli('plan', next, { ...k(), detailedExitcode: true })).code).toBe(0);
  });

  it('a Deployment whose selector changed is re-created', async () => {
    sim = await startSimulator();
    const first = writePlan([{ name: 'namespace', objects: [namespace()] }, { name: 'server', objects: [deployment('web')] }]);
    expect((await cli('run', first, { ...k(), yes: true })).code).toBe(0);
    const d = deployment('web');
    const moved = { ...d, spec: { ...d.spec, selector: { matchLabels: { app: 'web', tier: 'front' } }, template: { ...d.spec.template, metadata: { labels: { app: 'web', tier: 'front' } } } } };
    const next = writePlan([{ name: 'namespace', objects: [namespace()] }, { name: 'server', objects: [moved] }]);
    const plan = await cli('plan', next, k());
    expect(plan.out).toMatch(/recreate\s+Deployment\/web \(uyuni-test\)\s+\(the server keeps a changed field once set \(spec\.selector: Invalid value: \{"matchLabels":\{"app":"web","tier":"front"\}\}: field is immutable\)/);
    expect((await cli('run', next, { ...k(), yes: true })).code).toBe(0);
    expect(sim.get('apps/v1', 'Deployment', 'web', NS).spec.selector.matchLabels).toEqual({ app: 'web', tier: 'front' });
  });

  it('a claim whose class changed is refused by plan and by run before any write, naming the field', async () => {
    sim = await startSimulator();
    const first = writePlan([{ name: 'namespace', objects: [namespace()] }, { name: 'volumes', objects: [pvc('data', 'standard')] }, { name: 'services', objects: [service('web')] }]);
    expect((await cli('run', first, { ...k(), yes: true })).code).toBe(0);
    const next = writePlan([{ name: 'namespace', objects: [namespace()] }, { name: 'volumes', objects: [pvc('data', 'fast')] }, { name: 'services', objects: [service('other')] }]);
    const plan = await cli('plan', next, { ...k(), detailedExitcode: true });
    expect(plan.code).toBe(1);
    expect(plan.out).toMatch(/run would refuse before any write:\n\s+- PersistentVolumeClaim\/data \(uyuni-test\): spec\.storageClassName: "standard" → "fast" cannot change on an existing claim \(spec: Forbidden: spec is immutable after creation[^)]*\); re-creating it would lose its data/);
    const run = await cli('run', next, { ...k(), yes: true });
    expect(run.code).toBe(1);
    expect(run.err).toMatch(/refused before any write[\s\S]*PersistentVolumeClaim\/data \(uyuni-test\): spec\.storageClassName: "standard" → "fast"/);
    // nothing written: the later step's Service was not made either
    expect(sim.get('v1', 'Service', 'other', NS)).toBeUndefined();
    expect(sim.get('v1', 'PersistentVolumeClaim', 'data', NS).spec.storageClassName).toBe('standard');
  });
});
