/**
 * Issue 23, node policy: `agent run --pod-security restricted --max-pods 2` on a real
 * `systemd --user`: a pod that violates the level, or runs a command from outside the package
 * directory, never gets a unit; a third pod is Failed OutOfpods and runs once a place is free.
 */
import * as fs from 'fs';
import * as path from 'path';
import { clients } from '../sim/helpers';
import { nodeSuite } from './harness/node-suite';
import { TOLERATIONS } from './harness/tolerations';

jest.setTimeout(120_000);

const NODE = 'policy-node';

const node = nodeSuite({
  node: NODE, nodeIp: '10.9.8.2', args: ['--pod-security', 'restricted', '--max-pods', '2'],
  scripts: { 'serve.sh': '#!/bin/sh\nexec sleep 1d\n' },
  // The units run as uid 1000: the package must be readable by it.
  prepare: ({ sd, pkg }) => { for (const d of [sd.base, pkg, path.join(pkg, 'svc-1.0')]) fs.chmodSync(d, 0o755); },
});
const { until, getPod, create, unitFile } = node;

const RESTRICTED = { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] }, seccompProfile: { type: 'RuntimeDefault' } };

function pod(name: string, command: string, sc: Record<string, unknown> = RESTRICTED): any {
  return {
    apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default' },
    spec: { nodeName: NODE, tolerations: TOLERATIONS, securityContext: { runAsNonRoot: true, runAsUser: 1000 }, containers: [{ name: 'main', image: 'svc:1.0', command: [command], securityContext: sc }] },
  };
}

async function refused(name: string): Promise<string> {
  const failed = await until(`${name} Failed`, () => getPod(name)?.status?.phase === 'Failed' && getPod(name));
  const waiting = failed.status.containerStatuses[0].state.waiting;
  expect(waiting.reason).toBe('PodSecurityViolation');
  expect(fs.existsSync(unitFile(name))).toBe(false);
  return waiting.message;
}

describe('agent run --pod-security restricted --max-pods 2', () => {
  it('refuses a pod that violates restricted: Failed with the fields, never a unit', async () => {
    await create(pod('loose', 'serve.sh', { capabilities: { add: ['SYS_ADMIN'] } }));
    const message = await refused('loose');
    expect(message).toContain('--pod-security restricted');
    expect(message).toContain('spec.containers[0].securityContext.allowPrivilegeEscalation must be false');
    expect(message).toContain('spec.containers[0].securityContext.capabilities.add must not add SYS_ADMIN');
    expect(message).toContain('seccompProfile.type');
  });

  it('refuses a command outside the package directory', async () => {
    await create(pod('abs', '/bin/sleep'));
    expect(await refused('abs')).toContain(`spec.containers[0].command[0] /bin/sleep is outside the package directory ${node.pkg}`);
  });

  it('runs at most --max-pods pods; the next is Failed OutOfpods and runs once a place is free', async () => {
    await create(pod('one', 'serve.sh'));
    await create(pod('two', 'serve.sh'));
    await until('two Running', () => getPod('one')?.status?.phase === 'Running' && getPod('two')?.status?.phase === 'Running');
    await create(pod('three', 'serve.sh'));
    const full = await until('three Failed', () => getPod('three')?.status?.phase === 'Failed' && getPod('three'));
    expect(full.status.containerStatuses[0].state.waiting.reason).toBe('OutOfpods');
    expect(fs.existsSync(unitFile('three'))).toBe(false);
    await clients(node.sim).core.deleteNamespacedPod({ name: 'one', namespace: 'default' });
    await until('three Running', () => getPod('three')?.status?.phase === 'Running');
    expect(node.sd.show('default-three-main.service', 'User')).toBe('1000');
  });
});
