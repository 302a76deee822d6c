/**
 * Stage 5, wait: until every wait of the step is done (readiness rules, the Jobs' pods streamed
 * to the logs, stuck pods, the step's timeout and the run's deadline). A failure drains what the
 * logs still have and fails the step with the pods concerned.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import { formatDuration } from '../../../plan/duration';
import { ApiSilent } from '../../../kube/api-errors';
import { StepFailed } from '../../core/errors';
import { StepLogs } from '../step-logs';
import { refOf } from '../../core/manifests';
import { followLogsCommand } from '../next-command';
import { idText, inStartupProbe, WaitingPod } from '../../core/events';
import { StepWaiter } from '../waiter';
import type { V1StorageClass } from '@kubernetes/client-node';
import type { StepRun } from './context';

export interface Waited {
  readonly waiter: StepWaiter;
  readonly logs: StepLogs;
}

/** `pod uyuni-7d9f8-x2k4p of Deployment/uyuni (uyuni)` */
const podOf = (p: WaitingPod) => `pod ${p.pod} of ${idText(p.owner)}`;

/**
 * The first time a pod the step waits on is in its startup probe (a server's first start, hours
 * of setup that print nothing here): which, and the command that follows its logs. Once a step.
 */
function startingHint(s: StepRun): (pods: readonly WaitingPod[]) => void {
  let said = false;
  return (pods) => {
    const starting = pods.filter(inStartupProbe);
    if (said || starting.length === 0) return;
    said = true;
    s.emit({ type: 'starting', step: s.step.name, pods: starting.map(podOf), logs: followLogsCommand(s.c.planDir, s.c.plan, s.c.connection, s.step.name) });
  };
}

function waiterFor(s: StepRun, logs: StepLogs, applied: readonly KubernetesObject[], storageClasses?: Promise<V1StorageClass[]>): StepWaiter {
  const step = s.step;
  const hint = startingHint(s);
  const deadline = s.c.deadline;
  return new StepWaiter({
    cluster: s.cluster,
    waits: step.waits,
    jobs: s.jobs.map(refOf),
    logs,
    deadline: Math.min(s.stepDeadline, deadline),
    deadlineReason: s.stepDeadline <= deadline ? `timed out after ${formatDuration(step.timeoutSeconds)} (the step's timeout)` : 'the run\'s overall deadline passed',
    stuckGraceMs: s.c.stuckGraceSeconds * 1000,
    onProgress: (b, pods) => {
      s.emit({ type: 'waiting', ...s.tag, elapsedSeconds: s.elapsed(), blockers: b, ...(pods.length ? { pods } : {}) });
      hint(pods);
    },
    initial: applied,
    storageClasses,
  });
}

/**
 * `applied`: the objects as the apply answered them (when they satisfy every wait already, no
 * watch is opened); `storageClasses`: read beside the applies (readStorageClasses), when the
 * step waits for claims.
 */
export async function waitStage(s: StepRun, applied: readonly KubernetesObject[], storageClasses?: Promise<V1StorageClass[]>): Promise<Waited> {
  const logs = new StepLogs(s.cluster, s.c.runDir, s.step.name, s.c.reporter);
  const waiter = waiterFor(s, logs, applied, storageClasses);
  const outcome = await waiter.run();
  if (!outcome.ok && outcome.apiSilent) {
    // nothing more can be read (its pods, their logs): said as it is, the run stops
    logs.stop();
    s.emit({ type: 'step-failed', ...s.tag, elapsedSeconds: s.elapsed(), reason: outcome.reason!, pods: [] });
    throw new ApiSilent(s.step.name, `step ${s.step.name}: ${outcome.reason!}`);
  }
  if (!outcome.ok && outcome.starting?.length) {
    logs.stop();
    stillStarting(s, outcome.reason!, outcome.starting);
  }
  if (!outcome.ok) {
    // A failed container's stream ends by itself; a stuck or hanging one never does.
    await logs.drain(200);
    const pods = [...(outcome.failedJobs ?? []).flatMap((j) => waiter.jobPods.get(j) ?? []), ...(outcome.failedPods ?? [])];
    logs.stop();
    await s.fail(outcome.reason!, pods, logs);
  }
  return { waiter, logs };
}

/**
 * Out of time while the server is still in its startup probe: not a failure of the server. The
 * report says so, what goes on in the cluster, and that the same command waits on: exit 4 (not
 * finished, nothing failed), not 1.
 */
function stillStarting(s: StepRun, timedOut: string, pods: readonly WaitingPod[]): never {
  const which = pods.map(podOf).join(', ');
  const reason = `${timedOut.replace(/, still waiting for: .*$/s, '')} while the server is still starting: ${which} ${pods.length === 1 ? 'is' : 'are'} Running, `
    + 'in the startup probe (a first start sets the server up, which can take hours). Nothing is broken: it goes on setting itself up in the cluster; '
    + `follow it with ${followLogsCommand(s.c.planDir, s.c.plan, s.c.connection, s.step.name)}`;
  s.emit({ type: 'step-failed', ...s.tag, elapsedSeconds: s.elapsed(), reason, pods: [], stillStarting: true });
  throw new StepFailed(s.step.name, `step ${s.step.name}: ${reason}`, { stillStarting: true });
}
