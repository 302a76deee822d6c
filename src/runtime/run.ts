/**
 * The step walker: for each step of a plan, in order: resume check of its Jobs, gates, required
 * Secrets/ConfigMaps, actions, server-side apply, then wait (readiness rules, logs, stuck pods,
 * timeouts). The first failure stops the run; later steps are not applied.
 */
import * as fs from 'fs';
import * as path from 'path';
import type { Plan, Step } from '../plan/types';
import { PlanError, readPlan } from '../plan/reader';
import { ApiError, Cluster, refString } from './client';
import { BadInput, RuntimeError, StepFailed } from './errors';
import { Facts, parseFacts } from './facts';
import { evaluateGate } from './gates';
import { StepLogs } from './logs';
import { loadStepObjects, refOf, relocateObject, relocatePlan, specHash, stampForApply } from './manifests';
import type { FailedContainer, Reporter } from './progress';
import { terminations } from './readiness';
import { finishedJobUids, HISTORY_CONFIGMAP, recordFinishedRun } from './history';
import { decideJob, JobDecision } from './resume';
import { satisfyRequirements } from './secrets';
import { StepWaiter } from './waiter';

export interface RunOptions {
  readonly planDir: string;
  readonly cluster: Cluster;
  readonly reporter: Reporter;
  /** @default runs/<plan>-<timestamp> under the working directory */
  readonly runDir?: string;
  /** Steps whose Jobs are deleted (propagationPolicy Background) and re-created. */
  readonly rerun?: readonly string[];
  /** Overall deadline in seconds. @default the plan's deadlineSeconds */
  readonly timeoutSeconds?: number;
  /** Replaces the plan's namespace. */
  readonly namespace?: string;
  /** How long a Job's pod may be stuck (ImagePullBackOff, Unschedulable, ...) before its step fails. @default 120 */
  readonly stuckGraceSeconds?: number;
}

/** Reads a plan directory, with --namespace applied; bad input is exit 2. */
export function loadPlan(planDir: string, namespace?: string): Plan {
  try {
    return relocatePlan(readPlan(planDir), namespace);
  } catch (e) {
    if (e instanceof PlanError) throw new BadInput(e.message);
    throw e;
  }
}

/** The objects of a step as they will be applied (namespace override included). */
export function stepObjects(planDir: string, plan: Plan, original: Plan, step: Step): any[] {
  const origStep = original.steps.find((s) => s.name === step.name)!;
  return loadStepObjects(planDir, origStep).map((o) => relocateObject(o, original.namespace, plan.namespace));
}

export function timestamp(d = new Date()): string {
  return d.toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
}

/** Pods of a Job (by its controller uid), for resumed steps whose waiter never ran. */
async function podsOfJob(cluster: Cluster, job: any): Promise<any[]> {
  const uid = job?.metadata?.uid;
  const { items } = await cluster.list({ apiVersion: 'v1', kind: 'Pod', namespace: job.metadata.namespace, labelSelector: `job-name=${job.metadata.name}` });
  return items.filter((p) => !uid || p.metadata?.labels?.['controller-uid'] === uid || p.metadata?.labels?.['batch.kubernetes.io/controller-uid'] === uid);
}

/**
 * The last lines an earlier run saved for a container (`<runs>/<run>/<step>/<pod>.<container>.log`,
 * newest run first): for a Job that failed before, when its pod's log is gone from the cluster.
 */
function earlierRuns(runDir: string): string[] {
  const runs = path.dirname(runDir);
  try {
    return fs.readdirSync(runs).map((d) => path.join(runs, d)).filter((d) => d !== runDir).sort().reverse();
  } catch {
    return [];
  }
}

const lastLines = (text: string, n = 20) => text.split('\n').filter((l, i, a) => l !== '' || i < a.length - 1).slice(-n);

function savedTail(runDir: string, step: string, pod: string, container: string): string[] {
  for (const d of earlierRuns(runDir)) {
    const f = path.join(d, step, `${pod}.${container}.log`);
    if (fs.existsSync(f)) return lastLines(fs.readFileSync(f, 'utf8'));
  }
  return [];
}

/** When a failed Job's pods are gone: the logs the newest earlier run saved of its pods. */
function savedLogsOfJob(runDir: string, step: string, job: string): FailedContainer[] {
  for (const d of earlierRuns(runDir)) {
    let files: string[];
    try {
      files = fs.readdirSync(path.join(d, step)).filter((f) => f.startsWith(`${job}-`) && f.endsWith('.log'));
    } catch {
      continue;
    }
    if (files.length === 0) continue;
    return files.map((f) => {
      const [pod, container] = f.replace(/\.log$/, '').split('.');
      return { pod, container, reason: `pod gone; log saved in ${path.join(d, step, f)}`, lastLines: lastLines(fs.readFileSync(path.join(d, step, f), 'utf8')) };
    });
  }
  return [];
}

