/**
 * `agent run`: the start-up cleanup (exactly `agent cleanup`'s decisions, log lines and
 * fail-closed refusal), then the reconcile loop until the caller's signal aborts it. The pod list
 * is read once, for the cleanup and as the watch's starting point, so nothing between the two
 * is missed. One bus connection serves both, and every unit change goes through one lifecycle
 * (unit-lifecycle.ts). Stopping leaves every unit running: the units are not the agent's children. A lost
 * bus connection ends the loop too (`busLost`): the agent's unit restarts it, and the new agent
 * connects again and adopts the units.
 */
import type { PodSecurityLevel } from '../systemd/defaults';
import { DEFAULT_CONCURRENCY, DEFAULT_JOB_TIMEOUT_SECONDS, LEASE_RENEW_SECONDS, SYSTEMD_NODE } from '../systemd/defaults';
import { apiClient } from './api';
import { HeapUpkeep } from './heap';
import type { ApiPod } from './api-pod';
import { CleanupOptions, CleanupResult, runCleanup } from './cleanup';
import type { Logger } from './log';
import { NodePresence } from './node-lease';
import { listNodePodList } from './pods';
import { Reconciler } from './reconcile';
import { SystemdManager } from './systemd-dbus';
import { UnitOwnership } from './ownership';
import { UnitLifecycle } from './unit-lifecycle';
import { UnitTracker } from './unit-state';
import { PodWatcher } from './watch-pods';

export interface RunOptions extends Omit<CleanupOptions, 'dryRun' | 'pods' | 'log' | 'stateDir'> {
  /** The agent's own state: which unit files it wrote (ownership.ts). */
  readonly stateDir: string;
  /** The node's pod policy. @default DEFAULT_POD_SECURITY */
  readonly podSecurity?: PodSecurityLevel;
  /** @default DEFAULT_MAX_PODS */
  readonly maxPods?: number;
  /** Between full relists. */
  readonly resyncMs: number;
  /** The node's address: Node InternalIP, the pods' hostIP. */
  readonly nodeIP: string;
  /** The cleanup's records (target uyuni_cdk::agent::cleanup). */
  readonly cleanupLog: Logger;
  /** The loop's records (target uyuni_cdk::agent::run). */
  readonly log: Logger;
  /** Aborting it stops the loop. */
  readonly signal: AbortSignal;
  /** Called once the cleanup is done and the loop runs (sd_notify READY). */
  readonly ready?: () => Promise<void> | void;
  /** @default LEASE_RENEW_SECONDS * 1000 */
  readonly leaseRenewMs?: number;
  /** First back-off of the watch after an error. @default 200 */
  readonly backoffMs?: number;
}

/** The agent's API client (api.ts). */
type AgentApi = Awaited<ReturnType<typeof apiClient>>;

export interface RunResult {
  /** Units the start-up cleanup could not remove cleanly. */
  readonly cleanupFailures: number;
  /** The loop ended because the connection to systemd's bus was lost (the caller exits non-zero). */
  readonly busLost?: boolean;
}

/**
 * The start-up cleanup over the pods just listed, on the bus connection the loop keeps; the
 * connection is closed when the cleanup fails.
 */
async function startUpCleanup(o: RunOptions, pods: ApiPod[]): Promise<{ mgr: SystemdManager; cleanup: CleanupResult }> {
  const mgr = await SystemdManager.connect({ session: o.session, address: o.busAddress, callTimeoutMs: o.callTimeoutMs });
  try {
    // The cleanup's JobRemoved signals without Subscribe() (watchJobs says why); the loop subscribes after it.
    await mgr.watchJobs();
    return { mgr, cleanup: await runCleanup({ ...o, dryRun: false, pods, log: o.cleanupLog, mgr }) };
  } catch (e) {
    mgr.close();
    throw e;
  }
}

/** The units' states followed (signals first, so no JobRemoved or PropertiesChanged of our own starts is missed), and the reconciler they report to. */
async function startReconciler(mgr: SystemdManager, api: AgentApi, o: RunOptions): Promise<Reconciler> {
  // The tracker may report a unit before the reconciler exists: such a report goes nowhere.
  const made: { reconciler?: Reconciler } = {};
  const tracker = new UnitTracker(mgr, (unit) => made.reconciler?.unitChanged(unit), (unit, e) => o.log.log('WARN', `The state of the systemd unit [${unit}] could not be read: ${e.message}`, { unit, action: 'observe' }));
  await mgr.Subscribe();
  await tracker.start();
  made.reconciler = new Reconciler({
    units: new UnitLifecycle(mgr, { unitDir: o.unitDir, slice: o.slice, ownership: new UnitOwnership(o.stateDir), concurrency: o.concurrency ?? DEFAULT_CONCURRENCY, log: o.log }),
    tracker, api,
    render: { session: o.session, packageDir: o.packageDir, kubeconfig: o.kubeconfig, slice: o.slice },
    unitDir: o.unitDir,
    hostIP: o.nodeIP,
    concurrency: o.concurrency ?? DEFAULT_CONCURRENCY,
    podSecurity: o.podSecurity,
    maxPods: o.maxPods,
    stopMarginMs: Math.min(o.jobTimeoutMs ?? DEFAULT_JOB_TIMEOUT_SECONDS * 1000, 10_000),
    log: o.log,
  });
  return made.reconciler;
}

/**
 * The node's heartbeat: registered on the first beat, then its Lease renewed on each and its
 * status posted when asked; a failure is logged once, and its end once.
 */
