import * as fs from 'fs';
import * as path from 'path';
import { Failure, validate } from 'superstruct';
import { planSchema, REQUIRED } from './schema';
import { LABELS, MANAGED_BY, ObjectRef, Plan, PLAN_FORMAT_VERSION, Step } from './types';
import { WAIT_CONDITIONS } from './waits';

/** A plan directory that cannot be used: the runtime exits 2 on it. */
export class PlanError extends Error {}

/**
 * The plan index, beside the step files. Not `plan.json`: `kubectl apply -f dist/<plan>/` reads
 * every `.json`, `.yaml` and `.yml` file of a directory as manifests and refuses the index; an
 * extension kubectl, Argo CD and Flux ignore keeps the directory appliable as it is.
 */
export const PLAN_INDEX = 'uyuni.plan';
/** The index's name before 0.2: a directory holding only this was synthesized by an older uyuni-cdk. */
export const LEGACY_PLAN_INDEX = 'plan.json';

/** How many problems one message lists. */
const SHOWN = 3;

/** Size caps, checked (lstat, then fstat) before anything is read. */
export const MAX_PLAN_INDEX_BYTES = 4 * 1024 * 1024;
export const MAX_STEP_FILE_BYTES = 16 * 1024 * 1024;

const MIB = 1024 * 1024;

/**
 * Reads `<dir>/<name>`: a plain file name (no `/`, no `..`) of a regular file inside the
 * directory, not a symbolic link, a device or a FIFO, at most `cap` bytes. Nothing outside the
 * directory is opened; the size is checked before reading. Throws PlanError naming the file.
 */