/** Exit code, reason and last log lines of every terminated or stuck container of the Jobs' pods. */
async function failureReport(cluster: Cluster, pods: any[], logs: StepLogs | undefined, runDir: string, step: string): Promise<FailedContainer[]> {
  const out: FailedContainer[] = [];
  for (const p of pods) {
    const terms = terminations(p);
    const waitingCs = [...(p.status?.containerStatuses ?? [])].filter((c: any) => c.state?.waiting);
    for (const t of terms) {
      let lines = logs?.tail(p.metadata.name, t.container);
      if (!lines || lines.length === 0) {
        const text = await cluster.readLog(p.metadata.namespace, p.metadata.name, t.container, 20).catch(() => '');
        lines = text.split('\n').filter((l, i, a) => l !== '' || i < a.length - 1);
      }
      if (lines.length === 0) lines = savedTail(runDir, step, p.metadata.name, t.container);
      out.push({ pod: p.metadata.name, container: t.container, exitCode: t.exitCode, reason: t.reason, message: t.message, lastLines: lines.slice(-20) });
    }
    for (const c of waitingCs) {
      // A crash-looping container waits for its next start: how its last run ended, and what it printed.
      const last = c.lastState?.terminated;
      const lines = last ? (await cluster.readLog(p.metadata.namespace, p.metadata.name, c.name, 20, true).catch(() => '')).split('\n').filter((l, i, a) => l !== '' || i < a.length - 1) : [];
      out.push({
        pod: p.metadata.name, container: c.name, ...(last ? { exitCode: last.exitCode } : {}), reason: c.state.waiting.reason,
        message: c.state.waiting.message ?? (last ? `last run: ${last.reason ?? 'terminated'}` : undefined), lastLines: lines,
      });
    }
  }
  return out;
}

export async function readFacts(cluster: Cluster, job: any): Promise<Facts> {
  const pods = (await podsOfJob(cluster, job)).filter((p) => p.status?.phase === 'Succeeded');
  const facts: Facts = {};
  for (const p of pods) {
    for (const c of p.spec?.containers ?? []) Object.assign(facts, parseFacts(await cluster.readLog(p.metadata.namespace, p.metadata.name, c.name)));
  }
  return facts;
}

/** Runs a plan; returns the exit code (0 done, 1 step failed, 2 bad input, 3 unreachable). */
export async function runPlan(o: RunOptions): Promise<number> {
  const started = Date.now();
  const r = o.reporter;
  let runDone = false;
  try {
    const original = loadPlan(o.planDir);
    const plan = relocatePlan(original, o.namespace);
    for (const s of o.rerun ?? []) {
      if (!plan.steps.some((x) => x.name === s)) throw new BadInput(`--rerun ${s}: no such step (steps: ${plan.steps.map((x) => x.name).join(', ')})`);
    }
    // Parse every step file before touching the cluster: a broken plan applies nothing.
    const objectsOf = new Map(plan.steps.map((s) => [s.name, stepObjects(o.planDir, plan, original, s)]));
    await o.cluster.ping();

    const runId = `${plan.name}-${timestamp()}`;
    const runDir = o.runDir ?? path.join(process.cwd(), 'runs', runId);
    fs.mkdirSync(runDir, { recursive: true });
    r.recordTo(path.join(runDir, 'events.jsonl'));
    r.emit({ type: 'run-start', plan: plan.name, runId, runDir, steps: plan.steps.length, server: o.cluster.server });

    const deadline = started + (o.timeoutSeconds ?? plan.deadlineSeconds) * 1000;
    const facts: Facts = {};
    const total = plan.steps.length;
    const finished = await finishedJobUids(o.cluster, plan.namespace);
    for (const [i, step] of plan.steps.entries()) {
      await runStep({ ...o, plan, step, index: i + 1, total, objects: objectsOf.get(step.name)!, runId, runDir, deadline, facts, finished });
    }
    // Every step is done: a failure to write the history is worth a line, not a failed run.
    try {
      await recordFinishedRun(o.cluster, plan, runId);
      r.emit({ type: 'action', step: '(run)', action: 'record finished run', object: `ConfigMap ${plan.namespace}/${HISTORY_CONFIGMAP}`, result: 'done' });
    } catch (e) {
      r.emit({ type: 'action', step: '(run)', action: 'record finished run', object: `ConfigMap ${plan.namespace}/${HISTORY_CONFIGMAP}`, result: `failed: ${(e as Error).message}` });
    }
    r.emit({ type: 'run-done', status: 'done', exitCode: 0, elapsedSeconds: (Date.now() - started) / 1000 });
    runDone = true;
    return 0;
  } catch (e) {
    const code = e instanceof RuntimeError ? e.exitCode : 1;
    const message = e instanceof Error ? e.message : String(e);
    if (!runDone) r.emit({ type: 'run-done', status: 'failed', exitCode: code, elapsedSeconds: (Date.now() - started) / 1000, message });
    return code;
  } finally {
    r.close();
  }
}

