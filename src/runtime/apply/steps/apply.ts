/**
 * Stage 4, apply: Jobs to re-create, and objects whose change the server refuses as immutable,
 * are deleted (propagationPolicy Background, so their pods go too) and waited for until gone; then every object is applied (server-side apply, in file
 * order, with the run label), except Jobs the resume check attached to or skipped and objects
 * the dry runs before the first write found unchanged.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import { isMember, writeParent } from '../../core/applyset';
import { refString } from '../../../kube/cluster';
import { ApiError, RuntimeError } from '../../../kube/api-errors';
import { Manifest, refOf, stampForApply } from '../../core/manifests';
import { StepWaiter } from '../waiter';
import { APPLY_CONCURRENCY, limiter } from '../../../kube/limit';
import { changeOf } from '../../decide/field-diff';
import { ApplyResult, objectId } from '../../core/events';
import type { StepRun } from './context';
import type { Decisions } from '../../decide/job-decision';

/**
 * Jobs to re-create (the resume check), and objects whose change the server refuses as immutable
 * (the dry runs before the first write): deleted, and waited for until gone.
 */
async function recreateJobs(s: StepRun, decisions: Decisions): Promise<void> {
  const jobs = s.jobs.filter((j) => decisions.get(j.metadata.name)!.decision.action === 'recreate')
    .map((j) => ({ obj: j as Manifest, why: (decisions.get(j.metadata.name)!.decision as { why: string }).why }));
  const others = s.c.objects.filter((o) => o.kind !== 'Job' && s.c.recreate?.has(refString(refOf(o))))
    .map((o) => ({ obj: o, why: s.c.recreate!.get(refString(refOf(o)))! }));
  const toRecreate = [...jobs, ...others];
  for (const { obj, why } of toRecreate) {
    await s.cluster.delete(refOf(obj), 'Background');
    s.emit({ type: 'action', step: s.step.name, action: 'delete (propagationPolicy Background)', object: objectId(refOf(obj)), result: why });
  }
  if (toRecreate.length === 0) return;
  const gone = await new StepWaiter({
    cluster: s.cluster, waits: toRecreate.map(({ obj }) => ({ object: refOf(obj), for: 'deleted' as const })), jobs: [],
    deadline: Math.min(s.c.deadline, s.stepDeadline), deadlineReason: `timed out deleting the old ${others.length ? 'objects' : 'Job'}`,
    stuckGraceMs: Infinity, onProgress: (b) => s.emit({ type: 'waiting', ...s.tag, elapsedSeconds: s.elapsed(), blockers: b }),
  }).run();
  if (!gone.ok) await s.fail(gone.reason!);
}

/**
 * The ApplySet parent, once, before the first member is applied: the applies of a wave go
 * together, and only one of them may write it.
 */
async function parentFirst(s: StepRun, objs: readonly Manifest[]): Promise<void> {
  const set = s.c.applySet;
  if (set.parentWritten || !objs.some(isMember)) return;
  try {
    await writeParent(s.cluster, s.c.plan, set, [...set.parentKinds, ...set.kinds.keys()], s.c.runId);
  } catch (e) {
    await refused(s, e, `apply ${refString(refOf(objs.find(isMember)!))}`);
  }
}

/** A refused write fails the step naming the object and the API's causes. */
async function refused(s: StepRun, e: unknown, what: string): Promise<never> {
  if (e instanceof ApiError) {
    const causes = e.causes.length ? ` (${e.causes.join('; ')})` : '';
    await s.fail(`${what} refused: ${e.message}${causes}`);
  }
  if (e instanceof RuntimeError) await s.fail(e.message);
  throw e;
}

/**
 * The kinds that run something (and so read the others of their step: ConfigMaps, Secrets,
 * claims, accounts): applied after the rest of their step, together.
 */
const WORKLOADS = new Set(['Pod', 'Job', 'CronJob', 'Deployment', 'StatefulSet', 'DaemonSet', 'ReplicaSet']);

/**
 * The bindings of Roles, applied after the Roles they name: a user without RBAC's `bind` verb may
 * bind a Role only when it exists and grants no more than the user holds. Applied together with
 * it, kube-apiserver refused the binding for the documented operator Role (`rolebindings
 * "uyuni-stop" not found`, test/cluster/rbac.test.ts); an admin's went through.
 */
