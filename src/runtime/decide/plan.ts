/**
 * `plan`: what `run` would do, per step and object, without changing anything. It decides with
 * `run`'s own functions: the resume check of the step's Jobs with the finished-runs record
 * (job-decision.ts `decideJobs`), the requirements, the gates from the facts in the cluster,
 * and pruning (prune.ts), the one-shot flows' record (safety/oneshot.ts), the effect of each
 * action (action-effect.ts), the server's identity (safety/identity.ts), the objects of other
 * owners it takes over or refuses (safety/ownership.ts) and the credentials it would generate
 * beside kept data (requirements.ts `lostCredentials`). An object that exists is compared with a server-side
 * apply dry run; an `update` carries the field diff (field-diff.ts). The result is the one
 * verdict (plan-result.ts): `run` computes it under its lock before its first write (what it
 * refuses, the destructive changes it asks about: destructive.ts, and what it takes over), and
 * `run FILE` compares it with the saved one (saved-plan.ts). The text view is
 * report/plan-text.ts.
 */
import type { KubernetesObject, V1ConfigMap, V1Job, V1Lease, V1Secret } from '@kubernetes/client-node';
import type { Gate, ObjectRef, Plan, Requirement, Step } from '../../plan/types';
import { LABELS } from '../../plan/types';
import { applySetOf, readParent } from '../core/applyset';
import { Cluster, refString } from '../../kube/cluster';
import { ApiError, MissingKind } from '../../kube/api-errors';
import { StepFailed } from '../core/errors';
import { Facts, factsOfStep, lostFactsText } from '../core/facts';
import { bookkeepingNote, comparableSides, fieldDiff } from './field-diff';
import { evaluateGate } from './gates';
import { imagesFromFacts } from '../core/image-facts';
import { withEvidence } from '../safety/evidence';
import { finishedJobUids } from '../safety/history';
import { identityChanges } from '../safety/identity';
import { jobsOf } from '../core/jobs';
import { Manifest, refOf, sameRef, stampForApply } from '../core/manifests';
import { decideOneShot, finishedFlowRefusals, finishedPlanRefusal, OneShotDecision, RefusedDataStep } from '../safety/oneshot';
import type { FlowRecord } from '../safety/record';
import { rotationFacts } from '../safety/ca-trust';
import { pruneCandidates } from './prune';
import { DRY_RUN_CONCURRENCY, Limit, limiter, READ_CONCURRENCY } from '../../kube/limit';
import { prefetchObjects, withSnapshot } from '../core/live-reads';
import { namespaceTerminating } from '../readiness/v1_namespace';
import { caFingerprint, damageRefusals, oneShotHash, parseRecords, recordedJobFacts, Records } from '../safety/record';
import { readSources, RecordSources } from '../safety/record-store';
import { checkRequirement, fixCommand, lostCredentials } from './requirements';
import { describeHolder, holderOf, LOCK_NAME, staleness } from '../safety/lock';
import { refuses, takeovers, upgrades } from '../safety/ownership';
import type {
  DecisionFlags, ObjectAction, PlanResult, PlanSummary, PlannedAction, PlannedObject, PlannedRequirement, PlannedStep, PlannedTakeover, Unmet,
} from './plan-result';
import { jobPhase } from '../readiness/batch_v1_job';
import { decideJobs, JobDecision, JobState } from './job-decision';
import { actionEffect } from './action-effect';
import { objectId } from '../core/events';
import { checkPodSecurity } from '../core/pod-security';

export interface PlanOptions {
  /** The flags of the run planned: `run`'s own, or those `plan` is given to predict it. @default none, as `run` without flags */
  readonly flags?: DecisionFlags;
  /**
   * Compare existing objects with a server-side apply dry run (`update` with its diff, or
   * `unchanged`); without, existing objects are `unchanged` with detail `exists (not compared)`.
   * `run` compares too: what is unchanged it does not apply again. @default true
   */
  readonly diff?: boolean;
  /**
   * Filled with every object read to decide (by refString; undefined: not in the cluster): `run`
   * compares what its apply answers with it, to tell an updated object from an unchanged one.
   */
  readonly seen?: Map<string, KubernetesObject | undefined>;
  /**
   * false: `run`'s lock found no namespace (a first install), so nothing namespaced can be taken
   * over or hold data: those reads are not sent. @default true
   */
  readonly namespaceExists?: boolean;
  /** `run` holds the namespace's lock itself: it is not read. @default false: `plan` predicts a live run's lock refusing */
  readonly holdsLock?: boolean;
  /** Dry-run the workloads for PodSecurity's warnings (pod-security.ts); `run` asks before its lock instead. @default true */
  readonly podSecurity?: boolean;
  /**
   * Filled with what the decision read of the run's own state (the ApplySet parent, the records
   * and what stands for them when they are gone): `run` goes on with the same reads, not its own
   * second ones.
   */
  readonly reads?: DecisionReads;
}