interface StepContext extends RunOptions {
  readonly plan: Plan;
  readonly step: Step;
  readonly index: number;
  readonly total: number;
  readonly objects: any[];
  readonly runId: string;
  readonly runDir: string;
  readonly deadline: number;
  readonly facts: Facts;
  /** Uids of Jobs from finished runs: history, not a half-done run. */
  readonly finished: ReadonlySet<string>;
}

async function runStep(c: StepContext): Promise<void> {
  const { cluster, reporter: r, step } = c;
  const t0 = Date.now();
  const n = { step: step.name, index: c.index, total: c.total };
  const elapsed = () => (Date.now() - t0) / 1000;
  const fail = async (reason: string, pods: any[] = [], logs?: StepLogs, saved: FailedContainer[] = []): Promise<never> => {
    const report = await failureReport(cluster, pods, logs, c.runDir, step.name);
    r.emit({ type: 'step-failed', ...n, elapsedSeconds: elapsed(), reason, pods: report.length ? report : saved });
    throw new StepFailed(step.name, `step ${step.name}: ${reason}`);
  };
  const rerun = (c.rerun ?? []).includes(step.name);

  // Resume: look at the step's Jobs before deciding anything else.
  const jobs = c.objects.filter((x) => x.kind === 'Job');
  const decisions = new Map<string, { decision: JobDecision; existing: any }>();
  for (const job of jobs) {
    const existing = await cluster.get(refOf(job));
    decisions.set(job.metadata.name, { decision: decideJob(existing, specHash(job), rerun, step.name, c.finished), existing });
  }
  for (const [name, { decision, existing }] of decisions) {
    if (decision.action === 'refuse') {
      r.emit({ type: 'step-start', ...n, description: step.description });
      await fail(decision.why, decision.failed ? await podsOfJob(cluster, existing) : [], undefined,
        decision.failed ? savedLogsOfJob(c.runDir, step.name, name) : []);
    }
  }
  const all = [...decisions.values()];
  if (jobs.length > 0 && all.every((d) => d.decision.action === 'skip')) {
    r.emit({ type: 'step-skip', ...n, reason: `Job${jobs.length > 1 ? 's' : ''} ${jobs.map((j) => j.metadata.name).join(', ')} already Complete with the same spec` });
    if (step.factsFrom) await gatherFacts(c, decisions.get(step.factsFrom.name)?.existing);
    return;
  }

  r.emit({ type: 'step-start', ...n, description: step.description });
  for (const g of step.gates) {
    const res = evaluateGate(g, c.facts);
    r.emit({ type: 'gate', step: step.name, ok: res.ok, detail: res.detail });
    if (!res.ok) await fail(`gate refused: ${res.detail}`);
  }
  try {
    await satisfyRequirements(cluster, c.plan, step.name, step.requires, r);
  } catch (e) {
    if (e instanceof StepFailed) await fail(e.message);
    throw e;
  }
  for (const a of step.actions) {
    if (a.type === 'scale') {
      const there = await cluster.get(a.object);
      if (there) await cluster.mergePatch(a.object, { spec: { replicas: a.replicas } });
      r.emit({ type: 'action', step: step.name, action: `scale to ${a.replicas}`, object: refString(a.object), result: there ? 'done' : 'not present, nothing to scale' });
    } else {
      const gone = !(await cluster.delete(a.object));
      r.emit({ type: 'action', step: step.name, action: 'delete', object: refString(a.object), result: gone ? 'not present' : 'deleting' });
    }
  }

  // Jobs to re-create: delete (Background, so their pods go too) and wait until gone.
  const toRecreate = jobs.filter((j) => decisions.get(j.metadata.name)!.decision.action === 'recreate');
  for (const j of toRecreate) {
    const d = decisions.get(j.metadata.name)!.decision as { why: string };
    await cluster.delete(refOf(j), 'Background');
    r.emit({ type: 'action', step: step.name, action: 'delete (propagationPolicy Background)', object: refString(refOf(j)), result: d.why });
  }
  if (toRecreate.length) {
    const gone = await new StepWaiter({
      cluster, waits: toRecreate.map((j) => ({ object: refOf(j), for: 'deleted' as const })), jobs: [],
      deadline: Math.min(c.deadline, t0 + step.timeoutSeconds * 1000), deadlineReason: 'timed out deleting the old Job',
      stuckGraceMs: Infinity, onProgress: (b) => r.emit({ type: 'waiting', ...n, elapsedSeconds: elapsed(), blockers: b }),
    }).run();
    if (!gone.ok) await fail(gone.reason!);
  }

  const applied: any[] = [];
  for (const obj of c.objects) {
    const d = obj.kind === 'Job' ? decisions.get(obj.metadata.name)!.decision : undefined;
    const ref = refString(refOf(obj));
    if (d?.action === 'attach') {
      r.emit({ type: 'apply', step: step.name, object: ref, result: 'already running with the same spec: attached' });
      continue;
    }
    if (d?.action === 'skip') {
      r.emit({ type: 'apply', step: step.name, object: ref, result: 'already Complete with the same spec: skipped' });
      continue;
    }
    try {
      applied.push(await cluster.apply(stampForApply(obj, c.runId)));
    } catch (e) {
      if (e instanceof ApiError) {
        const causes = e.causes.length ? ` (${e.causes.join('; ')})` : '';
        await fail(`apply ${ref} refused: ${e.message}${causes}`);
      }
      if (e instanceof RuntimeError) await fail(e.message);
      throw e;
    }
    r.emit({ type: 'apply', step: step.name, object: ref, result: d?.action === 'recreate' ? 're-created' : 'applied' });
  }

  const logs = new StepLogs(cluster, c.runDir, step.name, r);
  const stepDeadline = t0 + step.timeoutSeconds * 1000;
  const waiter = new StepWaiter({
    cluster,
    waits: step.waits,
    jobs: jobs.map(refOf),
    logs,
    deadline: Math.min(stepDeadline, c.deadline),
    deadlineReason: stepDeadline <= c.deadline ? `timed out after ${step.timeoutSeconds}s (the step's timeout)` : 'the run\'s overall deadline passed',
    stuckGraceMs: (c.stuckGraceSeconds ?? 120) * 1000,
    onProgress: (b, pods) => r.emit({ type: 'waiting', ...n, elapsedSeconds: elapsed(), blockers: b, ...(pods.length ? { pods } : {}) }),
    initial: applied,
  });
  const outcome = await waiter.run();
  if (!outcome.ok) {
    // A failed container's stream ends by itself; a stuck or hanging one never does.
    await logs.drain(200);
    const pods = [...(outcome.failedJobs ?? []).flatMap((j) => waiter.jobPods.get(j) ?? []), ...(outcome.failedPods ?? [])];
    logs.stop();
    await fail(outcome.reason!, pods, logs);
  }
  // The pod watch and the Job watch are separate streams: the Job's Complete can arrive before
  // the last pod update. Read the pods once more unless every one seen has finished, so no
  // container's log is missed.
  for (const j of jobs) {
    const seen = waiter.jobPods.get(j.metadata.name) ?? [];
    const job = waiter.jobObject(j.metadata.name);
    const expected = (job?.status?.succeeded ?? 0) + (job?.status?.failed ?? 0);
    const finished = seen.filter((p) => p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed');
    if (job && finished.length < expected) logs.observe(await podsOfJob(cluster, job));
  }
  // Terminated containers close their log streams; give them a moment to flush.
  await logs.drain(2000);
  logs.stop();
  if (step.factsFrom) await gatherFacts(c, await cluster.get(step.factsFrom));
  r.emit({ type: 'step-done', ...n, elapsedSeconds: elapsed() });
}

async function gatherFacts(c: StepContext, job: any): Promise<void> {
  if (!job) return;
  const f = await readFacts(c.cluster, job);
  Object.assign(c.facts, f);
  fs.writeFileSync(path.join(c.runDir, 'facts.json'), JSON.stringify(c.facts, null, 2) + '\n');
  c.reporter.emit({ type: 'facts', step: c.step.name, facts: f });
}

