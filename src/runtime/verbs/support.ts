/**
 * `uyuni-cdk support`: everything someone helping needs, in one `.tar.gz`, and nothing secret.
 *
 * It holds the plan directory; every object the plan's selector finds (YAML, Secrets as names
 * and keys only); the namespace's Events; each pod's description and container logs (current and
 * previous, the end of each, size-capped); the run directories of the plan (events.jsonl, step
 * logs); the cluster's version and nodes; and, when the server pod runs, the files of the
 * server's own `supportconfig`, run in it through the API's exec (as upstream's test suite
 * collects it: uyuni-project/uyuni testsuite/podman_runner/20_get_server_logs.sh), as a plain
 * directory, not a nested archive (uyuni-tools f7703be6).
 *
 * Nothing secret: Secret values are never written; every text file but the plan copy is scrubbed
 * (src/runtime/verbs/redact.ts) of the values of the namespace's Secret keys that hold secrets and of
 * the kubeconfig user's credentials, as whole tokens and in their encoded forms, and of credential
 * patterns (`password=…`, `Authorization: …`); env values whose names say they are secret are
 * replaced; `redactions.txt` says what was replaced where. When the Secrets cannot be read their
 * values cannot be scrubbed: the bundle is refused, or with `withoutLogs` holds no log and no event
 * text. What else cannot be read (RBAC, a missing CRD) is noted in `notes.txt`, and the rest is
 * still collected.
 */
import { execInContainer } from '../../kube/exec';
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { PassThrough } from 'stream';
import type { KubernetesObject, CoreV1Event as V1Event, V1Deployment, V1Node, V1Pod, V1Secret } from '@kubernetes/client-node';
import { stringify } from 'yaml';
import { EXIT } from '../../plan/exit-codes';
import { defaultRunsDir } from '../../plan/run-defaults';
import type { Plan } from '../../plan/types';
import type { Cluster } from '../../kube/cluster';
import { RuntimeError } from '../../kube/api-errors';
import { safeComponent } from '../apply/step-logs';
import { REDACTED, Redactor, SecretValue } from './redact';
import { Manifest, selectorString as recordSelector } from '../core/manifests';
import { podsOfWorkloads, workloadsOf } from './logs';
import { selectorString } from '../readiness';
import { describeRuns } from '../core/run-dirs';

export interface SupportOptions {
  /** Run the server's supportconfig through exec. */
  readonly exec: boolean;
  /** Where the plan's runs are. @default defaultRunsDir(namespace, plan) */
  readonly runsDir?: string;
  /** Bytes kept of each container log (its end). @default 1 MiB */
  readonly logBytes?: number;
  /** One line per stage, for the terminal. */
  readonly progress: (line: string) => void;
  /**
   * Leave out every log and event text (pod logs, Events, run logs, supportconfig, termination
   * messages): what a bundle may hold when the Secrets, hence what to scrub, cannot be read.
   */
  readonly withoutLogs?: boolean;
}

export interface SupportResult {
  readonly files: number;
  /** What could not be collected, and why. */
  readonly notes: readonly string[];
}

/** The flag that makes a bundle without logs and events, named in the refusal. */
export const WITHOUT_LOGS_FLAG = '--without-logs';
const SECRET_ENV = /pass|secret|token|credential|private|(^|_)key($|_)/i;
const LOG_LINES = 20_000;
/**
 * The server's supportconfig as a plain directory (`-B <batch> -t <dir>`, as uyuni-tools f7703be6
 * "Use plain dir instead of txz for supportconfig": analysis tools cannot read nested archives),
 * in a temporary directory of the container, sent as an uncompressed tar stream, removed. As
 * upstream, a supportconfig that fails in part still counts when it wrote its directory.
 */
