/**
 * The plan walker: reads the plan directory (every step file parsed before the cluster is
 * touched), decides with `plan`'s own computation (src/runtime/decide/plan.ts) before its first
 * write (a finished flow's data step or a change of the server's identity is refused, the
 * destructive changes are shown and must be approved: confirm.ts), then runs each step in order
 * (src/runtime/steps/), then records the finished run, flow and identity (history.ts, record.ts).
 * The first failure stops the run; later steps are not applied.
 */
import * as fs from 'fs';
import * as path from 'path';
import type { KubernetesObject, V1Job } from '@kubernetes/client-node';
import { EndingSignal, EXIT, SIGNAL_EXIT } from '../../plan/exit-codes';
import { defaultRunsDir, RUN_DEFAULTS } from '../../plan/run-defaults';
import type { ObjectRef, Plan } from '../../plan/types';
import { applySetOf, groupKind, writeParent } from '../core/applyset';
import { Cluster, refString } from '../../kube/cluster';
import { approve, ApprovalOptions } from './confirm';
import { destructiveChanges } from '../decide/destructive';
import { ApiSilent, BadInput, RuntimeError } from '../../kube/api-errors';
import { StepFailed } from '../core/errors';
import { finishedJobUids, finishedRunEntry, HISTORY_CONFIGMAP } from '../safety/history';
import type { DecisionFlags, PlanResult } from '../decide/plan-result';
import { DecisionReads, planSteps } from '../decide/plan';
import { checkPodSecurity } from '../core/pod-security';
import { namespaceTerminating } from '../readiness/v1_namespace';
import { recordPlanFinished } from '../safety/record';
import { planDigest, planDrift, SavedPlan } from '../decide/saved-plan';
import { Manifest, refOf } from '../core/manifests';
import { Connection, nextCommand } from './next-command';
import { openPlanDir } from '../core/plan-dir';
import { memberKinds, pruneCandidates } from '../decide/prune';
import { addTallies, ObjectId, objectId, RunEvent, RunSink, RunTally, tallyOf } from '../core/events';
import { jobPhase } from '../readiness/batch_v1_job';
import { Locked, RunLock } from '../safety/lock';
import { adopt, guardRun, refuseTakeoversAndLost, SafeguardOptions } from './safeguards';
import { listSeries, openAttempt, pruneSeries } from '../core/run-dirs';
import { RunContext, runStep } from './steps';
import { ReportedStepFailure } from './steps/context';
import { notesEvent } from './steps/finish';
import { unmetRefusal } from './steps/preflight';
import { missingPermissions, permissionRefusal } from '../safety/permissions';
import { targetOf } from '../core/target';

export interface RunOptions extends ApprovalOptions, SafeguardOptions {
  readonly planDir: string;
  readonly cluster: Cluster;
  readonly reporter: RunSink;
  /** This attempt's directory, as given (no series, no retention). @default `<defaultRunsDir(namespace, plan)>/<series>/<run id>` (src/runtime/core/run-dirs.ts) */
  readonly runDir?: string;
  /** The run series kept in the default runs directory after the run. @default RUN_DEFAULTS.keepRuns */
  readonly keepRuns?: number;
  /** How the user reached the cluster: what the next command after a failure repeats. @default none given */
  readonly connection?: Connection;
  /** Called with what ended a failed run, after its run-done event (the CLI shows its stack with --debug). */
  readonly onFailure?: (e: unknown) => void;
  /** Overall deadline in seconds. @default the plan's deadlineSeconds */
  readonly timeoutSeconds?: number;
  /** Replaces the plan's namespace. */
  readonly namespace?: string;
  /** How long a Job's pod may be stuck (ImagePullBackOff, Unschedulable, ...) before its step fails. @default RUN_DEFAULTS.stuckGraceSeconds */
  readonly stuckGraceSeconds?: number;
  /**
   * What decides the run, passed whole: `--rerun` (steps whose Jobs are deleted, propagationPolicy
   * Background, and re-created), `--no-prune`, `--purge-volumes`, `--adopt`, the `--allow-…`
   * flags. With `saved`, the saved plan's flags, always (src/runtime/decide/plan-result.ts). @default none
   */
  readonly flags?: DecisionFlags;
  /** `run FILE`: apply exactly this saved plan, with its flags and namespace. */
  readonly saved?: SavedPlan;
  /** Filled in as the run goes: what `interruptRun` reports when a signal ends it. */
  readonly state?: RunState;
}