/** What `planSteps` read of the run's state (PlanOptions.reads). */
export interface DecisionReads {
  /** The kinds the ApplySet parent lists. */
  parentKinds?: readonly string[];
  /** Why the parent refuses this plan (another tool's): `run` stops before its question. */
  parentRefused?: StepFailed;
  /** Both places of the records, as read. */
  sources?: RecordSources;
  /** The records, with the evidence when they are gone (evidence.ts). */
  records?: Records;
}

/** A gate as `plan` shows it: decided now when the facts it needs are already in the cluster. */
function gateLine(g: Gate, facts: Facts, lost: ReadonlyMap<string, string>, pending: ReadonlySet<string>): { line: string; refuses?: string; rerun?: readonly string[] } {
  const needs = g.type === 'present' ? [g.fact] : [g.left, g.right].flatMap((o) => ('fact' in o ? [o.fact] : []));
  // A step that runs before it may still print what is missing; only when none does is a lost fact a refusal.
  if (!needs.every((f) => f in facts) && (lost.size === 0 || pending.size > 0)) return { line: `${g.message} (decided at run time from ${needs.join(', ')})` };
  const r = evaluateGate(g, facts, lost);
  return r.ok ? { line: `${g.message} (would pass: ${r.detail})` } : { line: `would REFUSE: ${r.detail}`, refuses: `gate refused: ${r.detail}`, ...(r.rerun ? { rerun: r.rerun } : {}) };
}

function jobAction(d: JobDecision): ObjectAction {
  switch (d.action) {
    case 'skip': return 'skip-complete';
    case 'attach': return 'running';
    case 'refuse': return d.failed ? 'failed' : 'blocked-immutable';
    case 'create': return 'create';
    case 'recreate': return 'recreate';
  }
}

/**
 * How kube-apiserver v1.34 words the refusal of a change to a field it keeps once set (seen in
 * test/cluster/immutable.test.ts): `field is immutable` (a Deployment's or Job's selector, a
 * Job's template), `may not change once set` (a Service's clusterIPs), `spec is immutable after
 * creation` (a PersistentVolumeClaim's spec but its requests).
 */
const IMMUTABLE = /field is immutable|may not change once set|is immutable after creation/;

/** A claim's spec fields that differ, as `spec.storageClassName: standard → fast` (what the server may change apart). */
function claimChanges(existing: KubernetesObject, obj: Manifest): string {
  const was = (existing as { spec?: Record<string, unknown> }).spec ?? {};
  const want = (obj as { spec?: Record<string, unknown> }).spec ?? {};
  const keys = Object.keys(want).filter((k) => !['resources', 'volumeName', 'volumeAttributesClassName'].includes(k)
    && JSON.stringify(want[k]) !== JSON.stringify(was[k]));
  return keys.map((k) => `spec.${k}: ${JSON.stringify(was[k])} → ${JSON.stringify(want[k])}`).join(', ') || 'spec';
}

/**
 * Any object but a Job that exists: a server-side apply dry run, compared with what is there.
 * A change the server refuses as immutable is a re-create (`run` deletes and creates it again),
 * but for a claim: that would lose its data, so it is refused (`claimRefusal`).
 */
async function plannedUpdate(cluster: Cluster, obj: Manifest, existing: KubernetesObject, setId: string, dry: Limit): Promise<PlannedObject> {
  const ref = refString(refOf(obj));
  try {
    const after = await dry(() => cluster.apply(stampForApply(obj, existing.metadata?.labels?.[LABELS.run] ?? '', setId), true));
    const sides = comparableSides(existing, after);
    // only our bookkeeping labels and annotations: a write, not a change of the object
    if (sides.live === sides.planned && sides.bookkeeping.labels + sides.bookkeeping.annotations > 0) {
      return { object: ref, action: 'relabel', detail: bookkeepingNote(sides.bookkeeping).slice(3, -1) };
    }
    const diff = fieldDiff(existing, after);
    return diff ? { object: ref, action: 'update', diff } : { object: ref, action: 'unchanged' };
  } catch (e) {
    if (!(e instanceof ApiError && e.status === 422)) throw e;
    // the server's causes (field: message), else its message; their first lines (a claim's go on with a diff of its Go struct)
    const said = (e.causes.length ? e.causes : [e.message]).map((c) => c.split('\n')[0]).filter((x, i, a) => a.indexOf(x) === i).join('; ');
    if (!IMMUTABLE.test(said)) return { object: ref, action: 'blocked-immutable', detail: said };
    if (obj.kind === 'PersistentVolumeClaim') {
      return {
        object: ref, action: 'blocked-immutable',
        detail: `${claimChanges(existing, obj)} cannot change on an existing claim (${said}); re-creating it would lose its data: `
          + `keep the claim's value in the configuration (volumes.overrides.${obj.metadata.name}.storageClass for its class), `
          + `or move the data to a new claim yourself and delete this one (kubectl delete pvc ${obj.metadata.name} -n ${obj.metadata.namespace ?? existing.metadata?.namespace})`,
      };
    }
    return { object: ref, action: 'recreate', immutable: true, detail: `the server keeps a changed field once set (${said}): deleted and created again` };
  }
}