export const SUPPORTCONFIG_BATCH = 'uyuni-server-container';
export const SUPPORTCONFIG = ['sh', '-c', [
  'd=$(mktemp -d) || exit 1',
  `supportconfig -B ${SUPPORTCONFIG_BATCH} -t "$d" >&2; s=$?`,
  `if [ "$s" != 0 ]; then echo "supportconfig exited with $s" >&2; fi`,
  `if [ -d "$d/scc_${SUPPORTCONFIG_BATCH}" ]; then tar -C "$d/scc_${SUPPORTCONFIG_BATCH}" -cf - . ; s=$?; elif [ "$s" = 0 ]; then s=1; fi`,
  'rm -rf "$d"; exit $s',
].join('\n')];
/** Where the bundle holds supportconfig's files. */
const SUPPORTCONFIG_DIR = 'server/supportconfig';

/** A Secret as the bundle shows it: its metadata and the names of its keys, with their sizes. */
function secretShape(s: V1Secret): KubernetesObject {
  const keys = { ...(s.data ?? {}), ...Object.fromEntries(Object.entries(s.stringData ?? {}).map(([k, v]) => [k, Buffer.from(v).toString('base64')])) };
  const meta = { ...s.metadata, annotations: undefined, managedFields: undefined };
  return { apiVersion: s.apiVersion, kind: s.kind, metadata: meta, type: s.type, data: Object.fromEntries(Object.entries(keys).map(([k, v]) => [k, `${REDACTED} (${Buffer.from(v, 'base64').length} bytes)`])) } as KubernetesObject;
}

/** Env values whose names say they are secret, anywhere in an object (pods, templates). */
function scrubEnv(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(scrubEnv);
  if (!value || typeof value !== 'object') return value;
  const o = value as Record<string, unknown>;
  if (typeof o.name === 'string' && typeof o.value === 'string' && SECRET_ENV.test(o.name)) return { ...o, value: REDACTED };
  return Object.fromEntries(Object.entries(o).map(([k, v]) => [k, k === 'managedFields' ? undefined : scrubEnv(v)]));
}

/** The staging directory of the bundle: every text written through the redactor. */
class Staging {
  files = 0;

  constructor(readonly root: string, readonly redactor: Redactor) {}

  text(rel: string, content: string): void {
    this.raw(rel, Buffer.from(this.redactor.scrub(content, rel)));
  }

  raw(rel: string, content: Buffer): void {
    const file = path.join(this.root, rel);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, content, { mode: 0o600 });
    this.files++;
  }
}

const yamlDocs = (objs: readonly unknown[]) => objs.map((o) => stringify(o)).join('---\n');

/**
 * Every Secret value the bundle must not contain, by where it is: the namespace's Secrets' keys,
 * the kubeconfig user's credentials; `unreadable` says why the Secrets could not be listed.
 */
async function knownSecrets(cluster: Cluster, namespace: string): Promise<{ values: SecretValue[]; secrets: V1Secret[]; unreadable?: string }> {
  const values: SecretValue[] = [];
  let secrets: V1Secret[] = [];
  let unreadable: string | undefined;
  try {
    secrets = (await cluster.list<V1Secret>({ apiVersion: 'v1', kind: 'Secret', namespace })).items;
  } catch (e) {
    unreadable = (e as Error).message;
  }
  for (const s of secrets) {
    const ref = (key: string) => `${namespace}/${s.metadata?.name}/${key}`;
    for (const [key, v] of Object.entries(s.data ?? {})) values.push({ ref: ref(key), key, value: Buffer.from(v, 'base64').toString('utf8') });
    for (const [key, v] of Object.entries(s.stringData ?? {})) values.push({ ref: ref(key), key, value: v });
  }
  const user = cluster.kc.getCurrentUser();
  const cred = (key: string, value: string | undefined) => value && values.push({ ref: `kubeconfig user ${user?.name}: ${key}`, key, value });
  cred('token', user?.token);
  cred('password', user?.password);
  cred('client-key-data', user?.keyData);
  cred('client-key', user?.keyData && Buffer.from(user.keyData, 'base64').toString('utf8'));
  return { values, secrets, unreadable };
}

