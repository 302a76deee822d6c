/**
 * A real Kubernetes control plane on 127.0.0.1 for the cluster suites and for people:
 * etcd, kube-apiserver, kube-controller-manager (every controller) and kube-scheduler, built from
 * the Go module proxy by .ci/control-plane/build.sh, plus the fake kubelet (./kubelet.ts).
 *
 *   npm run --silent cluster -- up DIR     everything ready; DIR/kubeconfig is the admin's
 *   npm run --silent cluster -- status DIR which component runs, which died (with its log's tail)
 *   npm run --silent cluster -- down DIR   stops every process it started, by PID, removes DIR
 *
 * Every process is started detached with its output in DIR/logs/<name>.log and its PID in
 * DIR/plane.json; `down` stops only PIDs whose command line is still the one it started.
 */
import { execFileSync, spawn } from 'child_process';
import * as fs from 'fs';
import * as https from 'https';
import * as net from 'net';
import * as path from 'path';
import { kubeconfig, makePki, Pki } from './pki';

export const ROOT = path.join(__dirname, '..', '..', '..');
const COMPONENTS = ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'kubelet'] as const;
type Component = (typeof COMPONENTS)[number];
export const NODE_NAME = 'fake-node-0';

export interface PlaneState {
  version: string;
  bin: string;
  server: string;
  kubeconfig: string;
  ports: Record<'etcd' | 'etcdPeer' | 'apiserver' | 'kcm' | 'scheduler' | 'kubelet', number>;
  pids: Partial<Record<Component, number>>;
  /** The command line each PID was started with, to never signal a PID the system reused. */
  argv0: Partial<Record<Component, string>>;
  /** The command line each component was started with, so that `restart` starts it again the same way. */
  commands?: Partial<Record<Component, { cmd: string; args: string[] }>>;
  createdDir: boolean;
}