function nodeHeartbeat(presence: NodePresence, o: RunOptions): (withStatus: boolean) => Promise<void> {
  let registered = false;
  let heartbeatFailing = false;
  return async (withStatus: boolean): Promise<void> => {
    try {
      if (!registered) {
        if (await presence.register()) o.log.log('INFO', `The node [${o.node}] was registered (label and taint ${SYSTEMD_NODE.key}=${SYSTEMD_NODE.value}).`, { action: 'register' });
        registered = true;
        withStatus = true;
      }
      if (withStatus) await presence.postStatus();
      await presence.renewLease();
      if (heartbeatFailing) o.log.log('INFO', `The Lease of node [${o.node}] is renewed again.`, { action: 'lease' });
      heartbeatFailing = false;
    } catch (e) {
      if (!heartbeatFailing) o.log.log('WARN', `The Lease of node [${o.node}] could not be renewed: ${(e as Error).message}`, { action: 'lease' });
      heartbeatFailing = true;
    }
  };
}

/** The watch of the node's pods, feeding the reconciler; when the API answers again, the pods are reconciled and the node beats. */
function podWatcher(api: AgentApi, o: RunOptions, apiTimeoutMs: number, r: Reconciler, heartbeat: (withStatus: boolean) => Promise<void>): PodWatcher {
  return new PodWatcher(
    { api, kubeconfig: o.kubeconfig, node: o.node, resyncMs: o.resyncMs, apiTimeoutMs, backoffMs: o.backoffMs },
    {
      listed: (pods) => r.listed(pods),
      changed: (type, pod) => r.changed(type, pod),
      reachability: (ok, why) => {
        if (ok) {
          o.log.log('INFO', 'The API answers again; the pods of this node are reconciled from where the watch stopped.', { action: 'reconnect' });
          r.reachable();
          void heartbeat(true);
        } else {
          o.log.log('WARN', `The API cannot be reached (${why}); the running systemd units are left alone until it answers.`, { action: 'disconnect' });
        }
      },
    },
  );
}

/**
 * Every tick the Lease (the kubelet's 10 s) and the blocked pods again, and the heap's garbage
 * collected when it grew (heap.ts); every sixth, the node's status too (every minute).
 */
function startTicker(o: RunOptions, r: Reconciler, heartbeat: (withStatus: boolean) => Promise<void>): NodeJS.Timeout {
  let ticks = 0;
  const heap = new HeapUpkeep();
  return setInterval(() => {
    ticks++;
    void heartbeat(ticks % 6 === 0);
    r.recheckBlocked();
    heap.tick();
  }, o.leaseRenewMs ?? LEASE_RENEW_SECONDS * 1000);
}

/** Until the caller's signal aborts the loop or the bus connection is lost (true: lost, logged as such). */
async function untilStopped(mgr: SystemdManager, o: RunOptions): Promise<boolean> {
  const lost = await Promise.race([
    mgr.lost,
    new Promise<undefined>((resolve) => {
      if (o.signal.aborted) resolve(undefined);
      else o.signal.addEventListener('abort', () => resolve(undefined), { once: true });
    }),
  ]);
  if (!lost) {
    o.log.log('INFO', 'Stopping; the systemd units keep running.', { action: 'stop' });
    return false;
  }
  // Without the bus no state arrives and nothing can be started or stopped: keeping on would
  // be running blind. A fresh agent (Restart=always) reconnects and adopts the units.
  o.log.log('ERROR', `The connection to ${lost.bus} was lost (${lost.reason}); stopping so that a new agent connects again, the systemd units keep running.`, { action: 'disconnect' });
  return true;
}

export async function runAgent(o: RunOptions): Promise<RunResult> {
  const apiTimeoutMs = o.apiTimeoutMs ?? 30_000;
  // Fail closed: without a complete list, nothing is touched (PodListError to the caller).
  let initial: { pods: ApiPod[]; resourceVersion: string } | undefined = await listNodePodList({ kubeconfig: o.kubeconfig, node: o.node, timeoutMs: apiTimeoutMs });
  const { mgr, cleanup } = await startUpCleanup(o, initial.pods);
  if (o.signal.aborted) {
    mgr.close();
    return { cleanupFailures: cleanup.failures.length };
  }

  let api: AgentApi;
  try {
    api = await apiClient(o.kubeconfig, apiTimeoutMs);
  } catch (e) {
    mgr.close();
    throw e;
  }
  let reconciler: Reconciler | undefined;
  let watcher: PodWatcher | undefined;
  let ticker: NodeJS.Timeout | undefined;
  let busLost = false;
  try {
    reconciler = await startReconciler(mgr, api, o);
    const heartbeat = nodeHeartbeat(new NodePresence(api, o.node, o.nodeIP, o.maxPods), o);
    await heartbeat(true);
    watcher = podWatcher(api, o, apiTimeoutMs, reconciler, heartbeat);
    watcher.start(initial);
    // the book has them now: no second copy of the list kept for the life of the run (issue 36)
    initial = undefined;
    ticker = startTicker(o, reconciler, heartbeat);
    o.log.log('INFO', `Watching the pods of node [${o.node}] (resync every ${Math.round(o.resyncMs / 1000)} s).`, { action: 'watch' });
    await o.ready?.();
    busLost = await untilStopped(mgr, o);
  } finally {
    clearInterval(ticker);
    await watcher?.stop();
    await reconciler?.stop();
    mgr.close();
    api.close();
  }
  return { cleanupFailures: cleanup.failures.length, busLost };
}