/** Log text a pod object carries: its containers' termination messages (their last output). */
function withoutTerminationMessages(pod: unknown): unknown {
  const p = pod as V1Pod;
  const strip = (cs: NonNullable<NonNullable<V1Pod['status']>['containerStatuses']>[number]) => ({
    ...cs,
    state: cs.state?.terminated ? { ...cs.state, terminated: { ...cs.state.terminated, message: undefined } } : cs.state,
    lastState: cs.lastState?.terminated ? { ...cs.lastState, terminated: { ...cs.lastState.terminated, message: undefined } } : cs.lastState,
  });
  if (!p.status) return p;
  return { ...p, status: { ...p.status, containerStatuses: p.status.containerStatuses?.map(strip), initContainerStatuses: p.status.initContainerStatuses?.map(strip) } };
}

/** The kinds of the plan's objects, each once, plus what describes them at run time. */
function kindsOf(plan: Plan): Array<{ apiVersion: string; kind: string }> {
  const seen = new Map<string, { apiVersion: string; kind: string }>();
  for (const o of [...plan.steps.flatMap((s) => s.objects), { apiVersion: 'v1', kind: 'Secret' }, { apiVersion: 'apps/v1', kind: 'ReplicaSet' }, { apiVersion: 'v1', kind: 'ConfigMap' }]) {
    seen.set(`${o.apiVersion} ${o.kind}`, { apiVersion: o.apiVersion, kind: o.kind });
  }
  return [...seen.values()];
}

async function collectObjects(cluster: Cluster, plan: Plan, secrets: readonly V1Secret[], out: Staging, notes: string[]): Promise<void> {
  const labelSelector = recordSelector(plan.selector);
  for (const { apiVersion, kind } of kindsOf(plan).filter((k) => k.kind !== 'Pod')) {
    const file = `objects/${kind}.${apiVersion.replace(/\//g, '_')}.yaml`;
    if (kind === 'Secret') {
      // the plan's and the ones it requires (credentials), as shapes only
      const required = new Set(plan.steps.flatMap((s) => s.requires.filter((r) => r.kind === 'Secret').map((r) => r.name)));
      const ours = secrets.filter((s) => required.has(s.metadata?.name ?? '') || Object.entries(plan.selector).every(([k, v]) => s.metadata?.labels?.[k] === v));
      out.text(file, yamlDocs(ours.map(secretShape)));
      continue;
    }
    try {
      const resource = await cluster.resource(apiVersion, kind);
      const { items } = await cluster.list({ apiVersion, kind, namespace: resource.namespaced ? plan.namespace : undefined, labelSelector });
      out.text(file, yamlDocs(items.map(scrubEnv)));
    } catch (e) {
      notes.push(`${kind} (${apiVersion}): not collected: ${(e as Error).message}`);
    }
  }
}

async function collectEvents(cluster: Cluster, namespace: string, out: Staging, notes: string[]): Promise<V1Event[]> {
  try {
    const { items } = await cluster.list<V1Event>({ apiVersion: 'v1', kind: 'Event', namespace });
    const when = (e: V1Event) => String(e.lastTimestamp ?? e.eventTime ?? e.metadata?.creationTimestamp ?? '');
    items.sort((a, b) => when(a).localeCompare(when(b)));
    out.text('events.yaml', yamlDocs(items.map(scrubEnv)));
    out.text('events.txt', items.map((e) => `${when(e)}  ${e.type ?? ''}  ${e.involvedObject?.kind}/${e.involvedObject?.name}  ${e.reason ?? ''}  ${e.message ?? ''}`).join('\n') + '\n');
    return items;
  } catch (e) {
    notes.push(`Events of ${namespace}: not collected: ${(e as Error).message}`);
    return [];
  }
}