/** An object as `run` would find it: its read (the snapshot's, live-reads.ts), and when it exists its dry run within `dry`. */
async function plannedObject(cluster: Cluster, obj: Manifest, setId: string, diff: boolean, dry: Limit, seen?: Map<string, KubernetesObject | undefined>): Promise<PlannedObject> {
  const ref = refOf(obj);
  let existing: KubernetesObject | undefined;
  try {
    existing = await cluster.get(ref);
    seen?.set(refString(ref), existing);
  } catch (e) {
    if (e instanceof MissingKind) return { object: refString(ref), action: 'missing-kind', detail: e.message };
    throw e;
  }
  if (!existing) return { object: refString(ref), action: 'create' };
  if (!diff) return { object: refString(ref), action: 'unchanged', detail: 'exists (not compared)' };
  return plannedUpdate(cluster, obj, existing, setId, dry);
}

/**
 * A requirement as the preflight of `run` would find it (the same check: requirements.ts
 * `checkRequirement`). One that is missing now but an earlier step of this run makes (its
 * `madeBy` step runs, or an earlier step applies an object of that name) is `made-earlier`.
 */
async function plannedRequirement(w: Walk, r: Requirement): Promise<PlannedRequirement & { fix?: string }> {
  const object = `${r.kind} ${r.namespace}/${r.name}`;
  const earlier = w.generated.get(object);
  if (earlier) return { object, action: 'present', detail: `generated by step ${earlier}` };
  const check = checkRequirement(r, await w.cluster.get<V1Secret & V1ConfigMap>({ apiVersion: 'v1', kind: r.kind, name: r.name, namespace: r.namespace }));
  if (check.state === 'present') return { object, action: 'present' };
  if (check.state === 'missing') {
    const applied = w.applied.find((m) => m.kind === r.kind && m.metadata.name === r.name && (m.metadata.namespace ?? w.plan.namespace) === r.namespace);
    if (applied) return { object, action: 'made-earlier', detail: `applied by step ${applied.metadata.labels?.[LABELS.step] ?? 'an earlier step'}; checked when the step starts` };
    if (r.madeBy && w.ran.has(r.madeBy)) return { object, action: 'made-earlier', detail: `step ${r.madeBy} makes it; checked when the step starts` };
    return { object, action: 'missing', detail: check.why, ...(fixCommand(r, check) ? { fix: fixCommand(r, check) } : {}) };
  }
  return { object, action: 'generate', detail: check.existing ? `adds key(s) ${check.missingKeys.join(', ')}` : `created with key(s) ${r.keys.join(', ')}, random values` };
}

interface Walk {
  /** The decision's snapshot (live-reads.ts): every object read once, within the read bound. */
  readonly cluster: Cluster;
  /** The dry runs' bound (DRY_RUN_CONCURRENCY). */
  readonly dry: Limit;
  readonly facts: Facts;
  /** Steps that are skipped and whose facts are gone (pods and record): step → why. */
  readonly lost: Map<string, string>;
  /** Steps with facts that run (not skipped): their facts are printed at run time. */
  readonly pending: Set<string>;
  /** Each object's read and dry run, started up front: each dry run as soon as its object's read returned. */
  readonly prefetched: ReadonlyMap<string, Promise<PlannedObject>>;
  readonly finished: ReadonlySet<string>;
  readonly rerun: readonly string[];
  readonly setId: string;
  /** Requirements generated by an earlier step of this plan: `object` → step. */
  readonly generated: Map<string, string>;
  readonly records: Records;
  readonly plan: Plan;
  readonly diff: boolean;
  readonly seen?: Map<string, KubernetesObject | undefined>;
  /** Objects earlier steps apply (not skipped): an action on one finds it there. */
  readonly applied: Manifest[];
  /** Claims that hold data already (they exist before the run). */
  readonly claimsWithData: string[];
  readonly refusals: string[];
  /** Data steps a finished flow refuses to run again: said once for all (oneshot.ts `finishedFlowRefusals`). */
  readonly refusedDataSteps: Array<RefusedDataStep & { record: FlowRecord }>;
  /** Steps of the plan so far that the run runs (not skipped). */
  readonly ran: Set<string>;
  /** Every unmet requirement and refusing gate so far. */
  readonly unmet: Unmet[];
  stopsAt?: { step: string; reason: string };
}

