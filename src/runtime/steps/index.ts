/**
 * One step of a run, in stages, each in the file that names it: resume (its Jobs in the
 * cluster), preflight (gates, requirements), actions, apply (re-created Jobs, server-side
 * apply), wait (readiness, logs, stuck pods, timeouts), finish (last logs, facts). The first
 * failure ends the step and the run.
 */
import { actionsStage } from './actions';
import { applyStage } from './apply';
import { StepContext, StepRun } from './context';
import { finishStage } from './finish';
import { preflightStage } from './preflight';
import { resumeStage } from './resume';
import { waitStage } from './wait';

export type { RunContext, StepContext } from './context';

export async function runStep(c: StepContext): Promise<void> {
  // from here a misbehaving API fails the step (exit 1), and nothing outlasts the run's deadline
  c.cluster.stepStarted();
  c.cluster.setDeadline(c.deadline);
  const s = new StepRun(c);
  const { decisions, skipped } = await resumeStage(s);
  if (skipped) return;
  s.emit({ type: 'step-start', ...s.tag, description: s.step.description });
  await preflightStage(s);
  await actionsStage(s);
  const applied = await applyStage(s, decisions);
  const waited = await waitStage(s, applied);
  await finishStage(s, waited);
}
