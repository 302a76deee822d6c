/**
 * `uyuni-cdk agent run` end to end (issue 12): a real `systemd --user` on a private bus, the API
 * simulator behind a proxy that can go down, Debian's kubectl as a second client, and the agent
 * as its own process.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { execFileSync } from 'child_process';
import { renderPodUnits } from '../../src/systemd';
import { UYUNI_CDK } from '../helpers/entry';
import { startSimulator, Simulator } from '../sim';
import { clients, kubectl } from '../sim/helpers';
import { AgentProcess, startAgent } from './harness/agent-process';
import { dumperScript, HOSTILE_ARGS, HOSTILE_ENV } from './harness/hostile';
import { OutageProxy, startOutageProxy } from './harness/outage-proxy';
import { startUserSystemd, UserSystemd } from './harness/systemd-user';
import { TOLERATIONS } from './harness/tolerations';

const NODE = 'agent-node';

let sd: UserSystemd;
let sim: Simulator;
let proxy: OutageProxy;
let agent: AgentProcess;
let pkg: string;
let cache: string;

async function until<T>(what: string, probe: () => T | undefined | false | Promise<T | undefined | false>, ms = 15_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${agent?.stderr() ?? ''}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

function pkgScript(name: string, body: string): void {
  const file = path.join(pkg, 'svc-1.0', name);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, body, { mode: 0o755 });
}

function pod(name: string, container: Record<string, unknown>, spec: Record<string, unknown> = {}): any {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default' }, spec: { nodeName: NODE, tolerations: TOLERATIONS, containers: [{ name: 'main', image: 'svc:1.0', ...container }], ...spec } };
}

const unitOf = (name: string): string => `default-${name}-main.service`;
const getPod = (name: string): any => sim.get('v1', 'Pod', name, 'default');
const create = (p: any): Promise<unknown> => clients(sim).core.createNamespacedPod({ namespace: 'default', body: p });
const mainPid = (unit: string): string => sd.show(unit, 'MainPID');

function agentArgs(...extra: string[]): string[] {
  return ['--node', NODE, '--session', '--package-dir', pkg, '--kubeconfig', proxy.kubeconfigPath, '--node-ip', '10.9.8.7', '--resync', '3600', ...extra];
}

beforeAll(async () => {
  sd = await startUserSystemd();
  sim = await startSimulator({ externalNodes: [NODE] });
  proxy = await startOutageProxy(sim.url);
  pkg = path.join(sd.base, 'packages');
  cache = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-run-kubectl-'));
  pkgScript('serve.sh', '#!/bin/sh\necho started > "$MARKER"\nexec sleep 1d\n');
  pkgScript('exit3.sh', '#!/bin/sh\nexit 3\n');

  // Before start-up: a unit the pod `kept` accounts for (running), and an orphan of the slice.
  await create(pod('kept', { command: ['serve.sh'], env: [{ name: 'MARKER', value: path.join(sd.base, 'kept.marker') }] }));
  const kept = renderPodUnits(getPod('kept'), { session: true, packageDir: pkg, kubeconfig: proxy.kubeconfigPath })[0];
  fs.writeFileSync(path.join(sd.unitDir, kept.name), kept.content);
  fs.writeFileSync(path.join(sd.unitDir, 'default-orphan-main.service'), '[Service]\nExecStart=/bin/sleep 1d\nSlice=system-stackable.slice\n\n[Install]\nWantedBy=default.target');
  sd.systemctl('daemon-reload');
  sd.systemctl('start', kept.name, 'default-orphan-main.service');
}, 60_000);

afterAll(async () => {
  await agent?.stop('SIGKILL');
  await proxy?.stop();
  await sim?.stop();
  await sd?.stop();
  if (cache) fs.rmSync(cache, { recursive: true, force: true });
});

describe('agent run on a real systemd --user against the API simulator', () => {
  let keptPid: string;

  it('runs the start-up cleanup first (same decisions and lines), adopts the kept unit, registers the node', async () => {
    keptPid = mainPid(unitOf('kept'));
    expect(Number(keptPid)).toBeGreaterThan(0);
    agent = startAgent(agentArgs(), sd.env);
    await agent.waitFor(/Watching the pods of node \[agent-node\]/);
    const err = agent.stderr();
    expect(err).toContain(`INFO  uyuni_cdk::agent::cleanup] The systemd unit [${unitOf('kept')}] will be kept because a corresponding pod exists.`);
    expect(err).toContain('INFO  uyuni_cdk::agent::cleanup] The systemd unit [default-orphan-main.service] will be removed because no corresponding pod exists.');
    expect(err.indexOf('will be removed because no corresponding pod exists')).toBeLessThan(err.indexOf('Watching the pods'));
    expect(fs.existsSync(path.join(sd.unitDir, 'default-orphan-main.service'))).toBe(false);
    // Adopted, not restarted.
    expect(mainPid(unitOf('kept'))).toBe(keptPid);
    await until('kept Running', () => getPod('kept').status.phase === 'Running');

    const node = sim.get('v1', 'Node', NODE);
    expect(node.metadata.labels['kubernetes.io/arch']).toBe('stackable-linux');
    expect(node.spec.taints).toEqual([
      { key: 'kubernetes.io/arch', value: 'stackable-linux', effect: 'NoSchedule' },
      { key: 'kubernetes.io/arch', value: 'stackable-linux', effect: 'NoExecute' },
    ]);
    expect(node.status.conditions.find((c: any) => c.type === 'Ready')).toMatchObject({ status: 'True', reason: 'KubeletReady' });
    expect(node.status.addresses).toContainEqual({ type: 'InternalIP', address: '10.9.8.7' });
    const lease = sim.get('coordination.k8s.io/v1', 'Lease', NODE, 'kube-node-lease');
    expect(lease.spec).toMatchObject({ holderIdentity: NODE, leaseDurationSeconds: 40 });
    expect(lease.metadata.ownerReferences[0]).toMatchObject({ kind: 'Node', name: NODE, uid: node.metadata.uid });
  });

  it('runs a pod created after start-up: its process writes the marker, its status turns Running with startedAt', async () => {
    const marker = path.join(sd.base, 'web.marker');
    const t0 = Date.now();
    await create(pod('web', { command: ['serve.sh'], env: [{ name: 'MARKER', value: marker }] }));
    await until('the marker', () => fs.existsSync(marker));
    const running = await until('Running', () => getPod('web').status.phase === 'Running' && getPod('web'));
    const cs = running.status.containerStatuses[0];
    expect(cs).toMatchObject({ name: 'main', ready: true, started: true, restartCount: 0 });
    expect(Date.parse(cs.state.running.startedAt)).toBeGreaterThanOrEqual(Math.floor(t0 / 1000) * 1000);
    expect(running.status.hostIP).toBe('10.9.8.7');
    for (const type of ['Ready', 'ContainersReady']) expect(running.status.conditions.find((c: any) => c.type === type).status).toBe('True');
    expect(sd.show(unitOf('web'), 'ActiveState')).toBe('active');
    expect(sd.systemctl('is-enabled', unitOf('web')).trim()).toBe('enabled');
    expect(agent.stderr()).toContain(`INFO  uyuni_cdk::agent::run] The systemd unit [${unitOf('web')}] was started because the pod [default/web] is bound to this node.`);
  });

  it('reports a process that exits 3 as terminated.exitCode 3 (restartPolicy Never: Failed)', async () => {
    await create(pod('three', { command: ['exit3.sh'] }, { restartPolicy: 'Never' }));
    const failed = await until('Failed', () => getPod('three').status.phase === 'Failed' && getPod('three'));
    expect(failed.status.containerStatuses[0].state.terminated).toMatchObject({ exitCode: 3, reason: 'Error' });
    expect(sd.show(unitOf('three'), 'ExecMainStatus')).toBe('3');
  });

  it('stops and removes the unit on `kubectl delete pod`, then deletes the pod object (kubectl returns)', async () => {
    const pid = Number(mainPid(unitOf('web')));
    const r = await kubectl(sim, cache, ['delete', 'pod', 'web', '--timeout=30s']);
    expect(r.stderr).toBe('');
    expect(r.stdout.trim()).toBe('pod "web" deleted');
    expect(getPod('web')).toBeUndefined();
    expect(fs.existsSync(path.join(sd.unitDir, unitOf('web')))).toBe(false);
    expect(sd.show(unitOf('web'), 'ActiveState')).toBe('inactive');
    expect(sd.show(unitOf('web'), 'LoadState')).toBe('not-found');
    expect(() => process.kill(pid, 0)).toThrow();
    // Logged once the DELETE is answered, which kubectl's watch may see first.
    await agent.waitFor(/The pod \[default\/web\] was deleted with grace period 0: none of its units runs any more\./);
    expect(agent.stderr()).toContain(`The systemd unit [${unitOf('web')}] was stopped and removed because the corresponding pod is terminating.`);
  });

  it('gives a hostile pod\'s args and env to the process verbatim', async () => {
    const out = path.join(sd.base, 'hostile.json');
    pkgScript('dump.js', dumperScript(out));
    await create(pod('hostile', {
      command: ['dump.js', ...HOSTILE_ARGS.slice(0, 10)], args: HOSTILE_ARGS.slice(10),
      env: Object.entries(HOSTILE_ENV).map(([name, value]) => ({ name, value })),
    }, { restartPolicy: 'Never' }));
    const dump = await until('the dump', () => fs.existsSync(out) && fs.statSync(out).size > 0 && JSON.parse(fs.readFileSync(out, 'utf8')));
    expect(dump.argv).toEqual([path.join(pkg, 'svc-1.0', 'dump.js'), ...HOSTILE_ARGS]);
    for (const [name, value] of Object.entries(HOSTILE_ENV)) expect([name, dump.env[name]]).toEqual([name, value]);
    expect(dump.env.Y).toBeUndefined();
    await until('Succeeded', () => getPod('hostile').status.phase === 'Succeeded');
  });

  it('keeps a pod whose command is not installed Pending with the reason, writes no unit, and runs it once installed', async () => {
    await create(pod('later', { command: ['later.sh'], env: [{ name: 'MARKER', value: path.join(sd.base, 'later.marker') }] }));
    const pending = await until('CommandNotFound', () => getPod('later').status.containerStatuses?.[0]?.state?.waiting?.reason === 'CommandNotFound' && getPod('later'));
    expect(pending.status.phase).toBe('Pending');
    expect(pending.status.containerStatuses[0].state.waiting.message).toBe(`the command ${path.join(pkg, 'svc-1.0', 'later.sh')} of container main does not exist (is its package installed under ${pkg}?)`);
    expect(fs.existsSync(path.join(sd.unitDir, unitOf('later')))).toBe(false);
    pkgScript('later.sh', '#!/bin/sh\necho started > "$MARKER"\nexec sleep 1d\n');
    // Pending pods are looked at again with each Lease renewal (10 s).
    await until('later Running', () => getPod('later').status.phase === 'Running', 20_000);
    expect(fs.existsSync(path.join(sd.base, 'later.marker'))).toBe(true);
  });

  it('refuses an unrenderable pod with phase Failed and the renderer\'s message', async () => {
    await create(pod('bad', { command: ['../../etc/x'] }));
    const failed = await until('Failed', () => getPod('bad').status.phase === 'Failed' && getPod('bad'));
    expect(failed.status.reason).toBe('UnitRenderError');
    expect(failed.status.message).toMatch(/leaves the package directory/);
  });

  it('neither stops nor starts anything during a 5 s API outage, and recovers (a deletion made meanwhile is carried out)', async () => {
    const units = [unitOf('kept'), unitOf('later')];
    const before = units.map((u) => [mainPid(u), sd.show(u, 'NRestarts')]);
    const logBefore = agent.stderr().length;
    await proxy.down();
    // While the agent cannot see it: pod `kept` is deleted.
    await clients(sim).core.deleteNamespacedPod({ namespace: 'default', name: 'kept' });
    await agent.waitFor(/The API cannot be reached .*the running systemd units are left alone until it answers\./);
    await new Promise((r) => setTimeout(r, 5000));
    expect(units.map((u) => [mainPid(u), sd.show(u, 'NRestarts')])).toEqual(before);
    expect(agent.stderr().slice(logBefore)).not.toMatch(/was (started|stopped|restarted)/);
    await proxy.up();
    await agent.waitFor(/The API answers again/, 30_000);
    // The watch resumes where it stopped: the deletion is seen, the unit removed, the object deleted.
    await until('kept gone', () => !getPod('kept') && !fs.existsSync(path.join(sd.unitDir, unitOf('kept'))), 20_000);
    expect(mainPid(unitOf('later'))).toBe(before[1][0]);
    const marker = path.join(sd.base, 'after.marker');
    await create(pod('after', { command: ['serve.sh'], env: [{ name: 'MARKER', value: marker }] }));
    await until('after runs', () => fs.existsSync(marker));
  });

  it('renews its Lease every 10 s', async () => {
    const first = sim.get('coordination.k8s.io/v1', 'Lease', NODE, 'kube-node-lease').spec.renewTime;
    await until('a renewal', () => sim.get('coordination.k8s.io/v1', 'Lease', NODE, 'kube-node-lease').spec.renewTime !== first, 15_000);
  });

  it('leaves the units running on SIGTERM; a new agent adopts them without a restart (-o json)', async () => {
    const pid = mainPid(unitOf('after'));
    expect(await agent.stop('SIGTERM')).toBe(0);
    expect(agent.stderr()).toContain('Stopping; the systemd units keep running.');
    expect(mainPid(unitOf('after'))).toBe(pid);
    expect(sd.show(unitOf('after'), 'ActiveState')).toBe('active');

    agent = startAgent(agentArgs('--output', 'json'), sd.env);
    await agent.waitFor(/"action":"watch"/);
    const records = agent.stdout().trim().split('\n').map((l) => JSON.parse(l));
    expect(records.find((r) => r.target === 'uyuni_cdk::agent::cleanup' && r.message.includes(unitOf('after')))?.message).toBe(`The systemd unit [${unitOf('after')}] will be kept because a corresponding pod exists.`);
    expect(records.every((r) => typeof r.time === 'string' && ['INFO', 'WARN', 'ERROR'].includes(r.level))).toBe(true);
    expect(agent.stderr()).toBe('');
    expect(mainPid(unitOf('after'))).toBe(pid);
  });

  it('reports READY to systemd (Type=notify) only after the start-up cleanup', async () => {
    await agent.stop('SIGTERM');
    const log = path.join(sd.base, 'notify-agent.log');
    const bin = UYUNI_CDK;
    execFileSync('systemd-run', ['--user', '--unit', 'notify-agent', '-p', 'Type=notify', '-p', 'NotifyAccess=all', '-p', `StandardError=file:${log}`,
      `--setenv=DBUS_SESSION_BUS_ADDRESS=${sd.busAddress}`, `--setenv=XDG_CONFIG_HOME=${sd.env.XDG_CONFIG_HOME}`, `--setenv=PATH=${process.env.PATH}`,
      '--no-block', process.execPath, bin, 'agent', 'run', ...agentArgs()], { env: sd.env });
    const states: string[] = [];
    await until('active', () => {
      const s = sd.show('notify-agent.service', 'ActiveState');
      if (states[states.length - 1] !== s) states.push(`${s}:${fs.existsSync(log) && fs.readFileSync(log, 'utf8').includes('Watching the pods') ? 'watching' : 'starting'}`);
      return s === 'active';
    }, 30_000);
    // Every time systemd said active, the cleanup was done and the loop watching.
    expect(states.filter((s) => s.startsWith('active')).every((s) => s.endsWith(':watching'))).toBe(true);
    expect(sd.show('notify-agent.service', 'StatusText')).toBe(`watching the pods of node ${NODE}`);
    sd.systemctl('stop', 'notify-agent.service');
    expect(sd.show(unitOf('after'), 'ActiveState')).toBe('active');
  });
});
