/**
 * Pods of a step Job: what each is doing, and whether it is stuck in a way that never fails
 * the Job by itself (kubernetes#66756). The waiter turns a blocker that lasts longer than its
 * grace window into a step failure naming the reason.
 */

/** Waiting reasons that do not resolve by waiting longer (usually). */
export const STUCK_REASONS = ['ImagePullBackOff', 'ErrImagePull', 'CreateContainerConfigError', 'InvalidImageName', 'CrashLoopBackOff'] as const;

function allContainerStatuses(pod: any): any[] {
  return [...(pod?.status?.initContainerStatuses ?? []), ...(pod?.status?.containerStatuses ?? [])];
}

/** A reason this pod cannot make progress (`ImagePullBackOff: ...`), or undefined. */
export function podBlocker(pod: any): string | undefined {
  for (const cs of allContainerStatuses(pod)) {
    const w = cs?.state?.waiting;
    if (w && (STUCK_REASONS as readonly string[]).includes(w.reason)) {
      return `${w.reason}${w.message ? `: ${w.message}` : ''} (container ${cs.name})`;
    }
  }
  const sched = (pod?.status?.conditions ?? []).find((c: any) => c?.type === 'PodScheduled');
  if (sched?.status === 'False' && sched.reason === 'Unschedulable') {
    return `Unschedulable${sched.message ? `: ${sched.message}` : ''}`;
  }
  return undefined;
}

/** One line on what a pod is doing: phase, and a waiting reason when there is one. */
export function podSummary(pod: any): string {
  const phase = pod?.status?.phase ?? 'Pending';
  for (const cs of allContainerStatuses(pod)) {
    const w = cs?.state?.waiting;
    if (w?.reason) return `${phase}/${w.reason}`;
  }
  return phase;
}

/** Terminated containers: name, exit code, reason (for the failure report). */
export function terminations(pod: any): Array<{ container: string; exitCode: number; reason: string; message?: string }> {
  return allContainerStatuses(pod)
    .filter((cs) => cs?.state?.terminated)
    .map((cs) => ({
      container: cs.name,
      exitCode: cs.state.terminated.exitCode,
      reason: cs.state.terminated.reason ?? '',
      message: cs.state.terminated.message,
    }));
}

/** Containers whose logs can be read now (running or terminated), init containers first. */
export function startedContainers(pod: any): string[] {
  return allContainerStatuses(pod)
    .filter((cs) => cs?.state?.running || cs?.state?.terminated)
    .map((cs) => cs.name);
}

/**
 * The stuck verdict over time: `since` is when the waiter first saw the blocker.
 * Returns the failure reason once the blocker outlasted `graceMs`.
 */
export function stuckTooLong(blocker: string | undefined, sinceMs: number | undefined, nowMs: number, graceMs: number): string | undefined {
  if (!blocker || sinceMs === undefined) return undefined;
  return nowMs - sinceMs >= graceMs ? `${blocker}, for ${Math.round((nowMs - sinceMs) / 1000)}s` : undefined;
}
