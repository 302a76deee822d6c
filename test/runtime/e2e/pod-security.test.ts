/**
 * PodSecurity before the first write, against the simulator (whose admission models part of level
 * `restricted` and sends its warnings on workloads as kube-apiserver does: test/sim/README.md, 8;
 * the real server: test/cluster/pod-security.test.ts): plan names the Deployment whose pods would
 * be refused, run says it on stderr before its lock and writes nothing before it.
 */
import * as fs from 'fs';
import * as path from 'path';
import { startSimulator, Simulator } from '../../sim';
import { cli, tmpDir } from './harness';
import { deployment, namespace, NS, writePlan } from '../plans';

let sim: Simulator;
afterEach(async () => {
  await sim?.stop();
});

const install = () => writePlan([{ name: 'namespace', objects: [namespace()] }, { name: 'server', objects: [deployment('web')] }], { name: 'install' });

describe('a namespace labelled pod-security.kubernetes.io/enforce=restricted', () => {
  it('plan names the workload whose pods would be refused; run says it before its lock', async () => {
    sim = await startSimulator();
    const dir = install();
    expect((await cli('run', dir, { kubeconfig: sim.kubeconfigPath })).code).toBe(0);
    const plain = await cli('plan', dir, { kubeconfig: sim.kubeconfigPath });
    expect(plain.out).not.toContain('pod security');

    sim.put({ ...sim.get('v1', 'Namespace', NS), metadata: { ...sim.get('v1', 'Namespace', NS).metadata, labels: { ...sim.get('v1', 'Namespace', NS).metadata.labels, 'pod-security.kubernetes.io/enforce': 'restricted' } } });
    const plan = await cli('plan', dir, { kubeconfig: sim.kubeconfigPath, detailedExitcode: true });
    expect(plan.code).toBe(0);
    expect(plan.out).toContain(`pod security: namespace ${NS} (pod-security.kubernetes.io/enforce=restricted)\n`);
    expect(plan.out).toMatch(new RegExp(`    Deployment/web \\(${NS}\\): violates "restricted:latest": runAsNonRoot != true`));

    const json = JSON.parse((await cli('plan', dir, { kubeconfig: sim.kubeconfigPath, output: 'json' })).out);
    expect(json.podSecurity).toMatchObject({ namespace: NS, labels: ['enforce=restricted'], findings: [{ object: `Deployment/web (${NS})`, level: 'restricted:latest', refused: true }] });

    const runDir = tmpDir();
    const run = await cli('run', dir, { kubeconfig: sim.kubeconfigPath, runDir });
    expect(run.err).toContain(`uyuni-cdk: warning: pod security: namespace ${NS} (pod-security.kubernetes.io/enforce=restricted)`);
    const types = fs.readFileSync(path.join(runDir, 'events.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l)).map((e) => (e.type === 'action' ? `${e.type} ${e.action}` : e.type));
    expect(types.indexOf('pod-security')).toBeGreaterThan(types.indexOf('run-start'));
    expect(types.indexOf('pod-security')).toBeLessThan(types.indexOf('action lock'));
  });
});
