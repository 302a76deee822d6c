/**
 * Stage 6, finish: the last of the Jobs' logs, then the step's facts (`factsFrom`), then done.
 */
import type { V1Job } from '@kubernetes/client-node';
import { podsOfJob } from '../jobs';
import type { StepRun } from './context';
import { gatherFacts } from './step-facts';
import type { Waited } from './wait';

/**
 * The pod watch and the Job watch are separate streams: the Job's Complete can arrive before the
 * last pod update. Read the pods once more unless every one seen has finished, so no container's
 * log is missed; terminated containers close their streams, given a moment to flush.
 */
async function lastLogs(s: StepRun, { waiter, logs }: Waited): Promise<void> {
  for (const j of s.jobs) {
    const seen = waiter.jobPods.get(j.metadata.name) ?? [];
    const job = waiter.jobObject(j.metadata.name);
    const expected = (job?.status?.succeeded ?? 0) + (job?.status?.failed ?? 0);
    const finished = seen.filter((p) => p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed');
    if (job && finished.length < expected) logs.observe(await podsOfJob(s.cluster, job));
  }
  await logs.drain(2000);
  logs.stop();
}

export async function finishStage(s: StepRun, waited: Waited): Promise<void> {
  await lastLogs(s, waited);
  if (s.step.factsFrom) await gatherFacts(s, await s.cluster.get<V1Job>(s.step.factsFrom));
  s.emit({ type: 'step-done', ...s.tag, elapsedSeconds: s.elapsed() });
}