/** Where a run is, for a signal that ends it (SIGINT, SIGTERM, SIGHUP). */
export interface RunState {
  started?: number;
  begun?: RunContext;
  /** The step under way and its Jobs. */
  step?: { readonly name: string; readonly jobs: readonly ObjectRef[] };
  /** run-done was emitted: nothing more to say. */
  ended?: boolean;
}

/** How long a signal's report may wait for the cluster: the process must end. */
const INTERRUPT_READ_MS = 2000;

/** The Jobs of the step under way that still run in the cluster (read once, briefly). */
async function stillRunning(cluster: Cluster, jobs: readonly ObjectRef[]): Promise<Array<{ object: ObjectId; stop: string }>> {
  const read = Promise.all(jobs.map(async (ref) => ({ ref, job: await cluster.get<V1Job>(ref).catch(() => undefined) })));
  const timeout = new Promise<[]>((resolve) => setTimeout(() => resolve([]), INTERRUPT_READ_MS).unref());
  const found = await Promise.race([read, timeout]);
  return found
    .filter(({ job }) => job && !['complete', 'failed'].includes(jobPhase(job)))
    .map(({ ref }) => ({ object: objectId(ref), stop: `kubectl -n ${ref.namespace} delete job ${ref.name}` }));
}

/**
 * A signal ends the run (the CLI exits after this): run-done `interrupted`, with what still runs
 * in the cluster (the step's Jobs go on: a data sync keeps copying) and the command that resumes.
 * Nothing to undo: each step is idempotent or resumable. The lock is the caller's to release.
 */
export async function interruptRun(o: RunOptions, signal: EndingSignal): Promise<void> {
  const s = o.state;
  if (!s || s.ended) return;
  s.ended = true;
  const running = s.step ? await stillRunning(o.cluster, s.step.jobs) : [];
  o.reporter.emit({
    type: 'run-done', status: 'interrupted', exitCode: SIGNAL_EXIT[signal], signal, elapsedSeconds: s.started ? (Date.now() - s.started) / 1000 : 0,
    ...(running.length ? { stillRunning: running } : {}),
    ...(s.begun ? { runDir: s.begun.runDir, next: nextCommand(o.planDir, s.begun.plan, o.connection ?? {}, undefined, false) } : {}),
  });
}

/** The UTC time to the millisecond, `20261201T101500.123Z`: run ids sort by it (src/runtime/core/run-dirs.ts). */
export function timestamp(d = new Date()): string {
  return d.toISOString().replace(/[-:]/g, '');
}

interface Started {
  readonly run: RunContext;
  readonly objectsOf: ReadonlyMap<string, Manifest[]>;
  /** The prune deletes shown (and approved) before the first write: only these are deleted. */
  readonly approvedPrunes: ReadonlySet<string>;
  readonly lock: RunLock;
}

/** The run's decision flags: a saved plan's own, else those given. */
const flagsOf = (o: RunOptions): DecisionFlags => o.saved?.flags ?? o.flags ?? {};

/**
 * Before the first write, under the lock, as `plan` decides (one verdict: plan-result.ts): a
 * saved plan's verdict compared with the one made now, what is refused outright (an object of
 * another owner, credentials beside kept data, a finished flow's data step, an identity change
 * without its flag, an unmet requirement), then the destructive changes, approved or not; then
 * what the run takes over is marked.
 */
