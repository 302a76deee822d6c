/**
 * `status`: each step's state read from the cluster (a LIST per kind with the plan's selector, at most 16 requests in flight, its
 * waits judged from those answers; no watches; a rollout that is not done also lists its
 * ReplicaSets and pods).
 */
import type { KubernetesObject, V1Deployment, V1Job, V1PersistentVolumeClaim, V1Pod, V1ReplicaSet, V1StorageClass } from '@kubernetes/client-node';
import { EXIT } from '../../plan/exit-codes';
import { sameSpecHash } from '../../plan/spec-hash';
import { ANNOTATIONS, Plan, Step, Wait } from '../../plan/types';
import { Cluster, refString } from '../../kube/cluster';
import { Facts, factsOfStep } from '../core/facts';
import { Limit, limiter, STATUS_READ_CONCURRENCY } from '../../kube/limit';
import { readObjects } from '../core/live-reads';
import { isObject, selectorString as labelsSelector } from '../core/manifests';
import { readRecords, recordedJobFacts, Records } from '../safety/record';
import type { StepView } from '../core/plan-dir';
import { describePod, podProgress, rolloutPods, selectorString, storageClassOf, Verdict, verdictFor } from '../readiness';
import { jobPhase } from '../readiness/batch_v1_job';
import type { StepState, StepStatus } from '../core/status-result';

/** What one step's objects say: those present, a detail per Job, the state the Jobs decide. */
interface Scan {
  readonly present: KubernetesObject[];
  readonly details: string[];
  state?: StepState;
}

/** The StorageClasses, listed once, when a `bound` wait needs them. */
interface Classes {
  list?: V1StorageClass[];
  /** Every read of `status` goes through it: at most STATUS_READ_CONCURRENCY in flight. */
  limit: Limit;
}

function scanObjects(view: StepView, read: ReadonlyArray<KubernetesObject | undefined>): Scan {
  const scan: Scan = { present: [], details: [] };
  for (const [i, o] of view.objects.entries()) {
    const there = read[i];
    if (!there) continue;
    scan.present.push(there);
    if (o.kind !== 'Job') continue;
    const phase = jobPhase(there as V1Job);
    const changed = !sameSpecHash(there.metadata?.annotations?.[ANNOTATIONS.specHash], view.jobSpecHashes.get(o.name));
    scan.details.push(`Job ${o.name} ${phase}${changed ? ' (spec changed since)' : ''}`);
    if (changed) scan.state ??= 'changed';
    if (phase === 'failed') scan.state = 'failed';
    else if (phase === 'running') scan.state ??= 'running';
  }
  return scan;
}

/**
 * The StorageClasses only inform a `bound` wait (a WaitForFirstConsumer claim is not stuck): when
 * they cannot be read (RBAC: a namespaced user), the claim is judged without them, as `run` does.
 */
