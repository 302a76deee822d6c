/**
 * Stage 1, resume: what to do with each of the step's Jobs that may already exist
 * (decide/job-decision.ts decides, for `plan` and `run` alike). A refused Job fails the step
 * before anything else happens; when every Job is Complete with the same spec, the step is
 * skipped (its facts are read again: its pods', else the record's).
 */
import { podsOfJob } from '../../core/jobs';
import { decideJobs, Resumed } from '../../decide/job-decision';
import type { StepRun } from './context';
import { savedLogsOfJob } from './failure';
import { gatherFacts } from './step-facts';

export async function resumeStage(s: StepRun): Promise<Resumed> {
  const { decisions, skipped } = await decideJobs({ cluster: s.cluster, step: s.step, jobs: s.jobs, rerun: s.c.rerun, finished: s.c.finished });
  for (const [name, { decision, existing }] of decisions) {
    if (decision.action !== 'refuse') continue;
    s.emit({ type: 'step-start', ...s.tag, description: s.step.description });
    await s.fail(decision.why, decision.failed && existing ? await podsOfJob(s.cluster, existing) : [], undefined,
      decision.failed ? savedLogsOfJob(s.c.runDir, s.step.name, name) : []);
  }
  if (skipped) {
    const names = s.jobs.map((j) => j.metadata.name);
    s.emit({ type: 'step-skip', ...s.tag, reason: `Job${names.length > 1 ? 's' : ''} ${names.join(', ')} already Complete with the same spec` });
    if (s.step.factsFrom) await gatherFacts(s, decisions.get(s.step.factsFrom.name)?.existing);
  }
  return { decisions, skipped };
}