function describe(pod: V1Pod, events: readonly V1Event[] | undefined): string {
  const lines = [`Name: ${pod.metadata?.name}`, `Node: ${pod.spec?.nodeName ?? '(not scheduled)'}`, `Phase: ${pod.status?.phase}`, `Started: ${pod.status?.startTime ?? '-'}`];
  for (const c of pod.status?.conditions ?? []) lines.push(`Condition ${c.type}: ${c.status}${c.reason ? ` (${c.reason}${c.message ? `: ${c.message}` : ''})` : ''}`);
  for (const cs of [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])]) {
    const state = cs.state?.running ? `running since ${cs.state.running.startedAt}` : cs.state?.terminated ? `terminated: exit ${cs.state.terminated.exitCode} ${cs.state.terminated.reason ?? ''}` : `waiting: ${cs.state?.waiting?.reason ?? ''} ${cs.state?.waiting?.message ?? ''}`;
    lines.push(`Container ${cs.name}: ${cs.image}; ${state.trim()}; ready ${cs.ready}; restarts ${cs.restartCount}`);
    if (cs.lastState?.terminated) lines.push(`  last run: exit ${cs.lastState.terminated.exitCode} ${cs.lastState.terminated.reason ?? ''} at ${cs.lastState.terminated.finishedAt}`);
  }
  if (!events) return `${lines.join('\n')}\nEvents: left out (${WITHOUT_LOGS_FLAG})\n`;
  const own = events.filter((e) => e.involvedObject?.kind === 'Pod' && e.involvedObject?.name === pod.metadata?.name);
  if (own.length) lines.push('Events:', ...own.map((e) => `  ${e.type} ${e.reason}: ${e.message}`));
  return `${lines.join('\n')}\n`;
}

/** The end of a log: at most `bytes`, cut at a line start, saying how much was left out. */
function tailOf(text: string, bytes: number): string {
  const buf = Buffer.from(text);
  if (buf.length <= bytes) return text;
  const kept = buf.subarray(buf.length - bytes).toString('utf8');
  return `[${buf.length - bytes} bytes left out]\n${kept.slice(kept.indexOf('\n') + 1)}`;
}

async function collectPods(cluster: Cluster, namespace: string, pods: readonly V1Pod[], events: readonly V1Event[] | undefined, out: Staging, o: SupportOptions, notes: string[]): Promise<void> {
  const bytes = o.logBytes ?? 1024 * 1024;
  for (const [i, pod] of pods.entries()) {
    const name = pod.metadata?.name ?? '';
    o.progress(`pods ${i + 1}/${pods.length}: ${name}`);
    const dir = `pods/${safeComponent(name)}`;
    out.text(`${dir}/describe.txt`, describe(pod, events));
    if (o.withoutLogs) continue;
    for (const cs of [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])]) {
      const runs: Array<[string, boolean]> = [[`${safeComponent(cs.name)}.log`, false]];
      if (cs.restartCount > 0 || cs.lastState?.terminated) runs.push([`${safeComponent(cs.name)}.previous.log`, true]);
      for (const [file, previous] of runs) {
        if (!previous && !cs.state?.running && !cs.state?.terminated) continue;
        try {
          out.text(`${dir}/${file}`, tailOf(await cluster.readLog(namespace, name, cs.name, LOG_LINES, previous), bytes));
        } catch (e) {
          notes.push(`log of ${name}/${cs.name}${previous ? ' (previous)' : ''}: ${(e as Error).message}`);
        }
      }
    }
  }
}

function collectRuns(runsDir: string, out: Staging, withoutLogs: boolean): number {
  let copied = 0;
  const walk = (dir: string, rel: string) => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      if (e.isDirectory()) walk(path.join(dir, e.name), `${rel}/${e.name}`);
      else if (e.isFile()) {
        if (!withoutLogs) out.text(`${rel}/${e.name}`, fs.readFileSync(path.join(dir, e.name), 'utf8'));
        copied++;
      }
    }
  };
  walk(runsDir, 'runs');
  // what each series and attempt is, and how it ended (src/runtime/core/run-dirs.ts)
  if (copied) out.text('runs/index.txt', describeRuns(runsDir));
  return copied;
}

async function collectCluster(cluster: Cluster, out: Staging, notes: string[]): Promise<void> {
  out.text('cluster/version.txt', `${await cluster.ping()}\nserver: ${cluster.server}\n`);
  try {
    const { items } = await cluster.list<V1Node>({ apiVersion: 'v1', kind: 'Node' });
    out.text('cluster/nodes.yaml', yamlDocs(items.map((n) => ({
      name: n.metadata?.name, labels: n.metadata?.labels, kubeletVersion: n.status?.nodeInfo?.kubeletVersion, osImage: n.status?.nodeInfo?.osImage,
      capacity: n.status?.capacity, allocatable: n.status?.allocatable, taints: n.spec?.taints,
      conditions: (n.status?.conditions ?? []).map((c) => ({ type: c.type, status: c.status, reason: c.reason, message: c.message })),
    }))));
  } catch (e) {
    notes.push(`Nodes: not collected: ${(e as Error).message}`);
  }
}

