/**
 * One step of a run, in stages, each in the file that names it: resume (its Jobs in the
 * cluster), preflight (gates, requirements), actions, apply (re-created Jobs, server-side
 * apply), wait (readiness, logs, stuck pods, timeouts), finish (last logs, facts). The first
 * failure ends the step and the run.
 */
import type { V1Job } from '@kubernetes/client-node';
import { decideOneShot } from '../../safety/oneshot';
import { HISTORY_CONFIGMAP } from '../../safety/history';
import { jobPhase } from '../../readiness/batch_v1_job';
import { imagesFromFacts, PinnedObjects } from '../../core/image-facts';
import { objectId } from '../../core/events';
import { oneShotHash, recordStepDone } from '../../safety/record';
import { actionsStage } from './actions';
import { applyStage } from './apply';
import { StepContext, StepRun } from './context';
import { finishStage } from './finish';
import { refuseTerminatingNamespace } from './namespace';
import { preflightStage } from './preflight';
import { resumeStage } from './resume';
import { findStepFacts, gatherFacts } from './step-facts';
import { waitStage } from './wait';
import { readStorageClasses } from '../waiter';

export type { RunContext, StepContext } from './context';

/**
 * A one-shot step with Jobs is done: recorded for its flow (src/runtime/safety/record.ts) unless it is
 * already, so that its Jobs going does not make it run again. A step that stops workloads (the
 * upgrade's stop-server and stop-db, whose Jobs only wait for the pods to go) or of actions only
 * is recorded when the flow finishes: until then a resumed run stops again what someone started
 * meanwhile (its actions are not done where they hold already).
 */
async function recordDone(s: StepRun, hash: string): Promise<void> {
  const flow = s.step.oneShot;
  if (!flow || s.jobs.length === 0 || s.step.actions.some((a) => a.type === 'scale')) return;
  const r = s.c.records.flows[flow];
  if (r?.steps[s.step.name]?.hash === hash && !s.c.rerun.includes(s.step.name)) return;
  let result = 'done';
  try {
    const job = s.step.factsFrom ? await s.cluster.get<V1Job>(s.step.factsFrom) : undefined;
    const found = await findStepFacts(s, job);
    await recordStepDone(s.cluster, s.c.plan, s.step, hash, s.c.runId, found && 'facts' in found ? found.facts : undefined);
  } catch (e) {
    // Its Jobs still say it is done; a line, as for the run's own record, not a failed step.
    result = `failed: ${(e as Error).message}`;
  }
  s.emit({ type: 'action', step: s.step.name, action: `record data step of the ${flow} done`, object: { kind: 'ConfigMap', name: HISTORY_CONFIGMAP, namespace: s.c.plan.namespace }, result });
}

/** The step's objects with the images its facts decide (src/runtime/core/image-facts.ts): changed ones are applied whatever the dry runs found. */
function withImagesFromFacts(c: StepContext): { c: StepContext; pinned: PinnedObjects } {
  const pinned = imagesFromFacts(c.step, c.objects, c.facts);
  if (pinned.changed.size === 0) return { c, pinned };
  const unchanged = c.unchanged ? new Set([...c.unchanged].filter((r) => !pinned.changed.has(r))) : undefined;
  return { c: { ...c, objects: pinned.objects, ...(unchanged ? { unchanged } : {}) }, pinned };
}

export async function runStep(c0: StepContext): Promise<void> {
  // from here a misbehaving API fails the step (exit 1), and nothing outlasts the run's deadline
  c0.cluster.stepStarted();
  c0.cluster.setDeadline(c0.deadline);
  const { c, pinned } = withImagesFromFacts(c0);
  const s = new StepRun(c);
  // The flow's record decides a one-shot step, not its Jobs (refusals were made before the first write).
  const hash = oneShotHash(c.step, c.objects);
  const once = decideOneShot(c.step, hash, c.plan, c.records, c.rerun);
  if (once.action === 'refuse') await s.fail(once.why);
  if (once.action === 'done') {
    s.emit({ type: 'step-skip', ...s.tag, reason: once.why });
    // Its pods' facts, else (its Job or its pods gone) the facts it printed, as recorded.
    const job = c.step.factsFrom ? await c.cluster.get<V1Job>(c.step.factsFrom) : undefined;
    const run = c.records.flows[c.step.oneShot!]?.steps[c.step.name]?.run ?? 'unknown';
    await gatherFacts(s, job && jobPhase(job) === 'complete' ? job : undefined, once.facts ? { facts: once.facts, run } : undefined);
    return;
  }
  await refuseTerminatingNamespace(s);
  const { decisions, skipped } = await resumeStage(s);
  if (skipped) {
    await recordDone(s, hash);
    return;
  }
  s.emit({ type: 'step-start', ...s.tag, description: s.step.description });
  if (pinned.missing.length) {
    await s.fail(`the images of its Deployments come from facts ${pinned.missing.join(', ')}, which no earlier step printed: nothing of the step was applied`);
  }
  for (const p of pinned.pins) {
    s.emit({ type: 'action', step: s.step.name, action: `image of ${p.container} from fact ${p.fact}`, object: objectId(p.object), result: `${p.from} → ${p.to}` });
  }
  s.stage = 'preflight';
  // a step that waits for claims reads the StorageClasses beside its preflight and applies
  const storageClasses = s.step.waits.some((w) => w.for === 'bound') ? readStorageClasses(s.cluster) : undefined;
  await preflightStage(s);
  s.stage = 'actions';
  await actionsStage(s);
  s.stage = 'apply';
  const applied = await applyStage(s, decisions);
  s.stage = 'wait';
  const waited = await waitStage(s, applied, storageClasses);
  s.stage = 'finish';
  await finishStage(s, waited);
  await recordDone(s, hash);
}
