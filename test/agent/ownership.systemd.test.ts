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
import { startSimulator, Simulator } from '../sim';
import { clients } from '../sim/helpers';
import { AgentProcess, startAgent } from './harness/agent-process';
import { startUserSystemd, UserSystemd } from './harness/systemd-user';
import { untilWith } from './harness/until';

jest.setTimeout(120_000);

const NODE = 'owner-node';

let sd: UserSystemd;
let sim: Simulator;
let agent: AgentProcess | undefined;
let pkg: string;
let kubeconfig: string;

const until = untilWith(() => agent?.stderr() ?? '', 20_000);

function pod(namespace: string, name: string, container: string, args: string[] = []): any {
  return {
    apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace },
    spec: { nodeName: NODE, containers: [{ name: container, image: 'svc:1.0', command: ['serve.sh'], args }] },
  };
}

const getPod = (ns: string, name: string): any => sim.get('v1', 'Pod', name, ns);
async function create(p: any): Promise<void> {
  const core = clients(sim).core;
  await core.createNamespace({ body: { metadata: { name: p.metadata.namespace } } }).catch(() => undefined);
  await core.createNamespacedPod({ namespace: p.metadata.namespace, body: p });
}
const remove = (ns: string, name: string): Promise<unknown> => clients(sim).core.deleteNamespacedPod({ name, namespace: ns });

/** A unit an admin wrote into the unit directory, running. */
function adminUnit(name: string): { file: string; content: string; pid: string } {
  const file = path.join(sd.unitDir, name);
  const content = '[Unit]\nDescription=an admin\'s own service\n\n[Service]\nExecStart=/bin/sleep 1d\n\n[Install]\nWantedBy=default.target\n';
  fs.writeFileSync(file, content);
  sd.systemctl('daemon-reload');
  sd.systemctl('start', name);
  return { file, content, pid: sd.show(name, 'MainPID') };
}

function startRun(): AgentProcess {
  return startAgent(['--node', NODE, '--session', '--package-dir', pkg, '--kubeconfig', kubeconfig, '--node-ip', '10.9.8.5', '--resync', '3600'], sd.env);
}

beforeAll(async () => {
  sd = await startUserSystemd();
  sim = await startSimulator({ externalNodes: [NODE] });
  kubeconfig = sim.kubeconfigPath;
  pkg = path.join(sd.base, 'packages');
  fs.mkdirSync(path.join(pkg, 'svc-1.0'), { recursive: true });
  fs.writeFileSync(path.join(pkg, 'svc-1.0', 'serve.sh'), '#!/bin/sh\nexec sleep 1d\n', { mode: 0o755 });
}, 60_000);

afterAll(async () => {
  await agent?.stop('SIGKILL');
  await sim?.stop();
  await sd?.stop();
});

describe('agent run touches only the units it created', () => {
  it('leaves a foreign unit file untouched and running; the pod is Failed UnitNameConflict naming the file; its deletion stops nothing', async () => {
    const admin = adminUnit('team-web-server.service');
    agent = startRun();
    await agent.waitFor(/Watching the pods of node/);
    await create(pod('team', 'web', 'server'));
    const failed = await until('Failed', () => getPod('team', 'web')?.status?.phase === 'Failed' && getPod('team', 'web'));
    expect(failed.status.reason).toBe('UnitNameConflict');
    expect(failed.status.message).toContain(admin.file);
    expect(fs.readFileSync(admin.file, 'utf8')).toBe(admin.content);
    expect(sd.show('team-web-server.service', 'MainPID')).toBe(admin.pid);

    await remove('team', 'web');
    await until('the pod object gone', () => getPod('team', 'web') === undefined);
    expect(fs.readFileSync(admin.file, 'utf8')).toBe(admin.content);
    expect(sd.show('team-web-server.service', 'ActiveState')).toBe('active');
    expect(sd.show('team-web-server.service', 'MainPID')).toBe(admin.pid);
    expect(agent.stderr()).not.toContain('[team-web-server.service] was');
  });

  it("refuses pod uyuni/cdk (container agent): the agent's own unit name; deleting the pod leaves the agent and that unit running", async () => {
    const own = adminUnit('uyuni-cdk-agent.service');
    await create(pod('uyuni', 'cdk', 'agent'));
    const failed = await until('Failed', () => getPod('uyuni', 'cdk')?.status?.phase === 'Failed' && getPod('uyuni', 'cdk'));
    expect(failed.status.reason).toBe('UnitNameConflict');
    expect(failed.status.message).toContain('uyuni-cdk-agent.service');
    await remove('uyuni', 'cdk');
    await until('the pod object gone', () => getPod('uyuni', 'cdk') === undefined);
    expect(agent!.child.exitCode).toBeNull();
    expect(sd.show('uyuni-cdk-agent.service', 'MainPID')).toBe(own.pid);
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
    const pid = sd.show(unit, 'MainPID');
    expect(fs.readFileSync(path.join(sd.unitDir, unit), 'utf8')).toContain('older');

    expect(await agent!.stop('SIGTERM')).toBe(0);
    agent = startRun();
    await agent.waitFor(/Watching the pods of node/);
    await until('the younger reported again', () => /cannot run \(UnitNameConflict\).*team-web-db-c\.service/.test(agent!.stderr()) && true);
    expect(sd.show(unit, 'MainPID')).toBe(pid);
    expect(sd.show(unit, 'NRestarts')).toBe('0');
    expect(fs.readFileSync(path.join(sd.unitDir, unit), 'utf8')).toContain('older');
    expect(getPod('team-web', 'db').status.phase).toBe('Running');
    expect(getPod('team', 'web-db').status.phase).toBe('Failed');
    expect(agent.stderr()).not.toMatch(/\[team-web-db-c\.service\] was (started|restarted|stopped)/);
  });
});