/** The files of the server's own supportconfig, through exec into its running pod. */
async function collectSupportconfig(cluster: Cluster, plan: Plan, objectsOf: (step: string) => Manifest[], pods: readonly V1Pod[], out: Staging, o: SupportOptions, notes: string[]): Promise<void> {
  const server = plan.steps.flatMap((s) => objectsOf(s.name)).find((x) => x.kind === 'Deployment' && x.metadata.name === 'uyuni') as unknown as V1Deployment | undefined;
  if (!server?.spec?.selector) return;
  const sel = selectorString(server.spec.selector);
  const labels = Object.fromEntries(sel.split(',').map((kv) => kv.split('=') as [string, string]));
  const pod = pods.find((p) => p.status?.phase === 'Running' && Object.entries(labels).every(([k, v]) => p.metadata?.labels?.[k] === v));
  if (!pod) {
    notes.push('supportconfig: the server pod does not run; not collected');
    return;
  }
  const container = server.spec.template?.spec?.containers?.[0]?.name ?? 'uyuni';
  o.progress(`supportconfig in pod ${pod.metadata?.name} (the server's own collection: this takes minutes)`);
  const chunks: Buffer[] = [];
  const stdout = new PassThrough();
  stdout.on('data', (c: Buffer) => chunks.push(c));
  const stderr = new PassThrough();
  let err = '';
  stderr.on('data', (c: Buffer) => { err += c.toString('utf8'); });
  const status = await execInContainer(cluster, plan.namespace, pod.metadata?.name ?? '', container, SUPPORTCONFIG, stdout, stderr);
  out.text('server/supportconfig.log', err);
  if (status.status !== 'Success') {
    notes.push(`supportconfig: ${status.message ?? 'failed'} (its output: server/supportconfig.log)`);
    return;
  }
  const problem = unpackSupportconfig(Buffer.concat(chunks), out);
  if (problem) notes.push(`supportconfig: ${problem}`);
}

/**
 * supportconfig's directory, sent as a tar stream, into the bundle as plain files below
 * server/supportconfig/: unpacked into a private directory first, then each regular file copied
 * (text scrubbed as every log is, anything else as it is); links and special files are left out
 * and counted. Returns what went wrong, if anything.
 */