async function decideBeforeWriting(
  o: RunOptions, plan: RunContext['plan'], objects: ReadonlyMap<string, Manifest[]>, namespaceExists: boolean, seen: Map<string, KubernetesObject | undefined>, reads: DecisionReads,
): Promise<PlanResult> {
  const decided = await planSteps(o.cluster, plan, (s) => objects.get(s) ?? [], { flags: flagsOf(o), seen, reads, diff: true, namespaceExists, holdsLock: true, podSecurity: false });
  // a parent of another tool: refused before the question and the first step
  if (reads.parentRefused) throw reads.parentRefused;
  const drift = o.saved ? planDrift(o.saved.result, decided) : [];
  if (drift.length) {
    throw new RuntimeError(`the cluster changed since the plan was saved (${o.saved!.savedAt}): ${drift.join('; ')}; nothing was done: make and review a new plan (uyuni-cdk plan --out)`, EXIT.stepFailed);
  }
  refuseTakeoversAndLost(decided);
  // every requirement of the whole plan and the gates decided now, all at once (steps/preflight.ts)
  const refused = unmetRefusal(decided.unmet, decided.refusals, decided.namespaceFirst);
  if (refused) throw new RuntimeError(refused, EXIT.stepFailed);
  // an upgrade's take-overs are among them (destructive.ts `adopt`)
  await approve(destructiveChanges(decided), { ...o, savedPlan: o.saved !== undefined }, o.reporter);
  // the first write: the run goes on, so what it takes over is marked now (never by a refused run)
  await adopt(o.cluster, decided, new Map([...objects.values()].flat().map((m) => [refString(refOf(m)), refOf(m)])), o.reporter);
  return decided;
}

/**
 * What the dry runs before the first write found unchanged (bookkeeping labels apart): their
 * apply is not sent, so a run over an installed plan writes nothing (kube-apiserver stores a
 * server-side apply that only moves the run label as a new resourceVersion of every object).
 */
function unchangedObjects(decided: PlanResult): ReadonlySet<string> {
  return new Set(decided.steps.flatMap((s) => s.objects).filter((x) => x.action === 'unchanged' && x.detail === undefined).map((x) => x.object));
}

/** What the dry runs before the first write found changed in a field the server keeps once set: re-created. */
function recreatedObjects(decided: PlanResult): ReadonlyMap<string, string> {
  return new Map(decided.steps.flatMap((s) => s.objects).filter((x) => x.action === 'recreate' && x.immutable).map((x) => [x.object, x.detail ?? 're-created']));
}

/** The default runs directory, the series this attempt is in and the attempt's directory (none with `--run-dir`): retention after the run. */
interface RunDirs { runs?: string; series?: string; attempt?: string }

