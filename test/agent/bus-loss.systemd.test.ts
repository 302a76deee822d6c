/**
 * `uyuni-cdk agent run` when its bus goes away: the dbus-daemon of a real `systemd --user` is
 * killed under a running agent. The agent ends at once with exit 3 and one ERROR record naming
 * the bus, and leaves the pod's unit running; a fresh agent then connects again and adopts it.
 */
import * as fs from 'fs';
import * as path from 'path';
import * as dbus from 'dbus-next';
import { startSimulator, Simulator } from '../sim';
import { clients } from '../sim/helpers';
import { AgentProcess, startAgent } from './harness/agent-process';
import { OutageProxy, startOutageProxy } from './harness/outage-proxy';
import { startUserSystemd, UserSystemd } from './harness/systemd-user';
import { TOLERATIONS } from './harness/tolerations';

const NODE = 'bus-node';
const UNIT = 'default-served-main.service';

let sd: UserSystemd;
let sim: Simulator;
let proxy: OutageProxy;
let agent: AgentProcess | undefined;

/**
 * The PID of the dbus-daemon the agent talks to. The user manager's own dbus.socket listens on
 * $XDG_RUNTIME_DIR/bus (taking the path over from the harness's daemon), so the bus is its
 * socket-activated dbus.service: killing it is what a node sees when dbus dies.
 */
function busDaemonPid(): number {
  const pid = Number(sd.show('dbus.service', 'MainPID'));
  const argv0 = pid > 0 ? fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0] : '';
  if (path.basename(argv0) !== 'dbus-daemon') throw new Error(`dbus.service runs no dbus-daemon (MainPID ${pid}, ${argv0})`);
  return pid;
}

/** Whether systemd answers on the bus within `ms` (a fresh connection: it activates dbus.service again). */
async function managerOnBus(ms: number): Promise<boolean> {
  const bus = dbus.sessionBus({ busAddress: sd.busAddress });
  bus.on('error', () => undefined);
  const msg = new dbus.Message({
    destination: 'org.freedesktop.systemd1', path: '/org/freedesktop/systemd1', interface: 'org.freedesktop.DBus.Properties',
    member: 'Get', signature: 'ss', body: ['org.freedesktop.systemd1.Manager', 'SystemState'],
  });
  try {
    let timer: NodeJS.Timeout | undefined;
    const reply = await Promise.race([bus.call(msg), new Promise<undefined>((r) => { timer = setTimeout(() => r(undefined), ms); })]);
    clearTimeout(timer);
    return reply !== undefined;
  } catch {
    return false;
  } finally {
    bus.disconnect();
  }
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

const getPod = (name: string): any => sim.get('v1', 'Pod', name, 'default');

function agentArgs(): string[] {
  return ['--node', NODE, '--session', '--package-dir', path.join(sd.base, 'packages'), '--kubeconfig', proxy.kubeconfigPath, '--node-ip', '10.9.8.6', '--resync', '3600'];
}

beforeAll(async () => {
  sd = await startUserSystemd();
  sim = await startSimulator({ externalNodes: [NODE] });
  proxy = await startOutageProxy(sim.url);
  const script = path.join(sd.base, 'packages', 'svc-1.0', 'serve.sh');
  fs.mkdirSync(path.dirname(script), { recursive: true });
  fs.writeFileSync(script, '#!/bin/sh\nexec sleep 1d\n', { mode: 0o755 });
}, 60_000);

afterAll(async () => {
  await agent?.stop('SIGKILL');
  await proxy?.stop();
  await sim?.stop();
  await sd?.stop();
});

describe('agent run losing the D-Bus connection to systemd', () => {
  let unitPid: number;

  it('exits 3 within seconds of the bus going away, with one ERROR record naming the bus, and leaves the unit running', async () => {
    await clients(sim).core.createNamespacedPod({
      namespace: 'default',
      body: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'served', namespace: 'default' }, spec: { nodeName: NODE, tolerations: TOLERATIONS, containers: [{ name: 'main', image: 'svc:1.0', command: ['serve.sh'] }] } } as any,
    });
    agent = startAgent(agentArgs(), sd.env);
    await agent.waitFor(/Watching the pods of node \[bus-node\]/);
    await agent.waitFor(/The status of pod \[default\/served\] was updated: Running/);
    unitPid = Number(sd.show(UNIT, 'MainPID'));
    expect(unitPid).toBeGreaterThan(0);

    const t0 = Date.now();
    const busPid = busDaemonPid();
    process.kill(busPid, 'SIGKILL');
    let timer: NodeJS.Timeout | undefined;
    const code = await Promise.race([agent.exited, new Promise((r) => { timer = setTimeout(() => r(`still running:\n${agent!.stderr()}`), 5000); })]);
    clearTimeout(timer);
    const elapsed = Date.now() - t0;
    expect(code).toBe(3);
    expect(elapsed).toBeLessThan(5000);
    const lines = agent.stderr().trim().split('\n');
    const errors = lines.filter((l) => l.includes(' ERROR '));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(new RegExp(`^\\[\\S+Z ERROR uyuni_cdk::agent::run\\] The connection to the session bus \\(${sd.busAddress.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}\\) was lost \\(.+\\); stopping so that a new agent connects again, the systemd units keep running\\.$`));
    expect(agent.stderr()).not.toMatch(/was (stopped|restarted)|Stopping; /);

    // The manager is reached over its private socket (systemctl), not the bus: the unit still runs.
    expect(alive(unitPid)).toBe(true);
    expect(sd.show(UNIT, 'ActiveState')).toBe('active');
    expect(Number(sd.show(UNIT, 'MainPID'))).toBe(unitPid);
    expect(getPod('served').status.phase).toBe('Running');
    console.log(`agent exit after the bus died: ${elapsed} ms\n${errors[0]}`);
  });

  it('a fresh agent (what Restart=always starts) connects again and adopts the unit without a restart', async () => {
    // dbus.socket still listens: a new connection activates a new dbus.service, and systemd joins
    // it once that is up. An agent started before that waits for its calls; on a node
    // Restart=always starts it again, here the test waits for systemd instead.
    const t0 = Date.now();
    while (!(await managerOnBus(2000))) {
      if (Date.now() - t0 > 30_000) throw new Error(`systemd did not return to the bus:\n${fs.readFileSync(path.join(sd.base, 'systemd.log'), 'utf8').slice(-3000)}`);
    }
    console.log(`systemd back on the bus after ${Date.now() - t0} ms`);
    agent = startAgent(agentArgs(), sd.env);
    await agent.waitFor(/Watching the pods of node \[bus-node\]/, 30_000);
    expect(agent.stderr()).toContain(`INFO  uyuni_cdk::agent::cleanup] The systemd unit [${UNIT}] will be kept because a corresponding pod exists.`);
    expect(Number(sd.show(UNIT, 'MainPID'))).toBe(unitPid);
    expect(sd.show(UNIT, 'NRestarts')).toBe('0');
    expect(await agent.stop('SIGTERM')).toBe(0);
  });
});