const REFUSING: ReadonlySet<ObjectAction> = new Set(['failed', 'blocked-immutable', 'missing-kind']);

/** The step's one-shot decision: its flow's record, not its Jobs, decides (oneshot.ts). */
function oneShotOf(w: Walk, step: Step, objects: readonly Manifest[]): OneShotDecision {
  return decideOneShot(step, oneShotHash(step, objects), w.plan, w.records, w.rerun);
}

/** An action on an object that an earlier step applies finds it as applied (and says so, not `exists`). */
async function plannedAction(w: Walk, a: Step['actions'][number]): Promise<PlannedAction> {
  const earlier = [...w.applied].reverse().find((m) => sameRef(refOf(m), a.object));
  if (!earlier) return actionEffect(a, await w.cluster.get(a.object));
  const e = actionEffect(a, earlier);
  const by = earlier.metadata.labels?.[LABELS.step];
  return e.effect === 'delete' ? { ...e, why: `made by step ${by ?? 'an earlier step'} of this run` } : e;
}

/** The first thing that stops the run (a refusal, a failed Job, an unmet requirement): kept, later ones are not. */
function stopAt(w: Walk, step: Step, reason: string): void {
  w.stopsAt ??= { step: step.name, reason };
}

/** A data step its flow's record refuses: the change of a finished flow said once for all, a damaged record's words once. */
function refuseOneShot(w: Walk, step: Step, once: Extract<OneShotDecision, { action: 'refuse' }>): void {
  if (once.record && once.change) w.refusedDataSteps.push({ step: step.name, change: once.change, record: once.record });
  // a damaged record refuses every data step with the same words: said once
  else if (!w.refusals.includes(once.why)) w.refusals.push(once.why);
  stopAt(w, step, once.why);
}

/** As `run`: the facts Job's pods' facts, else the record's; lost only when the step would not print them again. */
async function gatherFacts(w: Walk, step: Step, once: OneShotDecision, skipped: boolean): Promise<void> {
  if (!step.factsFrom) return;
  const job = await w.cluster.get<V1Job>(step.factsFrom).catch(() => undefined);
  const complete = job && jobPhase(job) === 'complete' ? job : undefined;
  if (complete || once.action === 'done') {
    const flowRun = once.action === 'done' ? w.records.flows[step.oneShot!]?.steps[step.name]?.run ?? 'unknown' : 'unknown';
    const found = await factsOfStep(w.cluster, step.name, step.factsFrom.name, complete, [
      recordedJobFacts(w.records, step.factsFrom.name, complete?.metadata?.uid),
      once.action === 'done' && once.facts ? { facts: once.facts, run: flowRun } : undefined,
    ]);
    if ('facts' in found) Object.assign(w.facts, found.facts);
    else if (skipped) w.lost.set(step.name, found.lost);
  }
  if (!skipped) w.pending.add(step.name);
}