/** Everything before the first step: the plan read and checked, the cluster reached, the run directory made. */
async function startRun(o: RunOptions, started: number, dirs: RunDirs): Promise<Started> {
  const { dir, plan, objectsOf } = openPlanDir(o.planDir, o.namespace);
  if (o.saved && planDigest(dir, plan) !== o.saved.digest) {
    throw new BadInput(`${dir} changed since the plan was saved (${o.saved.savedAt}): nothing was done; make and review a new plan (uyuni-cdk plan --out)`);
  }
  for (const s of flagsOf(o).rerun ?? []) {
    if (!plan.steps.some((x) => x.name === s)) throw new BadInput(`--rerun ${s}: no such step (steps: ${plan.steps.map((x) => x.name).join(', ')})`);
  }
  // Parse every step file before touching the cluster: a broken plan applies nothing.
  const objects = new Map(plan.steps.map((s) => [s.name, objectsOf(s.name)]));
  await o.cluster.ping();
  if (o.saved && o.saved.server !== o.cluster.server) {
    throw new BadInput(`the saved plan was made against ${o.saved.server}, not ${o.cluster.server}: nothing was done`);
  }
  const runId = `${plan.name}-${timestamp()}`;
  let runDir = o.runDir;
  if (runDir) fs.mkdirSync(runDir, { recursive: true });
  else {
    dirs.runs = defaultRunsDir(plan.namespace, plan.name);
    const attempt = openAttempt(dirs.runs, runId, plan);
    dirs.series = attempt.series;
    dirs.attempt = attempt.dir;
    runDir = attempt.dir;
  }
  o.reporter.recordTo(path.join(runDir, 'events.jsonl'));
  o.reporter.emit({ type: 'run-start', plan: plan.name, runId, runDir, steps: plan.steps.length, ...targetOf(o.cluster) });
  // what the user may not do, asked of the API server before the lock, the first write (permissions.ts);
  // after run-start, so that a cluster failing these reads leaves its run-done in events.jsonl too
  const missing = await missingPermissions(o.cluster, plan, (s) => objects.get(s) ?? []);
  if (missing.length) throw new RuntimeError(permissionRefusal(missing, plan.namespace), EXIT.stepFailed);
  // whether the namespace is being deleted (refused before the lock), read beside the PodSecurity check: one round trip
  const terminating = namespaceTerminating(o.cluster, plan.namespace);
  terminating.catch(() => undefined);
  // pods PodSecurity admission would refuse: said before the lock, the first write (the run goes on: the level may change meanwhile)
  // (not beside the permissions: its dry runs are requests a user refused for them does not send,
  // test/cluster/rbac.test.ts)
  const podSecurity = await checkPodSecurity(o.cluster, plan, (s) => objects.get(s) ?? []);
  if (podSecurity) o.reporter.emit({ type: 'pod-security', report: podSecurity });
  // the lock (deferred past the namespace step of a first install), what is refused outright
  // (src/runtime/apply/safeguards.ts), then what plan decides, asked before the first write
  const { lock, namespaceExists } = await guardRun(o.cluster, plan, runId, o.reporter, o, terminating);
  try {
    const set = applySetOf(plan);
    // what each object was before the run: its apply then says created, updated or unchanged
    const before = new Map<string, KubernetesObject | undefined>();
    // the ApplySet parent (another tool's is refused before the question) and the records (both
    // places, and the evidence when they are gone) as the decision read them: under the lock no
    // other run writes them
    const reads: DecisionReads = {};
    const decided = await decideBeforeWriting(o, plan, objects, namespaceExists, before, reads);
    const sources = reads.sources!;
    const run: RunContext = {
      cluster: o.cluster, reporter: o.reporter, plan, runId, runDir, planDir: o.planDir, connection: o.connection ?? {},
      deadline: started + (o.timeoutSeconds ?? plan.deadlineSeconds) * 1000,
      facts: {},
      lostFacts: new Map(),
      stopped: [],
      finished: finishedJobUids(sources.history),
      records: reads.records!,
      rerun: flagsOf(o).rerun ?? [],
      stuckGraceSeconds: o.stuckGraceSeconds ?? RUN_DEFAULTS.stuckGraceSeconds,
      applySet: { set, parentKinds: reads.parentKinds ?? [], kinds: memberKinds(plan, (s) => objects.get(s) ?? []), parentWritten: false },
      before,
      unchanged: unchangedObjects(decided),
      recreate: recreatedObjects(decided),
    };
    return { run, objectsOf: objects, approvedPrunes: new Set(decided.prune.filter((p) => p.action === 'delete').map((p) => p.object)), lock };
  } catch (e) {
    await lock.release();
    throw e;
  }
}

/**
 * Every step is done: the set's members the plan no longer has are deleted (propagationPolicy
 * Background; src/runtime/decide/prune.ts decides, as for `plan`), then the parent records the kinds of
 * the members that remain.
 */
