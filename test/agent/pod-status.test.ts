import { podStatus, statusIsCurrent, UnitState } from '../../src/agent/pod-status';

const NOW = new Date('2026-03-01T12:00:00.500Z');
const T0 = Date.parse('2026-03-01T11:59:00.250Z') * 1000; // µs, as systemd gives ExecMainStartTimestamp
const T1 = T0 + 30_000_000;

const pod = (spec: Record<string, unknown> = {}, status?: Record<string, unknown>): any => ({
  metadata: { name: 'p', namespace: 'default', uid: 'u1' },
  spec: { restartPolicy: 'Always', containers: [{ name: 'main', image: 'svc:1' }], ...spec },
  status,
});

const running: UnitState = { activeState: 'active', subState: 'running', execMainStartTimestamp: T0, execMainCode: 0, execMainStatus: 0, result: 'success', nRestarts: 0 };
const status = (p: any, states: Record<string, UnitState | undefined>, extra: Partial<Parameters<typeof podStatus>[0]> = {}) =>
  podStatus({
    pod: p,
    units: [...(p.spec.initContainers ?? []).map((c: any) => ({ container: c.name, image: c.image, init: true, state: states[c.name] })),
      ...p.spec.containers.map((c: any) => ({ container: c.name, image: c.image, init: false, state: states[c.name] }))],
    hostIP: '10.0.0.5',
    now: NOW,
    ...extra,
  });
const cond = (s: Record<string, unknown>, type: string) => (s.conditions as any[]).find((c) => c.type === type);