/** Each object of the step: a Job as the resume check decided it, every object of a skipped step skipped, the rest compared. */
async function plannedObjects(w: Walk, step: Step, objects: readonly Manifest[], decisions: ReadonlyMap<string, JobState>, skipWhy: string | undefined): Promise<PlannedObject[]> {
  const planned: PlannedObject[] = [];
  for (const [index, obj] of objects.entries()) {
    const state = obj.kind === 'Job' ? decisions.get(obj.metadata.name) : undefined;
    const d = state?.decision;
    if (d) {
      const finishedJob = d.action === 'recreate' && state.existing !== undefined && jobPhase(state.existing) === 'complete';
      planned.push({ object: refString(refOf(obj)), action: jobAction(d), detail: 'why' in d ? d.why : undefined, ...(finishedJob ? { finishedJob } : {}) });
    }
    else if (skipWhy) planned.push({ object: refString(refOf(obj)), action: 'skip', detail: 'the step is skipped' });
    else {
      const read = w.prefetched.get(prefetchKey(step.name, index)) ?? plannedObject(w.cluster, obj, w.setId, w.diff, w.dry, w.seen);
      // The run is refused before its first write already (a namespace being deleted, a damaged
      // record): an object's read or dry run that fails meanwhile (403 from a terminating
      // namespace) is shown, not let to hide that refusal behind an error.
      planned.push(w.stopsAt?.step === '(run)'
        ? await read.catch((e: Error): PlannedObject => ({ object: refString(refOf(obj)), action: 'skip', detail: `not compared: ${e.message}` }))
        : await read);
    }
  }
  for (const [i, o] of planned.entries()) {
    if (objects[i].kind === 'PersistentVolumeClaim' && !['create', 'skip', 'missing-kind'].includes(o.action)) w.claimsWithData.push(o.object);
    // refused before the first write, not when the run reaches it
    // (a claim's data is not re-created; a 422 for any other reason would fail the run there)
    if (objects[i].kind !== 'Job' && o.action === 'blocked-immutable') w.refusals.push(`${o.object}: ${o.detail}`);
  }
  return planned;
}

/** The step's gates as `plan` shows them; one that refuses stops the run and, unless facts still to come may change it, is unmet. */
function plannedGates(w: Walk, step: Step, skipWhy: string | undefined): string[] {
  const gates: Array<{ line: string; refuses?: string; rerun?: readonly string[] }> = skipWhy
    ? step.gates.map((g) => ({ line: `${g.message} (not evaluated: the step is skipped)` }))
    : step.gates.map((g) => gateLine(g, w.facts, w.lost, w.pending));
  for (const g of gates) {
    if (!g.refuses) continue;
    stopAt(w, step, g.refuses);
    // facts an earlier step of this run gathers again may change the answer: decided at run time then
    if (w.pending.size > 0) continue;
    // lost facts undecide every gate that needs them: said once, with the steps that print them again
    if (!g.rerun) w.unmet.push({ step: step.name, reason: g.refuses });
    else if (!w.unmet.some((u) => u.rerun)) w.unmet.push({ step: step.name, reason: `its gates cannot be decided: ${lostFactsText(w.lost)}`, rerun: g.rerun });
  }
  return gates.map((g) => g.line);
}

/** The step's requirements as the preflight would find them; a missing one stops the run and is unmet (once, naming every step that needs it). */
async function plannedRequirements(w: Walk, step: Step, skipWhy: string | undefined): Promise<PlannedRequirement[]> {
  const requires: PlannedRequirement[] = [];
  for (const r of step.requires) {
    const { fix, ...p } = skipWhy
      ? { object: `${r.kind} ${r.namespace}/${r.name}`, action: 'not-checked' as const, detail: 'the step is skipped', fix: undefined }
      : await plannedRequirement(w, r);
    if (p.action === 'generate') w.generated.set(p.object, step.name);
    if (p.action === 'missing') {
      stopAt(w, step, `${p.object} ${p.detail}`);
      // one object several steps need: listed once, naming them all
      const i = w.unmet.findIndex((u) => u.object === p.object);
      if (i < 0) w.unmet.push({ step: step.name, object: p.object, id: objectId(r), reason: p.detail ?? 'is missing', ...(fix ? { fix } : {}) });
      else w.unmet[i] = { ...w.unmet[i], steps: [...w.unmet[i].steps ?? [w.unmet[i].step], step.name] };
    }
    requires.push({ ...p, id: objectId(r), ...p.action === 'generate' && w.claimsWithData.length > 0 ? { besideData: true } : {} });
  }
  return requires;
}

async function plannedActions(w: Walk, step: Step, skipWhy: string | undefined): Promise<PlannedAction[]> {
  const actions: PlannedAction[] = [];
  for (const a of step.actions) {
    actions.push({ ...skipWhy ? { ...actionEffect(a, undefined), effect: 'none' as const, why: 'the step is skipped' } : await plannedAction(w, a), id: objectId(a.object) });
  }
  return actions;
}

/** The images facts decide: known when the step printing them ran; else at run time. */
function imageLines(w: Walk, step: Step, objects: readonly Manifest[]): string[] {
  return imagesFromFacts(step, objects, w.facts).pins.map((x) => `${x.container} of ${refString(x.object)}: ${x.from} → `
    + (x.to ?? `the value of fact ${x.fact}${w.pending.size ? ', decided at run time' : ' (not printed: run refuses the step)'}`));
}

