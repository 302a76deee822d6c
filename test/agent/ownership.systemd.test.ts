/**
 * Issue 23, ownership: `agent run` writes, starts, stops and removes only the units it created for
 * a pod. Real `systemd --user`, the API simulator, the agent as its own process.
 *
 * - an admin's unit file whose name a pod maps to (outside the slice) stays byte for byte, keeps
 *   running, and the pod is Failed with reason UnitNameConflict naming the file;
 * - pod `uyuni/cdk` with container `agent` maps to the agent's own unit: refused, and deleting the
 *   pod stops nothing (the agent keeps running);
 * - two pods mapping to one unit name (`team/web-db` and `team-web/db`): the older runs it, the
 *   other is Failed with UnitNameConflict, and after an agent restart the same pod keeps it, its
 *   process never restarted.
 */
import * as fs from 'fs';
import * as path from 'path';
import { nodeSuite } from './harness/node-suite';
import { TOLERATIONS } from './harness/tolerations';

jest.setTimeout(120_000);

const NODE = 'owner-node';

// Each test starts (and restarts) the agent itself, after setting up what it must find.
const node = nodeSuite({ node: NODE, nodeIp: '10.9.8.5', start: false, untilMs: 20_000, scripts: { 'serve.sh': '#!/bin/sh\nexec sleep 1d\n' } });
const { until, create } = node;
const getPod = (ns: string, name: string): any => node.getPod(name, ns);
const remove = (ns: string, name: string): Promise<unknown> => node.remove(name, ns);

function pod(namespace: string, name: string, container: string, args: string[] = []): any {
  return {
    apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace },
    spec: { nodeName: NODE, tolerations: TOLERATIONS, containers: [{ name: container, image: 'svc:1.0', command: ['serve.sh'], args }] },
  };
}

/** A unit an admin wrote into the unit directory, running. */
function adminUnit(name: string): { file: string; content: string; pid: string } {
  const file = path.join(node.sd.unitDir, name);
  const content = '[Unit]\nDescription=an admin\'s own service\n\n[Service]\nExecStart=/bin/sleep 1d\n\n[Install]\nWantedBy=default.target\n';
  fs.writeFileSync(file, content);
  node.sd.systemctl('daemon-reload');
  node.sd.systemctl('start', name);
  return { file, content, pid: node.sd.show(name, 'MainPID') };
}

describe('agent run touches only the units it created', () => {
  it('leaves a foreign unit file untouched and running; the pod is Failed UnitNameConflict naming the file; its deletion stops nothing', async () => {
    const admin = adminUnit('team-web-server.service');
    await node.start();
    await create(pod('team', 'web', 'server'));
    const failed = await until('Failed', () => getPod('team', 'web')?.status?.phase === 'Failed' && getPod('team', 'web'));
    expect(failed.status.reason).toBe('UnitNameConflict');
    expect(failed.status.message).toContain(admin.file);
    expect(fs.readFileSync(admin.file, 'utf8')).toBe(admin.content);
    expect(node.sd.show('team-web-server.service', 'MainPID')).toBe(admin.pid);

    await remove('team', 'web');
    await until('the pod object gone', () => getPod('team', 'web') === undefined);
    expect(fs.readFileSync(admin.file, 'utf8')).toBe(admin.content);
    expect(node.sd.show('team-web-server.service', 'ActiveState')).toBe('active');
    expect(node.sd.show('team-web-server.service', 'MainPID')).toBe(admin.pid);
    expect(node.agent!.stderr()).not.toContain('[team-web-server.service] was');
  });

  it("refuses pod uyuni/cdk (container agent): the agent's own unit name; deleting the pod leaves the agent and that unit running", async () => {
    const own = adminUnit('uyuni-cdk-agent.service');
    await create(pod('uyuni', 'cdk', 'agent'));
    const failed = await until('Failed', () => getPod('uyuni', 'cdk')?.status?.phase === 'Failed' && getPod('uyuni', 'cdk'));
    expect(failed.status.reason).toBe('UnitNameConflict');
    expect(failed.status.message).toContain('uyuni-cdk-agent.service');
    await remove('uyuni', 'cdk');
    await until('the pod object gone', () => getPod('uyuni', 'cdk') === undefined);
    expect(node.agent!.child.exitCode).toBeNull();
    expect(node.sd.show('uyuni-cdk-agent.service', 'MainPID')).toBe(own.pid);
    expect(fs.readFileSync(own.file, 'utf8')).toBe(own.content);
  });

  it('gives a unit name two pods map to the older pod, and keeps it with that pod across an agent restart', async () => {
    const unit = 'team-web-db-c.service';
    // team-web/db is the older; team/web-db lists first (namespace order), as after a restart.
    await create(pod('team-web', 'db', 'c', ['older']));
    await until('the older running', () => getPod('team-web', 'db')?.status?.phase === 'Running');
    await new Promise((r) => setTimeout(r, 1100)); // creation timestamps have whole seconds
    await create(pod('team', 'web-db', 'c', ['younger']));
    const younger = await until('the younger Failed', () => getPod('team', 'web-db')?.status?.phase === 'Failed' && getPod('team', 'web-db'));
    expect(younger.status.reason).toBe('UnitNameConflict');
    expect(younger.status.message).toContain('[team-web/db]');
    const pid = node.sd.show(unit, 'MainPID');
    expect(fs.readFileSync(path.join(node.sd.unitDir, unit), 'utf8')).toContain('older');

    expect(await node.agent!.stop('SIGTERM')).toBe(0);
    await node.start();
    await until('the younger reported again', () => /cannot run \(UnitNameConflict\).*team-web-db-c\.service/.test(node.agent!.stderr()) && true);
    expect(node.sd.show(unit, 'MainPID')).toBe(pid);
    expect(node.sd.show(unit, 'NRestarts')).toBe('0');
    expect(fs.readFileSync(path.join(node.sd.unitDir, unit), 'utf8')).toContain('older');
    expect(getPod('team-web', 'db').status.phase).toBe('Running');
    expect(getPod('team', 'web-db').status.phase).toBe('Failed');
    expect(node.agent!.stderr()).not.toMatch(/\[team-web-db-c\.service\] was (started|restarted|stopped)/);
  });
});