describe('pod status from unit state', () => {
  it('is Running and Ready when every container unit is active (running), startedAt in whole seconds', () => {
    const s = status(pod(), { main: running });
    expect(s.phase).toBe('Running');
    expect((s.containerStatuses as any[])[0]).toEqual({
      name: 'main', image: 'svc:1', imageID: '', ready: true, started: true, restartCount: 0,
      state: { running: { startedAt: '2026-03-01T11:59:00Z' } }, lastState: {},
    });
    expect(cond(s, 'Ready')).toEqual({ type: 'Ready', status: 'True', lastTransitionTime: '2026-03-01T12:00:00Z' });
    expect(cond(s, 'ContainersReady').status).toBe('True');
    expect(s).toMatchObject({ hostIP: '10.0.0.5', podIP: '10.0.0.5', reason: null, message: null, initContainerStatuses: null });
  });

  it('is Pending (ContainerCreating) until systemd has said anything', () => {
    const s = status(pod(), { main: undefined });
    expect(s.phase).toBe('Pending');
    expect((s.containerStatuses as any[])[0].state).toEqual({ waiting: { reason: 'ContainerCreating' } });
    expect(cond(s, 'Ready')).toMatchObject({ status: 'False', reason: 'ContainersNotReady' });
  });

  it('does not take a start whose ActiveState has not arrived yet (inactive, a start time, no exit) for a finished run', () => {
    const starting: UnitState = { activeState: 'inactive', subState: 'dead', execMainStartTimestamp: T1, execMainExitTimestamp: T0 };
    const s = status(pod(), { main: starting });
    expect(s.phase).toBe('Pending');
    expect((s.containerStatuses as any[])[0].state).toEqual({ waiting: { reason: 'ContainerCreating' } });
    const ended = status(pod({ restartPolicy: 'Never' }), { main: { ...starting, execMainExitTimestamp: T1 + 1, execMainCode: 1, execMainStatus: 3, result: 'exit-code' } });
    expect((ended.containerStatuses as any[])[0].state.terminated).toMatchObject({ exitCode: 3 });
  });

  it('maps exit 3 with Never to terminated.exitCode 3, reason Error, phase Failed', () => {
    const s = status(pod({ restartPolicy: 'Never' }), { main: { activeState: 'failed', subState: 'failed', execMainStartTimestamp: T0, execMainExitTimestamp: T1, execMainCode: 1, execMainStatus: 3, result: 'exit-code', nRestarts: 0 } });
    expect(s.phase).toBe('Failed');
    expect((s.containerStatuses as any[])[0].state.terminated).toEqual({ exitCode: 3, reason: 'Error', message: 'systemd: exit-code', startedAt: '2026-03-01T11:59:00Z', finishedAt: '2026-03-01T11:59:30Z' });
  });

  it('maps a killed process to 128 + signal and an OOM kill to OOMKilled', () => {
    const killed = status(pod({ restartPolicy: 'Never' }), { main: { activeState: 'failed', subState: 'failed', execMainStartTimestamp: T0, execMainCode: 2, execMainStatus: 9, result: 'signal' } });
    expect((killed.containerStatuses as any[])[0].state.terminated).toMatchObject({ exitCode: 137, reason: 'Error' });
    const oom = status(pod({ restartPolicy: 'Never' }), { main: { activeState: 'failed', subState: 'failed', execMainStartTimestamp: T0, execMainCode: 2, execMainStatus: 9, result: 'oom-kill' } });
    expect((oom.containerStatuses as any[])[0].state.terminated.reason).toBe('OOMKilled');
  });

  it('is Succeeded when a Never/OnFailure container exits 0 (RemainAfterExit: active, exited)', () => {
    const done: UnitState = { activeState: 'active', subState: 'exited', execMainStartTimestamp: T0, execMainExitTimestamp: T1, execMainCode: 1, execMainStatus: 0, result: 'success' };
    expect(status(pod({ restartPolicy: 'Never' }), { main: done }).phase).toBe('Succeeded');
    expect(status(pod({ restartPolicy: 'OnFailure' }), { main: done }).phase).toBe('Succeeded');
    expect((status(pod({ restartPolicy: 'Never' }), { main: done }).containerStatuses as any[])[0].state.terminated).toMatchObject({ exitCode: 0, reason: 'Completed' });
  });

  it('shows a unit waiting to restart as CrashLoopBackOff with the last exit, restartCount from NRestarts; the pod stays Running', () => {
    const s = status(pod(), { main: { activeState: 'activating', subState: 'auto-restart', execMainStartTimestamp: T0, execMainExitTimestamp: T1, execMainCode: 1, execMainStatus: 3, result: 'exit-code', nRestarts: 2 } });
    const cs = (s.containerStatuses as any[])[0];
    expect(s.phase).toBe('Running');
    expect(cs).toMatchObject({ ready: false, restartCount: 2, state: { waiting: { reason: 'CrashLoopBackOff' } }, lastState: { terminated: { exitCode: 3, reason: 'Error' } } });
  });

  it('keeps the previous run as lastState once the restarted unit runs again', () => {
    const previousRun: UnitState = { activeState: 'failed', execMainStartTimestamp: T0, execMainExitTimestamp: T1, execMainCode: 1, execMainStatus: 3, result: 'exit-code' };
    const s = status(pod(), { main: { ...running, execMainStartTimestamp: T1 + 2_000_000, nRestarts: 1, previousRun } });
    expect((s.containerStatuses as any[])[0]).toMatchObject({ ready: true, restartCount: 1, lastState: { terminated: { exitCode: 3, finishedAt: '2026-03-01T11:59:30Z' } } });
  });

  it('waits for init containers: Pending while the oneshot runs, Running once it exited 0', () => {
    const p = pod({ initContainers: [{ name: 'prep', image: 'svc:1' }] });
    const runningInit: UnitState = { activeState: 'activating', subState: 'start', execMainStartTimestamp: T0 };
    const waiting = status(p, { prep: runningInit, main: { activeState: 'inactive', subState: 'dead' } });
    expect(waiting.phase).toBe('Pending');
    expect(cond(waiting, 'Initialized')).toMatchObject({ status: 'False', reason: 'ContainersNotInitialized' });
    expect((waiting.initContainerStatuses as any[])[0].state.running).toBeDefined();
    const ok = status(p, { prep: { activeState: 'active', subState: 'exited', execMainStartTimestamp: T0, execMainCode: 1, execMainStatus: 0, result: 'success' }, main: running });
    expect(ok.phase).toBe('Running');
    expect(cond(ok, 'Initialized').status).toBe('True');
    expect((ok.initContainerStatuses as any[])[0]).toMatchObject({ ready: false, state: { terminated: { exitCode: 0, reason: 'Completed' } } });
  });

  it('says why a blocked pod cannot run', () => {
    const s = status(pod(), { main: undefined }, { blocked: { phase: 'Pending', reason: 'CommandNotFound', message: 'the command /pk/svc-1/x of container main does not exist' } });
    expect(s).toMatchObject({ phase: 'Pending', reason: 'CommandNotFound', message: 'the command /pk/svc-1/x of container main does not exist' });
    expect((s.containerStatuses as any[])[0].state).toEqual({ waiting: { reason: 'CommandNotFound', message: 'the command /pk/svc-1/x of container main does not exist' } });
  });

  it('keeps transition times and startTime, so an unchanged state is no change (no patch)', () => {
    const first = status(pod(), { main: running });
    const later = status(pod({}, { ...first, qosClass: 'BestEffort' }), { main: running }, { now: new Date('2026-03-01T13:00:00Z') });
    expect(later).toEqual(first);
    expect(statusIsCurrent({ ...first, qosClass: 'BestEffort' }, later)).toBe(true);
    const stopped = status(pod({}, first), { main: { ...running, activeState: 'failed', subState: 'failed', execMainCode: 1, execMainStatus: 1 } }, { now: new Date('2026-03-01T13:00:00Z') });
    expect(statusIsCurrent(first, stopped)).toBe(false);
    expect(cond(stopped, 'Ready').lastTransitionTime).toBe('2026-03-01T13:00:00Z');
    expect(cond(stopped, 'PodScheduled').lastTransitionTime).toBe('2026-03-01T12:00:00Z');
  });

  it('takes the status as kube-apiserver answers it (lastProbeTime: null on every condition) as unchanged', () => {
    const sent = status(pod(), { main: running });
    // What GET returns after the agent's merge patch (v1.34): conditions carry `lastProbeTime: null`.
    const stored = { ...sent, qosClass: 'BestEffort', conditions: (sent.conditions as any[]).map((c) => ({ lastProbeTime: null, ...c })) };
    const again = status(pod({}, stored), { main: running }, { now: new Date('2026-03-01T13:00:00Z') });
    expect(statusIsCurrent(stored, again)).toBe(true);
    // A value where the agent wants none is still a change.
    expect(statusIsCurrent({ ...stored, containerStatuses: (sent.containerStatuses as any[]).map((c) => ({ ...c, lastState: { terminated: { exitCode: 1 } } })) }, again)).toBe(false);
  });
});