/**
 * One step as `run` would meet it, in its order: the one-shot decision and the resume check
 * first, then the facts, the objects, the gates, the requirements and the actions. What it
 * finds (a refusal, what is applied, generated or unmet) goes into the walk for the steps after.
 */
async function planStep(w: Walk, step: Step, objects: readonly Manifest[]): Promise<PlannedStep> {
  const once = oneShotOf(w, step, objects);
  if (once.action === 'refuse') refuseOneShot(w, step, once);
  const oneShotSkip = once.action === 'done' || once.action === 'refuse' ? once.why : undefined;
  const rerun = once.action === 'rerun' ? [...w.rerun, step.name] : w.rerun;
  const { decisions, skipped } = oneShotSkip
    ? { decisions: new Map<string, JobState>(), skipped: true }
    : await decideJobs({ cluster: w.cluster, step, jobs: jobsOf(objects), rerun, finished: w.finished });
  await gatherFacts(w, step, once, skipped);
  const skipWhy = oneShotSkip ?? (skipped ? `its Job${decisions.size > 1 ? 's' : ''} ${[...decisions.keys()].join(', ')} already Complete with the same spec` : undefined);
  const planned = await plannedObjects(w, step, objects, decisions, skipWhy);
  // As `run`: the resume check first, then the gates, the requirements, the actions, the objects.
  const refused = planned.find((o) => REFUSING.has(o.action) && o.object.startsWith('Job/'));
  if (refused) stopAt(w, step, `${refused.object}: ${refused.detail ?? refused.action}`);
  const gates = plannedGates(w, step, skipWhy);
  const requires = await plannedRequirements(w, step, skipWhy);
  const actions = await plannedActions(w, step, skipWhy);
  const other = planned.find((o) => REFUSING.has(o.action));
  if (other) stopAt(w, step, `${other.object}: ${other.detail ?? other.action}`);
  if (!skipWhy) {
    w.applied.push(...objects.filter((o) => o.kind !== 'Job'));
    w.ran.add(step.name);
  }
  const images = imageLines(w, step, objects);
  return {
    name: step.name,
    description: step.description,
    timeoutSeconds: step.timeoutSeconds,
    ...(images.length ? { images } : {}),
    ...(skipWhy ? { skipped: skipWhy } : {}),
    ...(step.oneShot ? { oneShot: step.oneShot } : {}),
    ...(step.destroysData ? { destroysData: step.destroysData } : {}),
    ...(once.action === 'rerun' ? { rerunDataStep: once.why } : {}),
    objects: planned.map((p, i) => ({ ...p, id: objectId(refOf(objects[i])) })),
    waits: step.waits.map((x) => `${refString(x.object)} ${x.for}`),
    gates,
    requires,
    actions,
  };
}

function summarize(steps: readonly PlannedStep[], prune: readonly PlannedObject[]): PlanSummary {
  const all = [...steps.flatMap((s) => s.objects), ...prune];
  const count = (...a: ObjectAction[]) => all.filter((o) => a.includes(o.action)).length;
  const generated = steps.flatMap((s) => s.requires).filter((r) => r.action === 'generate');
  const actions = steps.flatMap((s) => s.actions);
  const effects = (e: PlannedAction['effect']) => actions.filter((a) => a.effect === e).length;
  return {
    create: count('create') + generated.filter((r) => r.detail?.startsWith('created')).length,
    update: count('update', 'recreate') + generated.filter((r) => !r.detail?.startsWith('created')).length + effects('scale'),
    relabel: count('relabel'),
    delete: count('delete') + effects('delete'),
    stop: effects('stop'),
    unchanged: count('unchanged', 'skip-complete', 'skip', 'running'),
  };
}

const prefetchKey = (step: string, index: number) => `${step}\0${index}`;

/**
 * Every object `planStep` compares, its dry run (with `diff`) started as soon as its read
 * returned (the reads started earlier, together: `decisionReads`), at most DRY_RUN_CONCURRENCY
 * dry runs in flight: they depend on the cluster only, not on earlier steps. Not for a step its
 * flow did already (skipped: never compared) nor for Jobs (the resume check decides them).
 */