const statePath = (dir: string) => path.join(dir, 'plane.json');
export const readState = (dir: string): PlaneState => JSON.parse(fs.readFileSync(statePath(dir), 'utf8')) as PlaneState;
const writeState = (dir: string, s: PlaneState) => fs.writeFileSync(statePath(dir), `${JSON.stringify(s, null, 2)}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const say = (line: string) => process.stderr.write(`cluster: ${line}\n`);

/** The folder with etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kubectl: built once, then reused. */
export function binaries(): string {
  const out = execFileSync('bash', [path.join(ROOT, '.ci', 'control-plane', 'build.sh')], { stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' });
  return out.trim().split('\n').pop()!;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

function alive(pid: number | undefined, argv0: string | undefined): boolean {
  if (!pid) return false;
  try {
    const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    if (/\) Z /.test(stat)) return false;
    return !argv0 || cmd.includes(argv0);
  } catch {
    return false;
  }
}

export function logTail(dir: string, name: string, lines = 15): string {
  try {
    return fs.readFileSync(path.join(dir, 'logs', `${name}.log`), 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

function start(dir: string, state: PlaneState, name: Component, cmd: string, args: string[]): void {
  fs.mkdirSync(path.join(dir, 'logs'), { recursive: true });
  const log = fs.openSync(path.join(dir, 'logs', `${name}.log`), 'a');
  const child = spawn(cmd, args, { detached: true, stdio: ['ignore', log, log], cwd: dir });
  fs.closeSync(log);
  child.unref();
  state.pids[name] = child.pid;
  state.argv0[name] = name === 'kubelet' ? args[0] : cmd;
  state.commands = { ...state.commands, [name]: { cmd, args } };
  writeState(dir, state);
}

/** Stops one component by its PID (SIGTERM, SIGKILL after 10 s); false when it was not running. */
async function stopPid(pid: number | undefined, argv0: string | undefined): Promise<boolean> {
  if (!alive(pid, argv0)) return false;
  process.kill(pid!, 'SIGTERM');
  const end = Date.now() + 10_000;
  while (alive(pid, argv0) && Date.now() < end) await sleep(100);
  if (alive(pid, argv0)) process.kill(pid!, 'SIGKILL');
  while (alive(pid, argv0)) await sleep(50);
  return true;
}

/**
 * Stops kube-apiserver (by its PID, as `down` does) and leaves the rest running: the other
 * components, and clients, see connections refused until `startApiServer`.
 */
export async function stopApiServer(dir: string): Promise<void> {
  const state = readState(dir);
  if (!(await stopPid(state.pids['kube-apiserver'], state.argv0['kube-apiserver']))) throw new Error(`kube-apiserver of ${dir} is not running`);
}

/** Starts kube-apiserver again with the command line `up` gave it (same port, certificates, etcd), and waits for /readyz. */
export async function startApiServer(dir: string): Promise<void> {
  const state = readState(dir);
  const c = state.commands?.['kube-apiserver'];
  if (!c) throw new Error(`${dir}: plane.json has no command line for kube-apiserver (a plane started before restarts were possible)`);
  if (alive(state.pids['kube-apiserver'], state.argv0['kube-apiserver'])) throw new Error(`kube-apiserver of ${dir} is already running`);
  start(dir, state, 'kube-apiserver', c.cmd, c.args);
  const pki = pkiOf(dir);
  await waitFor(dir, state, 'kube-apiserver', '/readyz', async () => (await get(`${state.server}/readyz`, pki)).status === 200, 120_000);
}

/** Waits for `ready()`; fails at once, with the component's log, when its process is gone. */
async function waitFor(dir: string, state: PlaneState, name: Component, what: string, ready: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    if (await ready().catch(() => false)) return;
    if (!alive(state.pids[name], state.argv0[name])) throw new Error(`${name} exited before ${what}; its log (${path.join(dir, 'logs', `${name}.log`)}) ends:\n${logTail(dir, name)}`);
    if (Date.now() > end) throw new Error(`${name}: no ${what} after ${timeoutMs / 1000}s; its log ends:\n${logTail(dir, name)}`);
    await sleep(250);
  }
}

/** What `get` needs of the PKI `up` made in DIR/pki: the CA and the admin's certificate. */
function pkiOf(dir: string): Pick<Pki, 'ca' | 'admin'> {
  const f = (name: string) => path.join(dir, 'pki', name);
  return { ca: f('ca.crt'), admin: { cert: f('admin.crt'), key: f('admin.key') } };
}

function get(url: string, pki?: Pick<Pki, 'ca' | 'admin'>): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const mod = u.protocol === 'https:' ? https : require('http');
    const opts = pki ? { ca: fs.readFileSync(pki.ca), cert: fs.readFileSync(pki.admin.cert), key: fs.readFileSync(pki.admin.key) } : {};
    const req = mod.get(url, { ...opts, timeout: 5000 }, (res: import('http').IncomingMessage) => {
      let body = '';
      res.on('data', (d) => { body += d; });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
  });
}

export function kubectl(state: PlaneState, args: string[], input?: string): string {
  return execFileSync(path.join(state.bin, 'kubectl'), ['--kubeconfig', state.kubeconfig, ...args], { encoding: 'utf8', input, stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
}

/**
 * The audit policy: writes only (reads and watches are the bulk and say nothing about changes), at
 * Metadata level; `allVerbs` (a benchmark's own plane, to count every request): reads too.
 */
function auditPolicy(dir: string, allVerbs = false): string {
  const file = path.join(dir, 'audit-policy.json');
  fs.writeFileSync(file, JSON.stringify({
    apiVersion: 'audit.k8s.io/v1', kind: 'Policy', omitStages: ['RequestReceived'],
    rules: allVerbs ? [{ level: 'Metadata' }] : [{ level: 'None', verbs: ['get', 'list', 'watch'] }, { level: 'Metadata' }],
  }));
  return file;
}

export interface AuditEvent {
  stage: string;
  verb: string;
  requestURI: string;
  user: { username: string };
  userAgent?: string;
  objectRef?: { resource?: string; namespace?: string; name?: string; subresource?: string };
  responseStatus?: { code: number };
}

/** The audit log's writes (and reads, with `auditAllVerbs`) (one event each, when answered) from byte `offset` on (`auditSize` marks where a command starts). */
export function auditEvents(dir: string, offset = 0): AuditEvent[] {
  const text = fs.readFileSync(path.join(dir, 'audit.log'), 'utf8').slice(offset);
  return text.split('\n').filter(Boolean).map((l) => JSON.parse(l) as AuditEvent).filter((e) => e.stage === 'ResponseComplete');
}

export const auditSize = (dir: string): number => fs.statSync(path.join(dir, 'audit.log')).size;

export interface UpOptions {
  /** The default StorageClass's volumeBindingMode. @default 'WaitForFirstConsumer' (as kind's and k3s's) */
  volumeBindingMode?: 'Immediate' | 'WaitForFirstConsumer';
  /** Audit every request, reads and watches too (bench/real-plane.bench.ts counts them), not only writes. @default false */
  auditAllVerbs?: boolean;
}

export async function up(dir: string, options: UpOptions = {}): Promise<PlaneState> {
  dir = path.resolve(dir);
  if (fs.existsSync(statePath(dir))) {
    const old = readState(dir);
    if (COMPONENTS.some((c) => alive(old.pids[c], old.argv0[c]))) throw new Error(`a control plane already runs in ${dir}: npm run --silent cluster -- down ${dir}`);
  }
  const createdDir = !fs.existsSync(dir);
  fs.mkdirSync(dir, { recursive: true });
  const bin = binaries();
  const t0 = Date.now();
  const pki = makePki(dir);
  const ports = { etcd: await freePort(), etcdPeer: await freePort(), apiserver: await freePort(), kcm: await freePort(), scheduler: await freePort(), kubelet: await freePort() };
  const server = `https://127.0.0.1:${ports.apiserver}`;
  const state: PlaneState = {
    version: '', bin, server, kubeconfig: path.join(dir, 'kubeconfig'), ports, pids: {}, argv0: {}, createdDir,
  };
  writeState(dir, state);
  try {
    const etcdUrl = `http://127.0.0.1:${ports.etcd}`;
    const peerUrl = `http://127.0.0.1:${ports.etcdPeer}`;
    start(dir, state, 'etcd', path.join(bin, 'etcd'), [
      '--name=uyuni-cdk-test', `--data-dir=${path.join(dir, 'etcd')}`,
      `--listen-client-urls=${etcdUrl}`, `--advertise-client-urls=${etcdUrl}`,
      `--listen-peer-urls=${peerUrl}`, `--initial-advertise-peer-urls=${peerUrl}`, `--initial-cluster=uyuni-cdk-test=${peerUrl}`,
      '--unsafe-no-fsync=true', '--log-level=warn',
    ]);
    await waitFor(dir, state, 'etcd', 'health', async () => /"health":"true"/.test((await get(`${etcdUrl}/health`)).body), 30_000);

    start(dir, state, 'kube-apiserver', path.join(bin, 'kube-apiserver'), [
      `--etcd-servers=${etcdUrl}`, '--bind-address=127.0.0.1', `--secure-port=${ports.apiserver}`,
      // No default route here: without --advertise-address it exits 'Unable to find suitable network
      // address'; a loopback one makes the endpoint reconciler refuse it, hence 'none'.
      '--advertise-address=127.0.0.1', '--endpoint-reconciler-type=none',
      `--tls-cert-file=${pki.apiserver.cert}`, `--tls-private-key-file=${pki.apiserver.key}`, `--client-ca-file=${pki.ca}`,
      '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
      `--service-account-key-file=${pki.saPub}`, `--service-account-signing-key-file=${pki.saKey}`,
      '--service-cluster-ip-range=10.0.0.0/24', '--authorization-mode=RBAC', '--allow-privileged=true',
      '--kubelet-preferred-address-types=InternalIP',
      `--kubelet-client-certificate=${pki.admin.cert}`, `--kubelet-client-key=${pki.admin.key}`,
      '--profiling=false',
      // Every write, with its user and query (dryRun), so a suite can count what a command wrote.
      `--audit-policy-file=${auditPolicy(dir, options.auditAllVerbs)}`, `--audit-log-path=${path.join(dir, 'audit.log')}`, '--audit-log-format=json',
    ]);
    await waitFor(dir, state, 'kube-apiserver', '/readyz', async () => (await get(`${server}/readyz`, pki)).status === 200, 120_000);
    kubeconfig(state.kubeconfig, server, pki.ca, 'admin', pki.admin);
    const own = (c: keyof Pki['components']) => kubeconfig(path.join(dir, 'pki', `${c}.kubeconfig`), server, pki.ca, c, pki.components[c]);
    state.version = JSON.parse((await get(`${server}/version`, pki)).body).gitVersion;
    writeState(dir, state);

    start(dir, state, 'kube-controller-manager', path.join(bin, 'kube-controller-manager'), [
      `--kubeconfig=${own('kube-controller-manager')}`, '--bind-address=127.0.0.1', `--secure-port=${ports.kcm}`,
      '--leader-elect=false', '--controllers=*',
      `--service-account-private-key-file=${pki.saKey}`, `--root-ca-file=${pki.ca}`,
      '--service-cluster-ip-range=10.0.0.0/24', '--use-service-account-credentials=false', '--profiling=false',
      // The default (20/s) throttled the PV binder: binding the 28 claims of the migration's
      // data sync took minutes on a plane shared by several suites.
      '--kube-api-qps=200', '--kube-api-burst=400',
    ]);
    // A configuration file: the client's rate (the default 50/s throttles a plan's 26 claims) and
    // the volume binding's wait for a provisioned claim (600 s by default: a pod whose namespace
    // was deleted while its claims were bound held the scheduling queue for everyone that long).
    const schedulerConfig = path.join(dir, 'kube-scheduler.json');
    fs.writeFileSync(schedulerConfig, JSON.stringify({
      apiVersion: 'kubescheduler.config.k8s.io/v1', kind: 'KubeSchedulerConfiguration',
      clientConnection: { kubeconfig: own('kube-scheduler'), qps: 200, burst: 400 },
      leaderElection: { leaderElect: false },
      profiles: [{ schedulerName: 'default-scheduler', pluginConfig: [{ name: 'VolumeBinding', args: { bindTimeoutSeconds: 60 } }] }],
    }));
    start(dir, state, 'kube-scheduler', path.join(bin, 'kube-scheduler'), [
      `--config=${schedulerConfig}`, '--bind-address=127.0.0.1', `--secure-port=${ports.scheduler}`, '--profiling=false',
    ]);

    // The default StorageClass, served by the fake kubelet's provisioner; the CRDs the plans use.
    kubectl(state, ['apply', '--server-side', '--field-manager=uyuni-cdk-test-plane', '-f', '-'], JSON.stringify({
      apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass',
      metadata: { name: 'standard', annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } },
      provisioner: 'uyuni-cdk.test/fake-kubelet', reclaimPolicy: 'Delete', volumeBindingMode: options.volumeBindingMode ?? 'WaitForFirstConsumer',
    }));
    for (const crds of fs.readdirSync(path.join(ROOT, 'schemas'))) {
      kubectl(state, ['apply', '--server-side', '--field-manager=uyuni-cdk-test-plane', '-f', path.join(ROOT, 'schemas', crds)]);
    }
    kubectl(state, ['wait', '--for=condition=Established', 'crd', '--all', '--timeout=60s']);

    own('kubelet');
    start(dir, state, 'kubelet', process.execPath, [path.join(ROOT, 'scripts', 'cluster.js'), 'kubelet', dir]);
    await waitFor(dir, state, 'kubelet', `node ${NODE_NAME} Ready and schedulable`, async () => {
      const node = JSON.parse(kubectl(state, ['get', 'node', NODE_NAME, '-o', 'json']));
      const ready = node.status?.conditions?.some((c: { type: string; status: string }) => c.type === 'Ready' && c.status === 'True');
      return ready && !(node.spec?.taints ?? []).some((t: { key: string }) => t.key.startsWith('node.kubernetes.io/'));
    }, 90_000);
    await waitFor(dir, state, 'kube-controller-manager', 'ServiceAccount default/default', async () => {
      kubectl(state, ['-n', 'default', 'get', 'serviceaccount', 'default']);
      return true;
    }, 60_000);
    const dead = health(dir);
    if (dead.length) throw new Error(dead.join('\n'));
    say(`${state.version} ready in ${((Date.now() - t0) / 1000).toFixed(1)}s at ${server}; kubeconfig ${state.kubeconfig}`);
    return state;
  } catch (e) {
    await down(dir, { keep: true });
    throw e;
  }
}

