/**
 * The node agent as a real node (issue 37, point 4): `uyuni-cdk agent run` on a real
 * `systemd --user` (a private dbus-daemon and user manager in a temp dir, test/agent/harness; never
 * `--system`) registers its Node with kube-apiserver, renews its Lease, runs the pods that
 * `uyuni-cdk run dist/node-services` binds to it as units, reports their status through the pods'
 * status subresource, deletes their objects when they terminate, and at start-up removes the
 * units no pod accounts for. The fake kubelet's node (fake-node-0) ignores pods of other nodes.
 */
import * as fs from 'fs';
import * as path from 'path';
import { cli } from '../runtime/e2e/harness';
import { AgentProcess, startAgent } from '../agent/harness/agent-process';
import { startUserSystemd, UserSystemd } from '../agent/harness/systemd-user';
import { plane, until } from './helpers';
import { auditEvents, auditSize, ROOT } from './plane/plane';

const p = plane();
const DIST = path.join(ROOT, 'dist', 'node-services');
/** dist/node-services binds its pod to this node (nodeServices.pods[].nodeName). */
const NODE = 'localhost';
const POD = 'cleanup-test-ok';
const SLICE_UNIT = (name: string): string => `[Unit]\nDescription=${name}\n\n[Service]\nExecStart=/bin/sleep 1d\nSlice=system-stackable.slice\n\n[Install]\nWantedBy=default.target`;

let sd: UserSystemd;
let agent: AgentProcess | undefined;
let pkg: string;
const ns = p.namespace('agentnode');
const unit = `${ns}-${POD}-noop-service.service`;

async function get(args: string[]): Promise<any> {
  const r = await p.kubectl([...args, '-o', 'json']);
  if (r.code !== 0) throw new Error(r.err);
  return JSON.parse(r.out);
}

function start(): AgentProcess {
  agent = startAgent(['--node', NODE, '--session', '--package-dir', pkg, '--kubeconfig', p.kubeconfig, '--node-ip', '127.0.0.1', '--resync', '3600'], sd.env);
  return agent;
}

/** A pod bound to the node by name, as dist/node-services's; with or without its toleration of the node's taints. */
function boundPod(name: string, tolerating: boolean): object {
  return {
    apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: ns },
    spec: {
      nodeName: NODE,
      ...(tolerating ? { tolerations: [{ key: 'kubernetes.io/arch', operator: 'Equal', value: 'stackable-linux' }] } : {}),
      containers: [{ name: 'noop-service', image: 'noop-service:1.0.0', command: ['noop-service-1.0.0/start.sh'] }],
    },
  };
}

/** Plants a unit of the agent's slice that no pod accounts for, running. */
function orphan(name: string): string {
  const file = `${ns}-${name}-main.service`;
  fs.writeFileSync(path.join(sd.unitDir, file), SLICE_UNIT(file));
  sd.systemctl('daemon-reload');
  sd.systemctl('start', file);
  expect(sd.show(file, 'ActiveState')).toBe('active');
  return file;
}

beforeAll(async () => {
  // Another run's Node of this name (a crashed suite) would carry its own state: start clean.
  await p.kubectl(['delete', 'node', NODE, '--ignore-not-found', '--wait=true']);
  // The plan's step creates no Namespace (its pods go to `default` unless -n says otherwise).
  expect((await p.kubectl(['create', 'namespace', ns])).code).toBe(0);
  sd = await startUserSystemd();
  pkg = path.join(sd.base, 'packages');
  const dir = path.join(pkg, 'noop-service-1.0.0', 'noop-service-1.0.0');
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'start.sh'), `#!/bin/sh\necho "$KUBECONFIG" > ${path.join(sd.base, 'started')}\nexec sleep 1d\n`, { mode: 0o755 });
}, 60_000);

afterAll(async () => {
  await agent?.stop('SIGKILL');
  await sd?.stop();
  await p.kubectl(['delete', 'namespace', ns, '--wait=false']);
  // The Node is this suite's own (its Lease goes with it: owner reference).
  await p.kubectl(['delete', 'node', NODE, '--ignore-not-found', '--wait=false']);
});