export function readInside(dir: string, name: string, cap: number): string {
  if (!isPlainFileName(name)) throw new PlanError(`${path.join(dir, PLAN_INDEX)}: ${JSON.stringify(name)} must be a plain file name in the plan directory`);
  const real = realDir(dir);
  const file = path.join(real, name);
  const shown = path.join(dir, name);
  checkRegular(file, shown, cap);
  let fd: number;
  try {
    // O_NOFOLLOW: a symbolic link swapped in after the lstat is refused, not followed;
    // O_NONBLOCK: a FIFO swapped in does not block the open.
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
  } catch (e) {
    throw new PlanError(`${shown}: cannot be opened (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) throw new PlanError(`${shown} is not a regular file`);
    if (st.size > cap) throw new PlanError(`${shown} is larger than ${cap / MIB} MiB (${st.size} bytes)`);
    // Sized by the fstat, grown (to cap + 1 at most) only if the file grows while read: a buffer
    // of the cap for every file was 16 MiB zeroed per step file, a tenth of a `status`.
    let buf = Buffer.allocUnsafe(st.size + 1);
    let n = 0;
    for (let r = 1; r > 0 && n <= cap;) {
      if (n === buf.length) buf = Buffer.concat([buf], Math.min(cap + 1, 2 * buf.length));
      r = fs.readSync(fd, buf, n, buf.length - n, null);
      n += r;
    }
    if (n > cap) throw new PlanError(`${shown} is larger than ${cap / MIB} MiB (it grew while read)`);
    return buf.subarray(0, n).toString('utf8');
  } finally {
    fs.closeSync(fd);
  }
}

/** A name for a file directly in the plan directory: no separator, not `.` or `..`, no NUL. */
export function isPlainFileName(name: string): boolean {
  return name.length > 0 && name.length <= 255 && !/[/\\\0]/.test(name) && name !== '.' && name !== '..' && !name.includes('..');
}

function realDir(dir: string): string {
  let real: string;
  try {
    real = fs.realpathSync(dir);
  } catch {
    throw new PlanError(`${dir}: no such plan directory`);
  }
  if (!fs.statSync(real).isDirectory()) throw new PlanError(`${dir}: not a directory (a plan directory holds ${PLAN_INDEX} and its step files)`);
  return real;
}

/** lstat: exists, a regular file (no symlink, device, FIFO, directory), at most `cap` bytes, really inside its directory. */
function checkRegular(file: string, shown: string, cap: number): void {
  let st: fs.Stats;
  try {
    st = fs.lstatSync(file);
  } catch {
    throw new PlanError(`${shown}: does not exist`);
  }
  if (st.isSymbolicLink()) throw new PlanError(`${shown} is a symbolic link: step files and ${PLAN_INDEX} must be regular files inside the plan directory`);
  if (!st.isFile()) throw new PlanError(`${shown} is not a regular file`);
  if (st.size > cap) throw new PlanError(`${shown} is larger than ${cap / MIB} MiB (${st.size} bytes)`);
  if (path.dirname(fs.realpathSync(file)) !== path.dirname(file)) throw new PlanError(`${shown} is not inside the plan directory`);
}

/** Reads and checks `<dir>/uyuni.plan` (PLAN_INDEX); every step file it names must be a regular file beside it. */
export function readPlan(dir: string): Plan {
  const file = path.join(dir, PLAN_INDEX);
  const raw = parseIndex(dir);
  const fail = (problem: string) => new PlanError(`${file}: ${problem}`);
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw fail(`must hold a JSON object (the plan index), not ${describeValue(raw)}`);
  const version = (raw as { formatVersion?: unknown }).formatVersion;
  if (version !== PLAN_FORMAT_VERSION) {
    throw fail(`formatVersion ${JSON.stringify(version)} is not supported (this runtime reads ${PLAN_FORMAT_VERSION})`);
  }
  const [error, plan] = validate(raw, planSchema);
  if (error) {
    const problems = [...new Set(error.failures().map((f) => describeFailure(f, raw)))];
    const more = problems.length > SHOWN ? `; and ${problems.length - SHOWN} more` : '';
    throw fail(problems.slice(0, SHOWN).join('; ') + more);
  }
  const names = new Set<string>();
  for (const [i, step] of plan.steps.entries()) {
    if (names.has(step.name)) throw fail(`steps[${i}]: step name ${step.name} is used twice`);
    names.add(step.name);
  }
  const problems = checkPlan(plan);
  if (problems.length) {
    const more = problems.length > SHOWN ? `; and ${problems.length - SHOWN} more` : '';
    throw fail(problems.slice(0, SHOWN).join('; ') + more);
  }
  const real = realDir(dir);
  for (const [i, step] of plan.steps.entries()) {
    const at = path.join(real, step.file);
    try {
      fs.lstatSync(at);
    } catch {
      throw fail(`steps[${i}] (${step.name}) names ${step.file}, which does not exist`);
    }
    try {
      checkRegular(at, path.join(dir, step.file), MAX_STEP_FILE_BYTES);
    } catch (e) {
      throw fail(`steps[${i}] (${step.name}).file: ${(e as Error).message}`);
    }
  }
  return plan;
}

/** DNS-1123 label: plan, step and namespace names (they become path components and label values). */
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const isDnsLabel = (s: string) => s.length <= 63 && DNS_LABEL.test(s);
const dnsLabel = (field: string, v: string) => (isDnsLabel(v) ? [] : [`${field} ${JSON.stringify(v)} must be a DNS label (lower-case letters, digits and '-', at most 63)`]);

/** Label keys and values as the API server accepts them: nothing that changes a label selector's meaning. */
const LABEL_NAME = /^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
function isLabelKey(k: string): boolean {
  const i = k.lastIndexOf('/');
  const [prefix, name] = i < 0 ? [undefined, k] : [k.slice(0, i), k.slice(i + 1)];
  return (prefix === undefined || (prefix.length <= 253 && DNS_SUBDOMAIN.test(prefix))) && name.length <= 63 && LABEL_NAME.test(name);
}
const isLabelValue = (v: string) => v === '' || (v.length <= 63 && LABEL_NAME.test(v));

/**
 * Cluster-scoped kinds the runtime knows; any kind named `Cluster…` counts too. Of them only the
 * plan's own Namespace may be in a plan (docs/plan-format.md, "Where objects may live").
 */
export const CLUSTER_SCOPED_KINDS: ReadonlySet<string> = new Set([
  'Namespace', 'Node', 'PersistentVolume', 'StorageClass', 'CustomResourceDefinition', 'APIService',
  'MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration', 'ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding',
  'MutatingAdmissionPolicy', 'MutatingAdmissionPolicyBinding', 'PriorityClass', 'RuntimeClass', 'CSIDriver', 'CSINode', 'VolumeAttachment',
  'IngressClass', 'CertificateSigningRequest', 'FlowSchema', 'PriorityLevelConfiguration', 'ComponentStatus', 'VolumeSnapshotClass',
  'VolumeAttributesClass', 'DeviceClass', 'ResourceSlice', 'ClusterTrustBundle', 'SelfSubjectReview', 'TokenReview',
  'SubjectAccessReview', 'SelfSubjectAccessReview', 'SelfSubjectRulesReview',
]);
const isClusterScoped = (kind: string) => CLUSTER_SCOPED_KINDS.has(kind) || kind.startsWith('Cluster');

const show = (r: ObjectRef) => `${r.kind}/${r.name}${r.namespace ? ` (${r.namespace})` : ''}`;

/**
 * Where an object may live: a namespaced object in the plan's namespace; cluster-scoped only the
 * plan's own Namespace (no namespace field). Returns the problem, or undefined.
 */
export function scopeProblem(r: ObjectRef, namespace: string): string | undefined {
  if (r.kind === 'Namespace' && r.namespace === undefined && r.name === namespace) return undefined;
  if (isClusterScoped(r.kind) || r.namespace === undefined) return `${show(r)}: a cluster-scoped object other than the plan's Namespace ${namespace} (only that Namespace may be cluster-scoped; namespaced objects name their namespace)`;
  if (r.namespace !== namespace) return `${show(r)} is not in the plan's namespace ${namespace}`;
  return undefined;
}

/** What the schema cannot say: safe names, a selector that selects only ours, objects only in the plan's namespace. */
function checkPlan(plan: Plan): string[] {
  const problems: string[] = [];
  problems.push(...dnsLabel('name', plan.name), ...dnsLabel('namespace', plan.namespace));
  const sel = Object.entries(plan.selector);
  if (plan.selector[LABELS.managedBy] !== MANAGED_BY) problems.push(`selector must name ${LABELS.managedBy}: ${MANAGED_BY} (it selects what status and destroy touch)`);
  for (const [k, v] of sel) {
    if (!isLabelKey(k)) problems.push(`selector key ${JSON.stringify(k)} is not a label key`);
    else if (!isLabelValue(v)) problems.push(`selector value ${JSON.stringify(v)} of ${k} is not a label value`);
  }
  const ns = plan.namespace;
  for (const [i, s] of plan.steps.entries()) {
    const at = `steps[${i}] (${s.name})`;
    problems.push(...dnsLabel(`${at}.name`, s.name));
    if (!isPlainFileName(s.file)) problems.push(`${at}.file ${JSON.stringify(s.file)} must be a plain file name in the plan directory (no "/", no "..")`);
    const scoped = (field: string, r: ObjectRef) => {
      const p = scopeProblem(r, ns);
      if (p) problems.push(`${at}.${field} ${p}`);
    };
    s.objects.forEach((r, j) => scoped(`objects[${j}]`, r));
    s.waits.forEach((w, j) => scoped(`waits[${j}].object`, w.object));
    s.actions.forEach((a, j) => scoped(`actions[${j}].object`, a.object));
    if (s.factsFrom) scoped('factsFrom', s.factsFrom);
    s.requires.forEach((r, j) => {
      if (r.namespace !== ns) problems.push(`${at}.requires[${j}].namespace ${JSON.stringify(r.namespace)} is not the plan's namespace ${ns}`);
      if (r.madeBy !== undefined && !plan.steps.slice(0, i).some((e) => e.name === r.madeBy)) {
        problems.push(`${at}.requires[${j}].madeBy ${JSON.stringify(r.madeBy)} is not an earlier step of the plan`);
      }
      // one entry per object, with all its keys: the run reads and writes a step's requirements together
      const first = s.requires.findIndex((o) => o.kind === r.kind && o.name === r.name);
      if (first < j) problems.push(`${at}.requires[${j}] names ${r.kind} ${r.name} again (requires[${first}]): list its keys in one entry`);
    });
    if (s.fileSummary) problems.push(...summaryProblems(at, s));
  }
  return problems;
}

const DIGEST = /^sha256:[0-9a-f]{64}$/;

/** A step's file summary: digests as synth writes them, a spec hash for exactly the step's Jobs. */
function summaryProblems(at: string, s: Step): string[] {
  const summary = s.fileSummary!;
  const problems: string[] = [];
  if (!DIGEST.test(summary.sha256)) problems.push(`${at}.fileSummary.sha256 ${JSON.stringify(summary.sha256)} must be "sha256:" and 64 hex digits`);
  const jobs = new Set(s.objects.filter((r) => r.kind === 'Job').map((r) => r.name));
  for (const [name, hash] of Object.entries(summary.jobSpecHashes)) {
    if (!jobs.has(name)) problems.push(`${at}.fileSummary.jobSpecHashes names ${name}, which is not a Job of the step's objects`);
    else if (!DIGEST.test(hash)) problems.push(`${at}.fileSummary.jobSpecHashes.${name} ${JSON.stringify(hash)} must be "sha256:" and 64 hex digits`);
  }
  for (const name of jobs) if (!(name in summary.jobSpecHashes)) problems.push(`${at}.fileSummary.jobSpecHashes has no spec hash for Job ${name}`);
  return problems;
}

function parseIndex(dir: string): unknown {
  const file = path.join(dir, PLAN_INDEX);
  try {
    fs.lstatSync(file);
  } catch {
    throw new PlanError(whyNoIndex(dir));
  }
  const text = readInside(dir, PLAN_INDEX, MAX_PLAN_INDEX_BYTES);
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new PlanError(`${file}: not valid JSON (${(e as Error).message})`);
  }
}

function describeValue(v: unknown): string {
  if (v === null) return 'null';
  return Array.isArray(v) ? 'a list' : `a ${typeof v}`;
}

/** `steps[1] (setup).waits[0].for`: the path of a field, naming each step it passes through. */
function fieldName(p: ReadonlyArray<string | number>, raw: unknown): string {
  const steps = (raw as { steps?: unknown }).steps;
  return p.map((k, i) => {
    if (typeof k !== 'number') return `${i > 0 ? '.' : ''}${k}`;
    const name = i === 1 && p[0] === 'steps' && Array.isArray(steps) ? (steps[k] as { name?: unknown } | null)?.name : undefined;
    return typeof name === 'string' ? `[${k}] (${name})` : `[${k}]`;
  }).join('');
}

/** The words after the field: ours (schema.ts) for values, superstruct's structural ones replaced. */
function problemOf(f: Failure): string {
  if (f.refinement) return f.message;
  if (f.type === 'type' || f.type === 'record') return f.value === undefined ? REQUIRED : `must be ${f.type === 'record' ? 'a map of strings' : 'an object'}, not ${describeValue(f.value)}`;
  if (f.type === 'array') return f.value === undefined ? REQUIRED : `must be a list, not ${describeValue(f.value)}`;
  return f.message;
}

/** The plan's identity: without it nothing can be selected or named. */
const IDENTITY = ['name', 'namespace', 'selector'];

function describeFailure(f: Failure, raw: unknown): string {
  const p = f.path as Array<string | number>;
  const problem = problemOf(f);
  const w = p.indexOf('waits');
  if (w === 2 && p.length > 3) {
    const inside = p.slice(w + 2).join('.');
    return `${fieldName(p.slice(0, w + 2), raw)} needs an object and a "for" of ${WAIT_CONDITIONS.join(', ')} (${inside ? `${inside} ` : ''}${problem})`;
  }
  if (p.length === 1 && IDENTITY.includes(String(p[0]))) return `${p[0]} ${problem}: name, namespace and selector are required`;
  return `${fieldName(p, raw)} ${problem}`;
}

/**
 * The plan directory a command-line argument names: the directory itself, or its index file
 * (`dist/install/uyuni.plan`, or the `plan.json` of 0.1), as users paste either.
 */
export function planDirOf(arg: string): string {
  if (path.basename(arg) !== PLAN_INDEX && path.basename(arg) !== LEGACY_PLAN_INDEX) return arg;
  try {
    if (fs.lstatSync(arg).isDirectory()) return arg;
  } catch {
    // not there: the directory's own check names it
  }
  return path.dirname(arg);
}

/** How many plan directories a folder's refusal names. */
const SHOWN_PLANS = 3;

/** Why `dir` has no plan index: the precise reason for the directories users pass by mistake. */
function whyNoIndex(dir: string): string {
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return `${dir}: no such plan directory`;
  }
  if (names.includes(LEGACY_PLAN_INDEX)) {
    return `${dir}: synthesized by an older uyuni-cdk (its index is ${LEGACY_PLAN_INDEX}, now ${PLAN_INDEX}): synthesize again (npm run synth)`;
  }
  if (names.some((n) => n.endsWith('.service'))) {
    return `${dir}: holds systemd unit files, not a plan: they are installed on a node (docs/agent.md), not run`;
  }
  const plans = names.filter((n) => fs.existsSync(path.join(dir, n, PLAN_INDEX))).sort();
  // a few named; a folder of many (a temp folder) is counted, not listed in one endless line
  const shown = plans.slice(0, SHOWN_PLANS).map((n) => path.join(dir, n));
  if (plans.length > SHOWN_PLANS) return `${dir}: not a plan directory but holds ${plans.length} plans, e.g. ${shown.join(', ')}: pass one of them`;
  if (plans.length) return `${dir}: not a plan directory but holds plans: ${shown.join(', ')}`;
  return `${dir}: not a plan directory (no ${PLAN_INDEX} here): synthesize first (npm run synth) and pass dist/<plan>`;
}
