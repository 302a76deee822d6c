/**
 * Unit state → pod status, as a pure function (the kubelet's status manager for a systemd
 * backend). systemd's view of each container's unit (ActiveState, SubState, ExecMain*, Result,
 * NRestarts, from PropertiesChanged signals) becomes `containerStatuses`, the phase and the
 * Ready/ContainersReady conditions. Timestamps are whole seconds, as the API server stores them,
 * so an unchanged state computes an identical status and no patch is sent.
 */
import type { ApiPod } from './api-pod';

/** The unit properties the status is computed from (systemd's names, lower camel case). */
export interface UnitState {
  readonly activeState?: string;
  readonly subState?: string;
  /** µs since the epoch; 0 when the main process never started. */
  readonly execMainStartTimestamp?: number;
  readonly execMainExitTimestamp?: number;
  /** CLD_EXITED (1), CLD_KILLED (2), CLD_DUMPED (3); 0 while running. */
  readonly execMainCode?: number;
  /** The exit status, or the signal number when killed. */
  readonly execMainStatus?: number;
  /** `success`, `exit-code`, `signal`, `core-dump`, `timeout`, `oom-kill`, ... */
  readonly result?: string;
  readonly nRestarts?: number;
  /** The run before the current one (kept by the tracker when a run ends), for `lastState`. */
  readonly previousRun?: UnitState;
}

/** Why a pod has no units: its command is not installed (Pending) or it cannot be rendered (Failed). */
export interface Blocked {
  readonly phase: 'Pending' | 'Failed';
  readonly reason: string;
  readonly message: string;
}

export interface ContainerUnit {
  readonly container: string;
  readonly image?: string;
  readonly init: boolean;
  /** Undefined until systemd has told anything about the unit. */
  readonly state?: UnitState;
}

const CLD_EXITED = 1;