describe('agent run as a real node of kube-apiserver', () => {
  let orphan1: string;

  it('removes at start-up the units no pod accounts for, then registers its Node and Lease', async () => {
    orphan1 = orphan('orphan');
    const a = start();
    await a.waitFor(/Watching the pods of node \[localhost\]/, 30_000);
    expect(a.stderr()).toContain(`INFO  uyuni_cdk::agent::cleanup] The systemd unit [${orphan1}] will be removed because no corresponding pod exists.`);
    expect(fs.existsSync(path.join(sd.unitDir, orphan1))).toBe(false);
    expect(sd.show(orphan1, 'LoadState')).toBe('not-found');

    const node = await get(['get', 'node', NODE]);
    expect(node.metadata.labels).toMatchObject({ 'kubernetes.io/arch': 'stackable-linux', 'kubernetes.io/hostname': NODE, 'kubernetes.io/os': 'linux' });
    expect(node.spec.taints).toEqual(expect.arrayContaining([
      { key: 'kubernetes.io/arch', value: 'stackable-linux', effect: 'NoSchedule' },
      { key: 'kubernetes.io/arch', value: 'stackable-linux', effect: 'NoExecute' },
    ]));
    expect(node.status.conditions.find((c: any) => c.type === 'Ready')).toMatchObject({ status: 'True', reason: 'KubeletReady' });
    expect(node.status.addresses).toContainEqual({ type: 'InternalIP', address: '127.0.0.1' });
  });

  it('renews its Lease in kube-node-lease: a MicroTime renewTime, owned by the Node', async () => {
    const node = await get(['get', 'node', NODE]);
    const first = await until('the Lease', () => get(['-n', 'kube-node-lease', 'get', 'lease', NODE]));
    expect(first.spec).toMatchObject({ holderIdentity: NODE, leaseDurationSeconds: 40 });
    expect(first.spec.renewTime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    expect(first.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'Node', name: NODE, uid: node.metadata.uid })]);
    // Renewed every 10 s.
    const renewed = await until('a renewal', async () => {
      const l = await get(['-n', 'kube-node-lease', 'get', 'lease', NODE]);
      return l.spec.renewTime !== first.spec.renewTime && l;
    }, 20_000);
    expect(Date.parse(renewed.spec.renewTime)).toBeGreaterThan(Date.parse(first.spec.renewTime));
  });

  it('runs the pod `run dist/node-services` binds to it as a unit and reports Running through pods/status', async () => {
    const mark = auditSize(p.dir);
    const run = await cli('run', DIST, { kubeconfig: p.kubeconfig, namespace: ns, yes: true });
    expect({ code: run.code, err: run.err }).toEqual({ code: 0, err: expect.any(String) });
    await until('the marker', async () => fs.existsSync(path.join(sd.base, 'started')));
    expect(fs.readFileSync(path.join(sd.base, 'started'), 'utf8').trim()).toBe(p.kubeconfig);
    expect(sd.show(unit, 'ActiveState')).toBe('active');
    const pod = await until('Running', async () => {
      const o = await get(['-n', ns, 'get', 'pod', POD]);
      return o.status.phase === 'Running' && o;
    });
    expect(pod.spec.nodeName).toBe(NODE);
    expect(pod.status.hostIP).toBe('127.0.0.1');
    expect(pod.status.containerStatuses).toEqual([expect.objectContaining({ name: 'noop-service', ready: true, started: true, restartCount: 0, state: { running: { startedAt: expect.any(String) } } })]);
    for (const type of ['Ready', 'ContainersReady']) expect(pod.status.conditions.find((c: any) => c.type === type).status).toBe('True');
    // Written by the agent through the status subresource, never by another node's kubelet.
    const statusWrites = auditEvents(p.dir, mark).filter((e) => e.objectRef?.namespace === ns && e.objectRef?.name === POD && e.objectRef?.subresource === 'status');
    expect(statusWrites.length).toBeGreaterThan(0);
    expect(statusWrites.every((e) => e.verb === 'patch' && e.user.username === 'kubernetes-admin' && e.responseStatus?.code === 200)).toBe(true);
  });

  it('is where kube-scheduler places a pod that selects and tolerates systemd-backed nodes but names no node', async () => {
    // dist/node-services's pod with the nodeName taken out: its nodeSelector and toleration alone.
    const planned = await get(['-n', ns, 'get', 'pod', POD]);
    const { nodeName, ...spec } = planned.spec;
    expect(nodeName).toBe(NODE);
    const pod = {
      apiVersion: 'v1', kind: 'Pod', metadata: { name: 'scheduled', namespace: ns },
      spec: { nodeSelector: spec.nodeSelector, tolerations: spec.tolerations, containers: spec.containers.map((c: any) => ({ name: c.name, image: c.image, command: c.command })) },
    };
    expect(pod.spec.nodeSelector).toEqual({ 'kubernetes.io/arch': 'stackable-linux' });
    expect((await p.kubectl(['create', '-f', '-'], JSON.stringify(pod))).code).toBe(0);
    // The Node's allocatable pods make room for it (without them: "1 Too many pods").
    const running = await until('scheduled Running', async () => {
      const o = await get(['-n', ns, 'get', 'pod', 'scheduled']);
      return o.status.phase === 'Running' && o;
    }, 30_000);
    expect(running.spec.nodeName).toBe(NODE);
    expect(running.status.conditions.find((c: any) => c.type === 'PodScheduled').status).toBe('True');
    expect(sd.show(`${ns}-scheduled-noop-service.service`, 'ActiveState')).toBe('active');
    const node = await get(['get', 'node', NODE]);
    expect(node.status.allocatable.pods).toBe('110');
  });

  it('after a restart keeps and adopts the pods\' units (no restart, no status write) and removes the new orphan', async () => {
    const pid = sd.show(unit, 'MainPID');
    expect(await agent!.stop('SIGTERM')).toBe(0);
    const mark = auditSize(p.dir);
    const orphan2 = orphan('orphan2');
    const a = start();
    await a.waitFor(/Watching the pods of node \[localhost\]/, 30_000);
    expect(a.stderr()).toContain(`INFO  uyuni_cdk::agent::cleanup] The systemd unit [${unit}] will be kept because a corresponding pod exists.`);
    expect(a.stderr()).toContain(`INFO  uyuni_cdk::agent::cleanup] The systemd unit [${ns}-scheduled-noop-service.service] will be kept because a corresponding pod exists.`);
    expect(a.stderr()).toContain(`INFO  uyuni_cdk::agent::cleanup] The systemd unit [${orphan2}] will be removed because no corresponding pod exists.`);
    expect(fs.existsSync(path.join(sd.unitDir, orphan2))).toBe(false);
    expect(sd.show(unit, 'MainPID')).toBe(pid);
    // A pod bound to the node after the restart: once its status is written, the adopted pods'
    // unchanged status would have been written too if the agent took kube-apiserver's answer
    // (`lastProbeTime: null` on every condition) for a different status.
    expect((await p.kubectl(['create', '-f', '-'], JSON.stringify(boundPod('barrier', true)))).code).toBe(0);
    await a.waitFor(new RegExp(`The status of pod \\[${ns}/barrier\\] was updated: Running`));
    const stored = await get(['-n', ns, 'get', 'pod', POD]);
    expect(stored.status.conditions.every((c: any) => c.lastProbeTime === null)).toBe(true);
    const written = auditEvents(p.dir, mark).filter((e) => e.objectRef?.namespace === ns && e.objectRef?.subresource === 'status').map((e) => e.objectRef?.name);
    expect([...new Set(written)]).toEqual(['barrier']);
    expect(a.stderr()).not.toMatch(/The status of pod \[[^\]]*\/(cleanup-test-ok|scheduled)\] was updated/);
  });

  it('stops the unit of a pod that does not tolerate its NoExecute taint: kube-controller-manager evicts it at once', async () => {
    const mark = auditSize(p.dir);
    expect((await p.kubectl(['create', '-f', '-'], JSON.stringify(boundPod('intruder', false)))).code).toBe(0);
    await agent!.waitFor(new RegExp(`The pod \\[${ns}/intruder\\] was deleted with grace period 0`));
    expect(fs.existsSync(path.join(sd.unitDir, `${ns}-intruder-noop-service.service`))).toBe(false);
    const deletes = auditEvents(p.dir, mark).filter((e) => e.verb === 'delete' && e.objectRef?.namespace === ns && e.objectRef?.name === 'intruder');
    // The taint eviction controller's graceful delete, then the agent's final one.
    expect(deletes.map((e) => `${e.user.username} ${e.responseStatus?.code}`)).toEqual([expect.stringMatching(/kube-controller-manager 200$/), 'kubernetes-admin 200']);
  });

  it('stops and removes the unit on `kubectl delete pod`, then deletes the object with grace period 0', async () => {
    const mark = auditSize(p.dir);
    const r = await p.kubectl(['-n', ns, 'delete', 'pod', POD, '--timeout=60s']);
    expect({ code: r.code, err: r.err }).toEqual({ code: 0, err: '' });
    expect(fs.existsSync(path.join(sd.unitDir, unit))).toBe(false);
    expect(sd.show(unit, 'LoadState')).toBe('not-found');
    await agent!.waitFor(new RegExp(`The pod \\[${ns}/${POD}\\] was deleted with grace period 0`));
    const deletes = auditEvents(p.dir, mark).filter((e) => e.verb === 'delete' && e.objectRef?.namespace === ns && e.objectRef?.name === POD);
    // kubectl's (30 s grace period: the pod's), then the agent's final one.
    expect(deletes.map((e) => e.responseStatus?.code)).toEqual([200, 200]);
    expect((await p.kubectl(['-n', ns, 'get', 'pod', POD])).code).not.toBe(0);
  });
});