const BINDINGS = new Set(['RoleBinding', 'ClusterRoleBinding']);

/** 0: what configures, 1: the bindings of its Roles, 2: the workloads that use both. */
const waveOf = (kind: string) => (WORKLOADS.has(kind) ? 2 : BINDINGS.has(kind) ? 1 : 0);

/**
 * Server-side applies of `objs` (issue 36): together, at most APPLY_CONCURRENCY in flight, in
 * waves where the step's order allows it: first what configures (ConfigMaps, Secrets, claims,
 * accounts, Roles, Services, …), then the bindings of those Roles, then the workloads that read
 * them, each wave after the one before was answered. A refusal fails the step, the first in file order naming its object,
 * once the wave's other applies were answered.
 */
async function applyAll(s: StepRun, objs: readonly Manifest[]): Promise<KubernetesObject[]> {
  await parentFirst(s, objs);
  const limit = limiter(APPLY_CONCURRENCY);
  const out: KubernetesObject[] = new Array(objs.length);
  const indexed = objs.map((o, i) => [o, i] as const);
  const waves = [0, 1, 2].map((w) => indexed.filter(([o]) => waveOf(o.kind) === w)).filter((wave) => wave.length > 0);
  for (const wave of waves) {
    const answers = await Promise.allSettled(wave.map(([o]) => limit(() => s.cluster.apply(stampForApply(o, s.c.runId, s.c.applySet.set.id)))));
    for (const [k, a] of answers.entries()) {
      const [o, i] = wave[k];
      if (a.status === 'rejected') await refused(s, a.reason, `apply ${refString(refOf(o))}`);
      else out[i] = a.value;
    }
  }
  return out;
}

/**
 * What an apply did, against the object as the run found it: created, updated, relabelled (only
 * our bookkeeping labels and annotations changed), or unchanged (only the run label and what the
 * server sets differ, as `plan` compares: field-diff.ts);
 * `applied` when the run did not read it.
 */
function applyResult(before: StepRun['c']['before'], ref: string, after: KubernetesObject): ApplyResult {
  if (!before?.has(ref)) return 'applied';
  const was = before.get(ref);
  if (!was) return 'created';
  return ({ changed: 'updated', relabel: 'relabelled', none: 'unchanged' } as const)[changeOf(was, after)];
}

/**
 * Returns the objects as the apply answered them, in file order; the applies themselves go
 * together (applyAll), the events in file order once they were answered.
 */
export async function applyStage(s: StepRun, decisions: Decisions): Promise<KubernetesObject[]> {
  await recreateJobs(s, decisions);
  const decisionOf = (obj: Manifest) => (obj.kind === 'Job' ? decisions.get(obj.metadata.name)!.decision : undefined);
  type Row = { obj: Manifest; ref: string; d?: ReturnType<typeof decisionOf>; result?: ApplyResult; live?: KubernetesObject };
  const rows: Row[] = s.c.objects.map((obj): Row => {
    const d = decisionOf(obj);
    const ref = refString(refOf(obj));
    if (d?.action === 'attach') return { obj, ref, d, result: 'already running with the same spec: attached' };
    if (d?.action === 'skip') return { obj, ref, d, result: 'already Complete with the same spec: skipped' };
    const live = s.c.unchanged?.has(ref) ? s.c.before?.get(ref) : undefined;
    if (live && obj.kind !== 'Job') return { obj, ref, d, result: 'unchanged', live };
    return { obj, ref, d };
  });
  const toApply = rows.filter((r) => r.result === undefined);
  const answers = await applyAll(s, toApply.map((r) => r.obj));
  const answerOf = new Map(toApply.map((r, i) => [r, answers[i]]));
  const applied: KubernetesObject[] = [];
  for (const r of rows) {
    const { obj, ref, d } = r;
    if (r.result !== undefined) {
      if (r.live) applied.push(r.live);
      s.emit({ type: 'apply', step: s.step.name, object: objectId(refOf(obj)), result: r.result });
      continue;
    }
    const after = answerOf.get(r)!;
    applied.push(after);
    const recreated = d?.action === 'recreate' || (obj.kind !== 'Job' && s.c.recreate?.has(ref));
    s.emit({ type: 'apply', step: s.step.name, object: objectId(refOf(obj)), result: recreated ? 're-created' : d?.action === 'create' ? 'created' : applyResult(s.c.before, ref, after) });
  }
  return applied;
}