/** The components that are not running, each with the tail of its log: a crash is reported, never hidden. */
export function health(dir: string): string[] {
  const state = readState(dir);
  return COMPONENTS.filter((c) => state.pids[c] && !alive(state.pids[c], state.argv0[c]))
    .map((c) => `${c} (pid ${state.pids[c]}) is not running; ${path.join(dir, 'logs', `${c}.log`)} ends:\n${logTail(dir, c)}`);
}

/** Stops every process `up` started (newest first, SIGTERM then SIGKILL after 10 s) and removes its data (`keep`: only the processes). */
export async function down(dir: string, opts: { keep?: boolean } = {}): Promise<string[]> {
  dir = path.resolve(dir);
  if (!fs.existsSync(statePath(dir))) throw new Error(`${dir} holds no control plane (no plane.json)`);
  const state = readState(dir);
  const stopped: string[] = [];
  for (const c of [...COMPONENTS].reverse()) {
    if (await stopPid(state.pids[c], state.argv0[c])) stopped.push(`${c} (pid ${state.pids[c]})`);
  }
  if (!opts.keep) {
    if (state.createdDir) fs.rmSync(dir, { recursive: true, force: true });
    else for (const f of ['pki', 'etcd', 'logs', 'kubeconfig', 'scenario.json', 'scenarios', 'audit.log', 'audit-policy.json', 'kube-scheduler.json', 'plane.json']) fs.rmSync(path.join(dir, f), { recursive: true, force: true });
  }
  return stopped;
}
