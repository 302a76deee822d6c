/**
 * Pods of a step (a Job's, or a rollout's newest ReplicaSet's): what each is doing, and whether
 * it is stuck in a way that never fails its Job or Deployment by itself (kubernetes#66756). The
 * waiter turns a blocker that lasts longer than its grace window into a step failure naming the
 * reason. A container that is Running but has not passed its startup probe yet is not stuck,
 * however long that takes: the server sets itself up at its first start, for hours.
 */
import type { V1Container, V1ContainerStatus, V1Pod } from '@kubernetes/client-node';
import { formatDuration } from '../../plan/duration';

/** Waiting reasons that do not resolve by waiting longer (usually). */
export const STUCK_REASONS = ['ImagePullBackOff', 'ErrImagePull', 'CreateContainerConfigError', 'InvalidImageName', 'CrashLoopBackOff'] as const;

function allContainerStatuses(pod: V1Pod | undefined): V1ContainerStatus[] {
  return [...(pod?.status?.initContainerStatuses ?? []), ...(pod?.status?.containerStatuses ?? [])];
}

/** A reason this pod cannot make progress (`ImagePullBackOff: ...`), or undefined. */
export function podBlocker(pod: V1Pod | undefined): string | undefined {
  for (const cs of allContainerStatuses(pod)) {
    const w = cs?.state?.waiting;
    if (w?.reason && (STUCK_REASONS as readonly string[]).includes(w.reason)) {
      return `${w.reason}${w.message ? `: ${w.message}` : ''} (container ${cs.name})`;
    }
  }
  const sched = (pod?.status?.conditions ?? []).find((c) => c?.type === 'PodScheduled');
  if (sched?.status === 'False' && sched.reason === 'Unschedulable') {
    return `Unschedulable${sched.message ? `: ${sched.message}` : ''}`;
  }
  return undefined;
}

/**
 * Which stuck window a blocker belongs to: a failing pull alternates ErrImagePull and
 * ImagePullBackOff as the kubelet retries, and that is one window, not a new one per retry.
 */