async function pruneSet(run: RunContext, objectsOf: ReadonlyMap<string, Manifest[]>, o: RunOptions, approved: ReadonlySet<string>): Promise<void> {
  const a = run.applySet;
  // A member that turned up during the run was not shown before it: kept, for the next run to show.
  const items = (await pruneCandidates(run.cluster, run.plan, (s) => objectsOf.get(s) ?? [], a.set, a.parentKinds, flagsOf(o)))
    .map((i) => (i.action === 'delete' && !approved.has(i.object) ? { ...i, action: 'keep' as const, detail: 'not shown before the run: the next run lists it' } : i));
  const remaining = new Set(a.kinds.keys());
  for (const i of items) {
    const result = i.action === 'delete' ? ((await run.cluster.delete(i.ref, 'Background')) ? 'deleted' : 'already gone') : `kept (${i.detail})`;
    if (i.action === 'keep') remaining.add(groupKind(i.ref.apiVersion, i.ref.kind));
    run.reporter.emit({ type: 'action', step: '(run)', action: i.action === 'delete' ? 'prune (propagationPolicy Background)' : 'prune', object: objectId(i.ref), result });
  }
  if (a.parentWritten || items.length > 0) await writeParent(run.cluster, run.plan, a, remaining, run.runId);
}

/**
 * Every step is done: the run, the flow the plan finishes and the server's identity are
 * recorded. A failure to write them is worth a line, not a failed run (each data step was
 * recorded when it was done).
 */
async function recordHistory(run: RunContext, plan: Plan, objectsOf: ReadonlyMap<string, Manifest[]>): Promise<void> {
  const event = { type: 'action', step: '(run)', action: 'record finished run', object: { kind: 'ConfigMap', name: HISTORY_CONFIGMAP, namespace: plan.namespace } } as const;
  try {
    await recordPlanFinished(run.cluster, plan, (s) => objectsOf.get(s) ?? [], run.runId, () => finishedRunEntry(run.cluster, plan, run.runId));
    run.reporter.emit({ ...event, result: `done${plan.flow ? ` (the ${plan.flow.kind} is finished)` : ''}` });
  } catch (e) {
    run.reporter.emit({ ...event, result: `failed: ${(e as Error).message}` });
    // a run that lost its lock wrote nothing more: that is a failed run, not a line
    if (e instanceof Locked) throw e;
  }
}

