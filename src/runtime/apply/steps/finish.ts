/**
 * Stage 6, finish: the last of the Jobs' logs, then the step's facts (`factsFrom`), then done.
 */
import type { V1Job } from '@kubernetes/client-node';
import { podsOfJob } from '../../core/jobs';
import { shellWord } from '../next-command';
import type { RunEvent } from '../../core/events';
import type { RunContext, StepRun } from './context';
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

/**
 * The end of a successful run: the plan's notes (synthesized, src/plans/notes.ts), with the
 * command that prints the admin password from its Secret, reaching the cluster as the run did.
 */
export function notesEvent(run: RunContext): Extract<RunEvent, { type: 'notes' }> | undefined {
  const notes = run.plan.notes;
  if (!notes) return undefined;
  const { kubeconfig, context } = run.connection;
  const kubectl = ['kubectl', ...(kubeconfig ? ['--kubeconfig', kubeconfig] : []), ...(context ? ['--context', context] : []), '-n', run.plan.namespace];
  const adminPasswordCommand = notes.admin
    ? `${[...kubectl, 'get', 'secret', notes.admin.secret, '-o', `jsonpath={.data.${notes.admin.passwordKey}}`].map(shellWord).join(' ')} | base64 -d; echo`
    : undefined;
  return { type: 'notes', notes, ...(adminPasswordCommand ? { adminPasswordCommand } : {}) };
}
