/**
 * Stage 5, wait: until every wait of the step is done (readiness rules, the Jobs' pods streamed
 * to the logs, stuck pods, the step's timeout and the run's deadline). A failure drains what the
 * logs still have and fails the step with the pods concerned.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import { formatDuration } from '../../plan/duration';
import { StepLogs } from '../logs';
import { refOf } from '../manifests';
import { StepWaiter } from '../waiter';
import type { StepRun } from './context';

export interface Waited {
  readonly waiter: StepWaiter;
  readonly logs: StepLogs;
}

function waiterFor(s: StepRun, logs: StepLogs, applied: readonly KubernetesObject[]): StepWaiter {
  const step = s.step;
  const deadline = s.c.deadline;
  return new StepWaiter({
    cluster: s.cluster,
    waits: step.waits,
    jobs: s.jobs.map(refOf),
    logs,
    deadline: Math.min(s.stepDeadline, deadline),
    deadlineReason: s.stepDeadline <= deadline ? `timed out after ${formatDuration(step.timeoutSeconds)} (the step's timeout)` : 'the run\'s overall deadline passed',
    stuckGraceMs: s.c.stuckGraceSeconds * 1000,
    onProgress: (b, pods) => s.emit({ type: 'waiting', ...s.tag, elapsedSeconds: s.elapsed(), blockers: b, ...(pods.length ? { pods } : {}) }),
    initial: applied,
  });
}

/** `applied`: the objects as the apply answered them (when they satisfy every wait already, no watch is opened). */
export async function waitStage(s: StepRun, applied: readonly KubernetesObject[]): Promise<Waited> {
  const logs = new StepLogs(s.cluster, s.c.runDir, s.step.name, s.c.reporter);
  const waiter = waiterFor(s, logs, applied);
  const outcome = await waiter.run();
  if (!outcome.ok) {
    // A failed container's stream ends by itself; a stuck or hanging one never does.
    await logs.drain(200);
    const pods = [...(outcome.failedJobs ?? []).flatMap((j) => waiter.jobPods.get(j) ?? []), ...(outcome.failedPods ?? [])];
    logs.stop();
    await s.fail(outcome.reason!, pods, logs);
  }
  return { waiter, logs };
}