function prefetch(
  dry: Limit, cluster: Cluster, plan: Plan, objectsOf: (step: string) => Manifest[], records: Records, rerun: readonly string[], setId: string, diff: boolean,
  seen?: Map<string, KubernetesObject | undefined>,
): Map<string, Promise<PlannedObject>> {
  const out = new Map<string, Promise<PlannedObject>>();
  for (const step of plan.steps) {
    const objects = objectsOf(step.name);
    const once = decideOneShot(step, oneShotHash(step, objects), plan, records, rerun);
    if (once.action === 'done' || once.action === 'refuse') continue;
    objects.forEach((obj, i) => {
      if (obj.kind === 'Job') return;
      const p = plannedObject(cluster, obj, setId, diff, dry, seen);
      // awaited by planStep; one it never reaches (it stopped earlier on an error) rejects unheard
      p.catch(() => undefined);
      out.set(prefetchKey(step.name, i), p);
    });
  }
  return out;
}

/**
 * What the decision reads by name, all of it known from the plan: every object of every step
 * (compared, resumed, checked for its owner), the requirements, the actions' objects and the
 * facts Jobs. Read together up front (issue 36), not each when the walk reaches it.
 */
function decisionReads(plan: Plan, objectsOf: (step: string) => Manifest[]): ObjectRef[] {
  return plan.steps.flatMap((step) => [
    ...objectsOf(step.name).map(refOf),
    ...step.requires.map((r) => ({ apiVersion: 'v1', kind: r.kind, name: r.name, namespace: r.namespace })),
    ...step.actions.map((a) => a.object),
    ...step.factsFrom ? [step.factsFrom] : [],
  ]);
}

export async function planSteps(cluster: Cluster, plan: Plan, objectsOf: (step: string) => Manifest[], o: PlanOptions = {}): Promise<PlanResult> {
  const set = applySetOf(plan);
  // One snapshot for the whole decision (live-reads.ts): the diffs, the refusals and the
  // ownership checks see the same objects, each read once, at most READ_CONCURRENCY reads in
  // flight; the dry runs within their own bound.
  const snap = withSnapshot(cluster, limiter(READ_CONCURRENCY));
  const dry = limiter(DRY_RUN_CONCURRENCY);
  // The reads that do not depend on each other, together (each is one or two requests).
  const firstReads = Promise.all([
    readParent(snap, set).then((p): { kinds: readonly string[]; refused?: StepFailed } => ({ kinds: p.kinds }), (e: unknown) => {
      // Another tool's parent: `run` would refuse it before the first step. Anything else is an error of plan's own.
      if (!(e instanceof StepFailed)) throw e;
      return { kinds: [], refused: e };
    }),
    readSources(snap, plan.namespace),
    namespaceTerminating(snap, plan.namespace),
  ]);
  // With them, every object the walk reads (a LIST per kind and namespace), and the checks after
  // the walk, which depend on nothing it decides: awaited last, as before.
  prefetchObjects(snap, decisionReads(plan, objectsOf));
  const safety = safetyChecks(snap, plan, objectsOf, o);
  safety.catch(() => undefined);
  // PodSecurity admission's warnings (pod-security.ts): the Namespace from the snapshot, a dry run of each workload
  const podSecurity = o.podSecurity === false ? Promise.resolve(undefined) : checkPodSecurity(snap, plan, objectsOf, dry);
  podSecurity.catch(() => undefined);
  const [parent, sources, terminating] = await firstReads;
  // one read of the history ConfigMap (and the records' copy): the flow records and the finished
  // runs beside them; with what the cluster shows when a record the plan needs is gone (evidence.ts)
  const records = await withEvidence(snap, plan, parseRecords(sources));
  if (o.reads) Object.assign(o.reads, { parentKinds: parent.kinds, parentRefused: parent.refused, sources, records });
  const finished = finishedJobUids(sources.history);
  const parentKinds = parent.kinds;
  const parentRefused = parent.refused?.message;
  const flags = o.flags ?? {};
  const rerun = flags.rerun ?? [];
  // the dry runs start now, each once its object's read is back; the pruning's lists with them
  const prefetched = prefetch(dry, snap, plan, objectsOf, records, rerun, set.id, o.diff ?? true, o.seen);
  const pruning = parentRefused ? Promise.resolve([]) : pruneCandidates(snap, plan, objectsOf, set, parentKinds, flags);
  pruning.catch(() => undefined);
  const [caNow, rotation] = await Promise.all([
    records.identity ? caFingerprint(snap, plan.namespace, plan.identity?.caSecret) : undefined,
    rotationFacts(snap, plan),
  ]);
  const identity = identityChanges(records.identity, plan, caNow, flags, rotation);
  const identityRefusals = identity.filter((c) => !c.allowed).map((c) => `${c.message}: refused (${c.flag} allows it)`);
  // a damaged flow record refuses on its own: no second line for the flow it cannot tell
  const damaged = damageRefusals(plan, records);
  const first = [...damaged, terminating, damaged.length ? undefined : finishedPlanRefusal(plan, records, rerun), ...identityRefusals].find((x) => x !== undefined);
  const w: Walk = {
    cluster: snap, dry, facts: {}, lost: new Map(), pending: new Set(), prefetched, finished, rerun, setId: set.id, generated: new Map(),
    records, plan, diff: o.diff ?? true, seen: o.seen, applied: [], claimsWithData: [], refusals: [], refusedDataSteps: [], ran: new Set(), unmet: [],
    ...(first ? { stopsAt: { step: '(run)', reason: first } } : parentRefused ? { stopsAt: { step: plan.steps[0]?.name ?? '(run)', reason: parentRefused } } : {}),
  };
  const steps: PlannedStep[] = [];
  for (const step of plan.steps) steps.push(await planStep(w, step, objectsOf(step.name)));
  // each finished flow once, with its data steps listed, not a paragraph per step
  const refusals = [...new Set([
    ...damaged, ...terminating ? [terminating] : [],
    ...damaged.length ? [] : finishedFlowRefusals(plan, records, rerun, w.refusedDataSteps), ...w.refusals, ...identityRefusals,
  ])];
  const prune = (await pruning)
    .map((i): PlannedObject => ({ object: i.object, id: objectId(i.ref), action: i.action, detail: i.detail }));
  const namespaceFirst = w.unmet.some((u) => u.object) && !(await snap.get({ apiVersion: 'v1', kind: 'Namespace', name: plan.namespace }))
    ? `namespace ${plan.namespace} does not exist yet: make it first with: kubectl create namespace ${plan.namespace} (run takes over a namespace made by hand)`
    : undefined;
  return {
    steps, unmet: w.unmet, ...(namespaceFirst ? { namespaceFirst } : {}), prune, summary: summarize(steps, prune), ...(w.stopsAt ? { stopsAt: w.stopsAt } : {}), refusals, identity,
    ...(records.notes?.length ? { recordNotes: [...records.notes] } : {}),
    ...await safety,
    ...await podSecurity.then((ps) => (ps ? { podSecurity: ps } : {})),
  };
}