function seconds(us: number | undefined): string | undefined {
  if (!us) return undefined;
  return new Date(Math.floor(us / 1000)).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** `state.terminated` of the last run: exit code (128 + signal when killed) and the kubelet's reasons. */
function terminated(s: UnitState): Record<string, unknown> {
  const exitCode = s.execMainCode === CLD_EXITED || s.execMainCode === undefined ? (s.execMainStatus ?? 0) : 128 + (s.execMainStatus ?? 0);
  const reason = s.result === 'oom-kill' ? 'OOMKilled' : exitCode === 0 ? 'Completed' : 'Error';
  return {
    exitCode,
    reason,
    ...(s.result && s.result !== 'success' ? { message: `systemd: ${s.result}` } : {}),
    ...(seconds(s.execMainStartTimestamp) ? { startedAt: seconds(s.execMainStartTimestamp) } : {}),
    ...(seconds(s.execMainExitTimestamp) ? { finishedAt: seconds(s.execMainExitTimestamp) } : {}),
  };
}

type Kind = 'waiting' | 'running' | 'restarting' | 'terminated';

interface Classified {
  readonly kind: Kind;
  readonly state: Record<string, unknown>;
  readonly lastState: Record<string, unknown>;
}

function classify(s: UnitState | undefined): Classified {
  const ran = Boolean(s?.execMainStartTimestamp);
  if (!s || !s.activeState) return { kind: 'waiting', state: { waiting: { reason: 'ContainerCreating' } }, lastState: {} };
  const last = (s.nRestarts ?? 0) > 0 && s.previousRun ? { terminated: terminated(s.previousRun) } : {};
  if (s.activeState === 'activating' && s.subState === 'auto-restart') {
    return { kind: 'restarting', state: { waiting: { reason: 'CrashLoopBackOff', message: 'systemd restarts the unit (RestartSec)' } }, lastState: { terminated: terminated(s) } };
  }
  if ((s.activeState === 'active' && s.subState === 'running') || s.activeState === 'reloading' || (s.activeState === 'deactivating' && ran) || (s.activeState === 'activating' && s.subState === 'start' && ran)) {
    const startedAt = seconds(s.execMainStartTimestamp);
    return { kind: 'running', state: { running: startedAt ? { startedAt } : {} }, lastState: last };
  }
  // inactive with a start time is a finished run only once its exit is recorded too: systemd
  // signals the Service interface's ExecMainStartTimestamp of a new start before the Unit
  // interface's ActiveState, and that moment is a start, not an exit.
  const exited = (s.execMainExitTimestamp ?? 0) >= (s.execMainStartTimestamp ?? 0) && Boolean(s.execMainExitTimestamp);
  if ((s.activeState === 'active' && s.subState === 'exited') || s.activeState === 'failed' || (s.activeState === 'inactive' && ran && exited)) {
    return { kind: 'terminated', state: { terminated: terminated(s) }, lastState: {} };
  }
  return { kind: 'waiting', state: { waiting: { reason: 'ContainerCreating' } }, lastState: last };
}

function condition(type: string, ok: boolean, previous: unknown, now: string, reason?: string): Record<string, unknown> {
  const old = Array.isArray(previous) ? (previous as Array<Record<string, unknown>>).find((c) => c?.type === type) : undefined;
  const status = ok ? 'True' : 'False';
  const lastTransitionTime = old?.status === status && typeof old.lastTransitionTime === 'string' ? old.lastTransitionTime : now;
  return { type, status, lastTransitionTime, ...(ok || !reason ? {} : { reason }) };
}

export interface StatusInput {
  readonly pod: ApiPod;
  readonly units: readonly ContainerUnit[];
  readonly hostIP: string;
  readonly blocked?: Blocked;
  /** Now, for transition times and a first startTime. */
  readonly now: Date;
}

const iso = (d: Date): string => d.toISOString().replace(/\.\d{3}Z$/, 'Z');

/** The status the pod should have; every key the agent owns is present (null: remove it). */
export function podStatus(input: StatusInput): Record<string, unknown> {
  const { pod, units, hostIP, blocked } = input;
  const now = iso(input.now);
  const old = pod.status ?? {};
  const restartPolicy = pod.spec?.restartPolicy ?? 'Always';
  const containers = [...(pod.spec?.initContainers ?? []).map((c) => ({ c, init: true })), ...(pod.spec?.containers ?? []).map((c) => ({ c, init: false }))];

  const rows = containers.map(({ c, init }) => {
    const unit = units.find((u) => u.container === c.name && u.init === init);
    const waitingFor = blocked ? { waiting: { reason: blocked.reason, message: blocked.message } } : undefined;
    const k: Classified = waitingFor ? { kind: 'waiting', state: waitingFor, lastState: {} } : classify(unit?.state);
    return {
      init,
      kind: k.kind,
      status: {
        name: c.name,
        image: c.image ?? '',
        imageID: '',
        ready: !init && k.kind === 'running',
        started: k.kind === 'running',
        restartCount: unit?.state?.nRestarts ?? 0,
        state: k.state,
        lastState: k.lastState,
      },
      exitCode: (k.state.terminated as { exitCode?: number } | undefined)?.exitCode,
    };
  });
  const inits = rows.filter((r) => r.init);
  const apps = rows.filter((r) => !r.init);
  const initialized = inits.every((r) => r.kind === 'terminated' && r.exitCode === 0);
  const initFailed = inits.some((r) => r.kind === 'terminated' && r.exitCode !== 0);
  const ready = initialized && apps.length > 0 && apps.every((r) => r.kind === 'running');
  const allDone = apps.length > 0 && apps.every((r) => r.kind === 'terminated');
  const allSucceeded = allDone && apps.every((r) => r.exitCode === 0);
  // Terminated containers that systemd will not start again: Never, or OnFailure after success.
  const final = allDone && (restartPolicy === 'Never' || (restartPolicy === 'OnFailure' && allSucceeded));

  let phase: string;
  if (blocked) phase = blocked.phase;
  else if (initFailed && restartPolicy === 'Never') phase = 'Failed';
  else if (final) phase = allSucceeded ? 'Succeeded' : 'Failed';
  else if (initialized && apps.length > 0 && apps.every((r) => r.kind !== 'waiting')) phase = 'Running';
  else phase = 'Pending';

  const containersReason = ready ? undefined : 'ContainersNotReady';
  return {
    phase,
    reason: blocked?.reason ?? null,
    message: blocked?.message ?? null,
    hostIP,
    hostIPs: [{ ip: hostIP }],
    // The units run in the node's network namespace (hostNetwork).
    podIP: hostIP,
    podIPs: [{ ip: hostIP }],
    startTime: typeof old.startTime === 'string' ? old.startTime : now,
    conditions: [
      condition('PodScheduled', true, old.conditions, now),
      condition('Initialized', initialized, old.conditions, now, 'ContainersNotInitialized'),
      condition('ContainersReady', ready, old.conditions, now, containersReason),
      condition('Ready', ready, old.conditions, now, containersReason),
    ],
    initContainerStatuses: inits.length ? inits.map((r) => r.status) : null,
    containerStatuses: apps.map((r) => r.status),
  };
}

/** Whether the pod's current status already says everything `want` says (then no patch). */
export function statusIsCurrent(current: Record<string, unknown> | undefined, want: Record<string, unknown>): boolean {
  const have = current ?? {};
  return Object.entries(want).every(([k, v]) => (v === null ? have[k] === undefined || have[k] === null : sameJson(have[k], v)));
}

/**
 * Equal as the API means it: a field that is null is a field that is absent. kube-apiserver
 * answers every pod condition with `lastProbeTime: null` (an empty metav1.Time), which the agent
 * never sends: compared key by key, every pod's status differed after each start of the agent
 * and was patched again although nothing had changed.
 */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const present = (o: object) => Object.keys(o).filter((k) => (o as Record<string, unknown>)[k] !== undefined && (o as Record<string, unknown>)[k] !== null);
  const ka = present(a);
  const kb = present(b);
  return ka.length === kb.length && ka.every((k) => sameJson((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}
