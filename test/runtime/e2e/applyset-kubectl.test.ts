/**
 * Our ApplySet as Debian's kubectl 1.32 sees it (KUBECTL_APPLYSET=true), against the simulator:
 * kubectl, given the same parent and the same objects, computes the same id, labels the members
 * the same and records the same kinds; and each tool refuses the other's parent (its tooling
 * annotation), as KEP-3659 asks, so neither prunes what the other applied.
 */
import { execFile } from 'child_process';
import * as path from 'path';
import { applySetId } from '../../../src/runtime/core/applyset';
import { APPLYSET } from '../../../src/plan/types';
import { KUBECTL } from '../../sim/helpers';
import { startSimulator, Simulator } from '../../sim';
import { changes, cli, tmpDir } from './harness';
import { deployment, job, namespace, NS, service, writePlan } from '../plans';

const sims: Simulator[] = [];
afterEach(async () => {
  for (const s of sims.splice(0)) await s.stop();
});

function kubectl(sim: Simulator, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const home = tmpDir('uyuni-kubectl-');
  return new Promise((resolve) => {
    execFile(KUBECTL, ['--kubeconfig', sim.kubeconfigPath, '--cache-dir', home, ...args],
      { env: { PATH: process.env.PATH ?? '', HOME: home, KUBECTL_APPLYSET: 'true' }, timeout: 30_000 },
      (err, stdout, stderr) => resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }));
  });
}

const PARENT = { apiVersion: 'v1', kind: 'ConfigMap', name: 'uyuni-applyset', namespace: NS };
const members = (sim: Simulator) => ['Service', 'Deployment'].map((k) => sim.get(k === 'Service' ? 'v1' : 'apps/v1', k, 'uyuni', NS).metadata.labels[APPLYSET.partOf]);

describe('the ApplySet and kubectl apply --prune --applyset', () => {
  it('kubectl computes the same id, member labels and kinds for the same parent; each refuses the other\'s parent', async () => {
    const ours = await startSimulator();
    const theirs = await startSimulator();
    sims.push(ours, theirs);
    const dir = writePlan([
      { name: 'namespace', objects: [namespace()] },
      { name: 'setup', objects: [job('setup')] },
      { name: 'server', objects: [service('uyuni'), deployment('uyuni')] },
    ]);
    expect((await cli('run', dir, { kubeconfig: ours.kubeconfigPath })).code).toBe(0);
    const id = applySetId(PARENT);
    const ourParent = ours.get('v1', 'ConfigMap', PARENT.name, NS);
    expect(ourParent.metadata.labels[APPLYSET.id]).toBe(id);
    expect(ourParent.metadata.annotations[APPLYSET.tooling]).toMatch(/^uyuni-cdk\/v\d+\.\d+\.\d+/);
    expect(members(ours)).toEqual([id, id]);
    // The step Job is history, not a member.
    expect(ours.get('batch/v1', 'Job', 'setup', NS).metadata.labels[APPLYSET.partOf]).toBeUndefined();

    // kubectl, on a cluster of its own, applies the same members under a parent of the same name.
    expect((await kubectl(theirs, ['apply', '--server-side', '-f', path.join(dir, '0000-namespace.k8s.yaml')])).code).toBe(0);
    const applied = await kubectl(theirs, ['apply', '--server-side', '-n', NS, '--prune', `--applyset=configmap/${PARENT.name}`, '-f', path.join(dir, '0002-server.k8s.yaml')]);
    expect(applied.stderr).toBe('');
    expect(applied.code).toBe(0);
    const theirParent = theirs.get('v1', 'ConfigMap', PARENT.name, NS);
    expect(theirParent.metadata.labels[APPLYSET.id]).toBe(id);
    expect(theirParent.metadata.annotations[APPLYSET.containsGroupKinds]).toBe(ourParent.metadata.annotations[APPLYSET.containsGroupKinds]);
    expect(theirParent.metadata.annotations[APPLYSET.tooling]).toMatch(/^kubectl\//);
    expect(members(theirs)).toEqual([id, id]);

    // kubectl refuses to prune through our parent, and deletes nothing.
    const refused = await kubectl(ours, ['apply', '--server-side', '-n', NS, '--prune', `--applyset=configmap/${PARENT.name}`, '-f', path.join(dir, '0000-namespace.k8s.yaml')]);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('is managed by tooling "uyuni-cdk" instead of "kubectl"');
    expect(ours.get('apps/v1', 'Deployment', 'uyuni', NS)).toBeDefined();

    // And we refuse kubectl's, before the first step: nothing is applied there.
    const mark = theirs.requests.length;
    const ran = await cli('run', dir, { kubeconfig: theirs.kubeconfigPath });
    expect(ran.code).toBe(1);
    expect(ran.err + ran.out).toContain(`ApplySet parent ConfigMap/${PARENT.name} (${NS}) is managed by "kubectl", not uyuni-cdk`);
    expect(changes(theirs.requests.slice(mark))).toEqual([]);
    const planned = await cli('plan', dir, { kubeconfig: theirs.kubeconfigPath, detailedExitcode: true });
    expect(planned.code).toBe(1);
    expect(planned.out).toContain('run would stop at step namespace: ApplySet parent');
  });
});