/** The lock `run` would find held (src/runtime/safety/lock.ts): its refusal as `plan` predicts it, or undefined when a run would take it. */
async function heldLock(cluster: Cluster, namespace: string): Promise<string | undefined> {
  const lease = await cluster.get<V1Lease>({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', name: LOCK_NAME, namespace }).catch(() => undefined);
  if (!lease || staleness(lease)) return undefined;
  return `namespace ${namespace} is locked by ${describeHolder(holderOf(lease))}: run refuses while it holds (--lock-timeout waits for it)`;
}

/**
 * What `run` refuses or takes over before its first write, beyond the steps: the objects of other
 * owners (ownership.ts), the credentials it would generate beside kept data (requirements.ts), and for
 * `plan` the lock. Read on the decision's snapshot (`cluster`), together with the walk's reads
 * (issue 36); `run` reads them under its lock.
 */
async function safetyChecks(
  cluster: Cluster, plan: Plan, objectsOf: (step: string) => Manifest[], o: PlanOptions,
): Promise<Pick<PlanResult, 'takeovers' | 'lostCredentials' | 'locked'>> {
  const exists = o.namespaceExists ?? true;
  const [foreign, lost, locked] = await Promise.all([
    takeovers(cluster, plan, objectsOf, exists),
    exists ? lostCredentials(cluster, plan) : [],
    o.holdsLock ? undefined : heldLock(cluster, plan.namespace),
  ]);
  const adopt = Boolean(o.flags?.adopt);
  const upgrade = upgrades(plan);
  return {
    takeovers: foreign.map(({ ref, ...f }): PlannedTakeover => {
      const refused = refuses(f, adopt, upgrade);
      // --adopt and a namespace made by hand are consent already; an upgrade's take-overs are asked first
      return { ...f, id: objectId(ref), action: refused ? 'refuse' : 'adopt', ...(!refused && !adopt && !f.byDesign ? { asked: true } : {}) };
    }),
    lostCredentials: lost,
    ...(locked ? { locked } : {}),
  };
}

/**
 * Whether `run` would change anything (for `--detailed-exitcode`): objects, credentials, actions,
 * pruning; bookkeeping-only relabels only when `bookkeeping` (`--bookkeeping-drift`).
 */
export function hasChanges(r: PlanResult, bookkeeping = false): boolean {
  return r.summary.create + r.summary.update + r.summary.delete + r.summary.stop + (bookkeeping ? r.summary.relabel : 0) > 0;
}
