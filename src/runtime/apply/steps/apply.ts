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

/** Server-side apply of one object; a refusal fails the step naming the object and the API's causes. */
async function applyOne(s: StepRun, obj: Manifest, ref: string): Promise<KubernetesObject> {
  const set = s.c.applySet;
  try {
    if (isMember(obj) && !set.parentWritten) {
      await writeParent(s.cluster, s.c.plan, set, [...set.parentKinds, ...set.kinds.keys()], s.c.runId);
    }
    return await s.cluster.apply(stampForApply(obj, s.c.runId, set.set.id));
  } catch (e) {
    if (e instanceof ApiError) {
      const causes = e.causes.length ? ` (${e.causes.join('; ')})` : '';
      await s.fail(`apply ${ref} refused: ${e.message}${causes}`);
    }
    if (e instanceof RuntimeError) await s.fail(e.message);
    throw e;
  }
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

/** Returns the objects as the apply answered them. */
export async function applyStage(s: StepRun, decisions: Decisions): Promise<KubernetesObject[]> {
  await recreateJobs(s, decisions);
  const applied: KubernetesObject[] = [];
  for (const obj of s.c.objects) {
    const d = obj.kind === 'Job' ? decisions.get(obj.metadata.name)!.decision : undefined;
    const ref = refString(refOf(obj));
    if (d?.action === 'attach') {
      s.emit({ type: 'apply', step: s.step.name, object: objectId(refOf(obj)), result: 'already running with the same spec: attached' });
      continue;
    }
    if (d?.action === 'skip') {
      s.emit({ type: 'apply', step: s.step.name, object: objectId(refOf(obj)), result: 'already Complete with the same spec: skipped' });
      continue;
    }
    const live = s.c.unchanged?.has(ref) ? s.c.before?.get(ref) : undefined;
    if (live && obj.kind !== 'Job') {
      applied.push(live);
      s.emit({ type: 'apply', step: s.step.name, object: objectId(refOf(obj)), result: 'unchanged' });
      continue;
    }
    const after = await applyOne(s, obj, ref);
    applied.push(after);
    const recreated = d?.action === 'recreate' || (obj.kind !== 'Job' && s.c.recreate?.has(ref));
    s.emit({ type: 'apply', step: s.step.name, object: objectId(refOf(obj)), result: recreated ? 're-created' : d?.action === 'create' ? 'created' : applyResult(s.c.before, ref, after) });
  }
  return applied;
}