async function storageClasses(cluster: Cluster): Promise<V1StorageClass[]> {
  return (await cluster.list<V1StorageClass>({ apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass' }).catch(() => ({ items: [] }))).items;
}

/** One wait, judged from one GET (and, for a rollout that is not done, its pods). */
async function judgeWait(cluster: Cluster, w: Wait, classes: Classes, present: readonly KubernetesObject[]): Promise<{ v: Verdict; extra: string }> {
  // The step's objects were just read: a wait on one of them judges that answer, not a second GET.
  const obj = present.find((p) => isObject(p, w.object)) ?? await classes.limit(() => cluster.get(w.object)).catch(() => undefined);
  if (w.for === 'bound' && obj) classes.list ??= await classes.limit(() => storageClasses(cluster));
  const storageClass = obj && classes.list ? storageClassOf(obj as V1PersistentVolumeClaim, classes.list) : undefined;
  const v = verdictFor(w.for, { object: obj, storageClass });
  if (w.for !== 'rollout' || !obj || v.state === 'done') return { v, extra: '' };
  // Its pods tell a slow first start (waiting) from a failed rollout, and where it is;
  // when they cannot be read (RBAC), the Deployment decides alone.
  const pods = await podsOfRollout(cluster, obj as V1Deployment, classes.limit).catch(() => undefined);
  if (!pods) return { v, extra: '' };
  return { v: verdictFor(w.for, { object: obj, pods }), extra: pods.slice(0, 3).map((p) => `; ${describePod(podProgress(p))}`).join('') };
}

async function judgeWaits(cluster: Cluster, step: Step, scan: Scan, classes: Classes): Promise<void> {
  // together (a wait reads only when its object was not read, or a rollout is not done), judged in order
  const judged = await Promise.all(step.waits.map((w) => judgeWait(cluster, w, classes, scan.present)));
  for (const [i, w] of step.waits.entries()) {
    const { v, extra } = judged[i];
    if (v.state === 'done') continue;
    scan.state = v.state === 'failed' ? 'failed' : 'waiting';
    scan.details.push(`${refString(w.object)} ${w.for}: ${v.reason}${v.state === 'waiting' ? extra : ''}`);
  }
}

/** A completed facts Job's facts: its pods', else (its pods gone) the record's (src/runtime/core/facts.ts). */
async function stepFacts(cluster: Cluster, step: Step, present: readonly KubernetesObject[], records: Records): Promise<Facts | undefined> {
  const factsJob = step.factsFrom && present.find((p) => p.kind === 'Job' && p.metadata?.name === step.factsFrom!.name) as V1Job | undefined;
  if (!factsJob || jobPhase(factsJob) !== 'complete') return undefined;
  const found = await factsOfStep(cluster, step.name, step.factsFrom!.name, factsJob, [recordedJobFacts(records, step.factsFrom!.name, factsJob.metadata?.uid)]);
  return 'facts' in found ? found.facts : undefined;
}

/** Each step's state; `viewOf` gives a step's objects and Jobs' spec hashes (src/runtime/core/plan-dir.ts `openPlanView`). */
export async function stepStatuses(cluster: Cluster, plan: Plan, viewOf: (step: string) => StepView): Promise<StepStatus[]> {
  // together, at most STATUS_READ_CONCURRENCY requests in flight: one round trip for the reads
  const classes: Classes = { limit: limiter(STATUS_READ_CONCURRENCY) };
  // Every step's objects read at once (a LIST per kind with the plan's selector, as
  // `kubectl get -l`), judged step by step.
  const all = plan.steps.flatMap((step) => viewOf(step.name).objects);
  // With them, what judging may need: the run records (facts) and, for a `bound` wait, the
  // StorageClasses; one round trip for all (issue 36), not one after another.
  const [read, records, classList] = await Promise.all([
    readObjects(cluster, all, classes.limit, labelsSelector(plan.selector)),
    plan.steps.some((x) => x.factsFrom) ? classes.limit(() => readRecords(cluster, plan.namespace)) : { flows: {} },
    plan.steps.some((x) => x.waits.some((w) => w.for === 'bound')) ? classes.limit(() => storageClasses(cluster)) : undefined,
  ]);
  classes.list = classList;
  // The steps judged together: what one still needs (a rollout's pods, a Job's facts) is read in
  // the same round trip as every other step's.
  const starts = plan.steps.map((_, i) => plan.steps.slice(0, i).reduce((n, x) => n + viewOf(x.name).objects.length, 0));
  return Promise.all(plan.steps.map(async (step, i): Promise<StepStatus> => {
    const objs = viewOf(step.name).objects;
    const scan = scanObjects(viewOf(step.name), read.slice(starts[i], starts[i] + objs.length));
    if (scan.present.length === 0) return { name: step.name, state: 'not-applied', detail: `0/${objs.length} objects` };
    if (!scan.state && scan.present.length < objs.length) scan.state = 'partly-applied';
    const [, facts] = await Promise.all([scan.state ? undefined : judgeWaits(cluster, step, scan, classes), stepFacts(cluster, step, scan.present, records)]);
    const detail = scan.details.join('; ') || `${scan.present.length}/${objs.length} objects`;
    return { name: step.name, state: scan.state ?? 'done', detail, ...(facts ? { facts } : {}) };
  }));
}

/** The pods of a Deployment's newest ReplicaSet: one list of each kind, by its selector. */
async function podsOfRollout(cluster: Cluster, d: V1Deployment, limit: Limit): Promise<V1Pod[]> {
  const q = { namespace: d.metadata?.namespace, labelSelector: d.spec?.selector ? selectorString(d.spec.selector) || undefined : undefined };
  const [sets, pods] = await Promise.all([
    limit(() => cluster.list<V1ReplicaSet>({ apiVersion: 'apps/v1', kind: 'ReplicaSet', ...q })),
    limit(() => cluster.list<V1Pod>({ apiVersion: 'v1', kind: 'Pod', ...q })),
  ]);
  return rolloutPods(d, sets.items, pods.items);
}

/** `status`'s exit code: 0 every step done, 1 a step failed, 4 otherwise (something is still to do). */
export function statusExitCode(steps: readonly StepStatus[]): number {
  if (steps.some((s) => s.state === 'failed')) return EXIT.stepFailed;
  return steps.every((s) => s.state === 'done') ? EXIT.ok : EXIT.incomplete;
}