function unpackSupportconfig(stream: Buffer, out: Staging): string | undefined {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'uyuni-cdk-scc-'));
  try {
    const tarFile = path.join(tmp, 'scc.tar');
    const root = path.join(tmp, 'files');
    fs.mkdirSync(root);
    fs.writeFileSync(tarFile, stream);
    const r = spawnSync('tar', ['-xf', tarFile, '-C', root, '--no-same-owner', '--no-same-permissions'], { encoding: 'utf8' });
    if (r.error || r.status !== 0) return `its output is not a tar stream of its directory (tar: ${r.error?.message ?? r.stderr.trim()}); not collected`;
    let copied = 0;
    const skipped: string[] = [];
    const walk = (dir: string) => {
      for (const name of fs.readdirSync(dir).sort()) {
        const file = path.join(dir, name);
        const rel = path.relative(root, file).split(path.sep).join('/');
        const st = fs.lstatSync(file);
        if (st.isDirectory()) walk(file);
        else if (st.isFile()) {
          const content = fs.readFileSync(file);
          if (isText(content)) out.text(`${SUPPORTCONFIG_DIR}/${rel}`, content.toString('utf8'));
          else out.raw(`${SUPPORTCONFIG_DIR}/${rel}`, content);
          copied++;
        } else skipped.push(rel);
      }
    };
    walk(root);
    if (copied === 0) return 'its directory was empty';
    return skipped.length ? `links and special files of its directory left out (${skipped.length}): ${skipped.join(', ')}` : undefined;
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

/** UTF-8 without NUL bytes: a text file, which is scrubbed. */
function isText(b: Buffer): boolean {
  if (b.includes(0)) return false;
  return Buffer.from(b.toString('utf8'), 'utf8').equals(b);
}

/**
 * Collects the bundle into `staging` (a directory of its own). Refuses, before it writes anything,
 * when the Secrets cannot be read (what to scrub is unknown) unless `withoutLogs`.
 */
export async function collectSupport(cluster: Cluster, plan: Plan, planDir: string, objectsOf: (step: string) => Manifest[], staging: string, o: SupportOptions): Promise<SupportResult> {
  const notes: string[] = [];
  o.progress('credentials to scrub, cluster version and nodes');
  const { values, secrets, unreadable } = await knownSecrets(cluster, plan.namespace);
  const ns = plan.namespace;
  if (unreadable && !o.withoutLogs) {
    throw new RuntimeError(`support: the Secrets of namespace ${ns} cannot be read (${unreadable}), so their values cannot be scrubbed from logs and events; nothing was written. `
      + `Grant get/list secrets in namespace ${ns} (kubectl auth can-i list secrets -n ${ns}), or run with ${WITHOUT_LOGS_FLAG} for a bundle without any log or event text`, EXIT.stepFailed);
  }
  const leftOut = o.withoutLogs ? `${WITHOUT_LOGS_FLAG}: no pod log, Event, run log, termination message or supportconfig is in this bundle${unreadable ? ` (the Secrets of ${ns} cannot be read: ${unreadable})` : ''}` : undefined;
  if (leftOut) {
    o.progress(leftOut);
    notes.push(leftOut);
  }
  const out = new Staging(staging, new Redactor(values));
  await collectCluster(cluster, out, notes);
  // the plan as synthesized, not scrubbed: it holds no secret by construction (Secrets are required, never planned with values)
  for (const f of fs.readdirSync(planDir)) {
    if (fs.statSync(path.join(planDir, f)).isFile()) out.raw(`plan/${f}`, fs.readFileSync(path.join(planDir, f)));
  }
  o.progress('objects of the plan');
  await collectObjects(cluster, plan, secrets, out, notes);
  // the pods of the plan's Jobs and Deployments (their templates need not carry the plan's labels)
  const pods = await podsOfWorkloads(cluster, workloadsOf(plan, objectsOf, ['Job', 'Deployment']));
  out.text('objects/Pod.v1.yaml', yamlDocs(pods.map((p) => scrubEnv(o.withoutLogs ? withoutTerminationMessages(p) : p))));
  const events = o.withoutLogs ? undefined : await collectEvents(cluster, ns, out, notes);
  await collectPods(cluster, ns, pods, events, out, o, notes);
  o.progress('run directories');
  const runsDir = o.runsDir ?? defaultRunsDir(ns, plan.name);
  if (collectRuns(runsDir, out, Boolean(o.withoutLogs)) === 0) notes.push(`run directories: none in ${runsDir}`);
  if (o.withoutLogs) notes.push(`supportconfig: not run (${WITHOUT_LOGS_FLAG})`);
  else if (o.exec) await collectSupportconfig(cluster, plan, objectsOf, pods, out, o, notes);
  else notes.push('supportconfig: not run (--no-exec)');
  out.text('notes.txt', notes.length ? `${notes.join('\n')}\n` : 'everything was collected\n');
  out.raw('redactions.txt', Buffer.from(out.redactor.report(leftOut ? [leftOut] : [])));
  return { files: out.files, notes };
}

/** Packs the directory `parent/top` into `file` (.tar.gz) with the system's tar, its entries below `top/`. */
export function pack(parent: string, top: string, file: string): void {
  const r = spawnSync('tar', ['-czf', path.resolve(file), '-C', parent, top], { encoding: 'utf8' });
  if (r.error || r.status !== 0) throw new Error(`tar -czf ${file} failed: ${r.error?.message ?? r.stderr.trim()}`);
}