/** Runs a plan; returns the exit code (0 done, 1 step failed, 2 bad input, 3 unreachable). */
export async function runPlan(o: RunOptions): Promise<number> {
  const started = Date.now();
  const r = o.reporter;
  const state = o.state ?? {};
  state.started = started;
  const elapsedSeconds = () => (Date.now() - started) / 1000;
  let runDone = false;
  let begun: RunContext | undefined;
  let lock: RunLock | undefined;
  const dirs: RunDirs = {};
  try {
    const { run, objectsOf, approvedPrunes, lock: l } = await startRun(o, started, dirs);
    begun = run;
    state.begun = run;
    lock = l;
    const steps = run.plan.steps;
    for (const [i, step] of steps.entries()) {
      state.step = { name: step.name, jobs: objectsOf.get(step.name)!.filter((m) => m.kind === 'Job').map(refOf) };
      await l.beforeStep(step);
      await runStep({ ...run, step, index: i + 1, total: steps.length, objects: objectsOf.get(step.name)! });
    }
    await pruneSet(run, objectsOf, o, approvedPrunes);
    await recordHistory(run, run.plan, objectsOf);
    if (state.ended) return EXIT.interrupted;
    state.ended = true;
    const notes = notesEvent(run);
    if (notes) r.emit(notes);
    r.emit({ type: 'run-done', status: 'done', exitCode: EXIT.ok, elapsedSeconds: elapsedSeconds(), ...seriesOf(dirs, r.tally) });
    runDone = true;
    return EXIT.ok;
  } catch (e) {
    const code = e instanceof RuntimeError ? e.exitCode : EXIT.stepFailed;
    const message = e instanceof Error ? e.message : String(e);
    // said on the first failure already: where the logs are, and how to go on
    // the steps to re-run: those the failure names (facts lost: the steps that print them), else
    // the failed one, and only when its Jobs ran (--rerun does not help a refused gate)
    const named = e instanceof StepFailed ? e.rerun : undefined;
    const jobsRan = !(e instanceof ReportedStepFailure && e.beforeJobs);
    // the API stopped answering: its Jobs may have finished; the same command attaches to them
    const next = e instanceof ApiSilent && begun ? nextCommand(o.planDir, begun.plan, o.connection ?? {}, undefined, false)
      : (code !== EXIT.stepFailed && code !== EXIT.incomplete) || !begun ? undefined
      : named?.length ? nextCommand(o.planDir, begun.plan, o.connection ?? {}, named[0]) + named.slice(1).map((x) => ` --rerun ${x}`).join('')
        : nextCommand(o.planDir, begun.plan, o.connection ?? {}, e instanceof StepFailed ? e.step : undefined, jobsRan);
    const after = begun ? { runDir: begun.runDir, ...(next ? { next } : {}), ...(e instanceof StepFailed && e.stillStarting ? { stillStarting: true } : {}) } : {};
    if (state.ended) return code;
    state.ended = true;
    if (!runDone) r.emit({ type: 'run-done', status: 'failed', exitCode: code, elapsedSeconds: elapsedSeconds(), message, ...after, ...begun ? seriesOf(dirs, r.tally) : {} });
    o.onFailure?.(e);
    return code;
  } finally {
    await lock?.release();
    r.close();
    // refused (or failed) before its first step: it changed nothing, so it is no attempt of the series
    if (!begun) forgetAttempt(dirs);
    else if (dirs.runs && dirs.series) pruneRuns(dirs.runs, o.keepRuns ?? RUN_DEFAULTS.keepRuns, dirs.series);
  }
}

/**
 * A run that resumes a series: how many attempts it has with this one, and what they changed
 * together (each earlier attempt's events.jsonl counted as its closing line counted it). Nothing
 * for the first attempt, nor with `--run-dir`.
 */
function seriesOf(dirs: RunDirs, tally: RunTally): { series?: { attempts: number; resources: RunTally } } {
  if (!dirs.series || !dirs.attempt) return {};
  const series = listSeries(path.dirname(dirs.series)).find((s) => path.resolve(s.dir) === path.resolve(dirs.series!));
  const earlier = (series?.attempts ?? []).filter((a) => path.resolve(a) !== path.resolve(dirs.attempt!));
  if (earlier.length === 0) return {};
  let resources = { ...tally };
  for (const a of earlier) {
    try {
      const events = fs.readFileSync(path.join(a, 'events.jsonl'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as RunEvent);
      resources = addTallies(resources, tallyOf(events));
    } catch {
      // an attempt without readable events (killed while writing): counted as nothing
    }
  }
  return { series: { attempts: earlier.length + 1, resources } };
}

/**
 * A run that ended before its first step (a refusal, the lock held, a changed saved plan) leaves
 * no attempt in its series (and no series it opened): what it said is on the screen, and a resume
 * or the next series is not made of refusals.
 */
function forgetAttempt(dirs: RunDirs): void {
  if (!dirs.attempt || !dirs.series) return;
  try {
    fs.rmSync(dirs.attempt, { recursive: true, force: true });
    if (listSeries(path.dirname(dirs.series)).find((s) => path.resolve(s.dir) === path.resolve(dirs.series!))?.attempts.length === 0) {
      fs.rmSync(dirs.series, { recursive: true, force: true });
    }
  } catch {
    // left for retention
  }
}

/** Retention is housekeeping: a directory that cannot be removed is left for the next run. */
function pruneRuns(runs: string, keep: number, current: string): void {
  try {
    pruneSeries(runs, keep, current);
  } catch {
    // left for the next run
  }
}