export function blockerKind(blocker: string): string {
  const reason = blocker.split(/[:( ]/)[0];
  return reason === 'ErrImagePull' ? 'ImagePullBackOff' : reason;
}

/** One line on what a pod is doing: phase, and a waiting reason when there is one. */
export function podSummary(pod: V1Pod | undefined): string {
  const phase = pod?.status?.phase ?? 'Pending';
  for (const cs of allContainerStatuses(pod)) {
    const w = cs?.state?.waiting;
    if (w?.reason) return `${phase}/${w.reason}`;
  }
  return phase;
}

/** Terminated containers: name, exit code, reason (for the failure report). */
export function terminations(pod: V1Pod | undefined): Array<{ container: string; exitCode: number; reason: string; message?: string }> {
  return allContainerStatuses(pod)
    .filter((cs) => cs?.state?.terminated)
    .map((cs) => ({
      container: cs.name,
      exitCode: cs.state!.terminated!.exitCode,
      reason: cs.state!.terminated!.reason ?? '',
      message: cs.state!.terminated!.message,
    }));
}

/** Containers whose logs can be read now (running or terminated), init containers first. */
export function startedContainers(pod: V1Pod | undefined): string[] {
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
  return nowMs - sinceMs >= graceMs ? `${blocker}, for ${formatDuration(Math.round((nowMs - sinceMs) / 1000))}` : undefined;
}

// --- progress: what a user sees while waiting ---

/** One container as the progress line and the JSON `waiting` event show it. */
export interface ContainerProgress {
  readonly name: string;
  readonly init?: true;
  readonly state: 'waiting' | 'running' | 'terminated';
  /** Passed its startup probe (always true once running when it has none). */
  readonly started: boolean;
  readonly ready: boolean;
  readonly restartCount: number;
  /** Why it is waiting: ContainerCreating, CrashLoopBackOff, ImagePullBackOff, ... */
  readonly reason?: string;
  /** How the previous run of a restarted container ended. */
  readonly lastExit?: { readonly exitCode: number; readonly reason?: string };
  /** Whether the spec has a startup / readiness probe (what "not started / not ready" waits on). */
  readonly startupProbe: boolean;
  readonly readinessProbe: boolean;
}

export interface PodProgress {
  readonly pod: string;
  /** The pod's phase, or Terminating once it is being deleted. */
  readonly phase: string;
  readonly containers: readonly ContainerProgress[];
}

function containerProgress(cs: V1ContainerStatus | undefined, spec: V1Container, init: boolean): ContainerProgress {
  const state = cs?.state?.running ? 'running' : cs?.state?.terminated ? 'terminated' : 'waiting';
  const last = cs?.lastState?.terminated;
  return {
    name: spec.name,
    ...(init ? { init: true as const } : {}),
    state,
    started: cs?.started === true,
    ready: cs?.ready === true,
    restartCount: cs?.restartCount ?? 0,
    ...(state === 'waiting' ? { reason: cs?.state?.waiting?.reason ?? 'ContainerCreating' } : {}),
    ...(state === 'terminated' ? { reason: cs?.state?.terminated?.reason } : {}),
    ...(last ? { lastExit: { exitCode: last.exitCode, ...(last.reason ? { reason: last.reason } : {}) } } : {}),
    startupProbe: spec.startupProbe !== undefined,
    readinessProbe: spec.readinessProbe !== undefined,
  };
}

/** A pod's phase and every container's state, started, ready and restarts. */
export function podProgress(pod: V1Pod): PodProgress {
  const status = (list: V1ContainerStatus[] | undefined, name: string) => (list ?? []).find((c) => c.name === name);
  // Init containers that finished cleanly are history; the ones still to run or failing matter.
  const inits = (pod.spec?.initContainers ?? [])
    .map((c) => containerProgress(status(pod.status?.initContainerStatuses, c.name), c, true))
    .filter((c) => !(c.state === 'terminated' && c.reason === 'Completed'));
  const containers = (pod.spec?.containers ?? []).map((c) => containerProgress(status(pod.status?.containerStatuses, c.name), c, false));
  const sched = (pod.status?.conditions ?? []).find((c) => c.type === 'PodScheduled');
  const phase = pod.metadata?.deletionTimestamp ? 'Terminating'
    : `${pod.status?.phase ?? 'Pending'}${sched?.status === 'False' && sched.reason ? ` (${sched.reason})` : ''}`;
  return { pod: pod.metadata?.name ?? '', phase, containers: [...inits, ...containers] };
}

function containerText(c: ContainerProgress): string {
  let what: string;
  if (c.state === 'waiting') what = c.reason ?? 'waiting';
  else if (c.state === 'terminated') what = `exited${c.reason ? ` (${c.reason})` : ''}`;
  else if (!c.started) what = c.startupProbe ? 'starting (startup probe)' : 'starting';
  else if (!c.ready) what = c.readinessProbe ? 'started, not ready (readiness probe)' : 'started, not ready';
  else what = 'ready';
  const restarts = `${c.restartCount} restart${c.restartCount === 1 ? '' : 's'}`;
  const last = c.restartCount > 0 && c.lastExit ? ` (last exit ${c.lastExit.exitCode}${c.lastExit.reason ? ` ${c.lastExit.reason}` : ''})` : '';
  return `${c.init ? 'init ' : ''}${c.name} ${what}, ${restarts}${last}`;
}

/** `pod uyuni-7d9f8-x2k4p: Running, uyuni starting (startup probe), 0 restarts` */
export function describePod(p: PodProgress): string {
  return `pod ${p.pod}: ${[p.phase, ...p.containers.map(containerText)].join(', ')}`;
}

/** Ready=True: counts as a ready replica. */
export function podReady(pod: V1Pod): boolean {
  return (pod.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
}

/**
 * Coming up, not stuck: Running, not being deleted, and every container running (its startup or
 * readiness probe still pending) or ready; none waiting in a back-off or exited. What a server
 * in its hours-long first start looks like.
 */
export function comingUp(pod: V1Pod): boolean {
  if (pod.metadata?.deletionTimestamp || pod.status?.phase !== 'Running') return false;
  const cs = pod.status?.containerStatuses ?? [];
  return cs.length > 0 && cs.every((c) => c.ready === true || c.state?.running !== undefined);
}
