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

export interface RunResult {
  /** Units the start-up cleanup could not remove cleanly. */
  readonly cleanupFailures: number;
  /** The loop ended because the connection to systemd's bus was lost (the caller exits non-zero). */
  readonly busLost?: boolean;
}

export async function runAgent(o: RunOptions): Promise<RunResult> {
  const apiTimeoutMs = o.apiTimeoutMs ?? 30_000;
  // Fail closed: without a complete list, nothing is touched (PodListError to the caller).
  let initial: { pods: ApiPod[]; resourceVersion: string } | undefined = await listNodePodList({ kubeconfig: o.kubeconfig, node: o.node, timeoutMs: apiTimeoutMs });
  const mgr = await SystemdManager.connect({ session: o.session, address: o.busAddress, callTimeoutMs: o.callTimeoutMs });
  let cleanup: CleanupResult;
  try {
    // The cleanup's JobRemoved signals without Subscribe() (watchJobs says why); the loop subscribes after it.
    await mgr.watchJobs();
    cleanup = await runCleanup({ ...o, dryRun: false, pods: initial.pods, log: o.cleanupLog, mgr });
  } catch (e) {
    mgr.close();
    throw e;
  }
  if (o.signal.aborted) {
    mgr.close();
    return { cleanupFailures: cleanup.failures.length };
  }

  let api: Awaited<ReturnType<typeof apiClient>>;
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
    const tracker = new UnitTracker(mgr, (unit) => reconciler?.unitChanged(unit), (unit, e) => o.log.log('WARN', `The state of the systemd unit [${unit}] could not be read: ${e.message}`, { unit, action: 'observe' }));
    // Signals first, so no JobRemoved or PropertiesChanged of our own starts is missed.
    await mgr.Subscribe();
    await tracker.start();
    reconciler = new Reconciler({
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
    const r = reconciler;

    const presence = new NodePresence(api, o.node, o.nodeIP, o.maxPods);
    let registered = false;
    let heartbeatFailing = false;
    const heartbeat = async (withStatus: boolean): Promise<void> => {
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
    await heartbeat(true);

    watcher = new PodWatcher(
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
    watcher.start(initial as { pods: ApiPod[]; resourceVersion: string });
    // the book has them now: no second copy of the list kept for the life of the run (issue 36)
    initial = undefined;
    let ticks = 0;
    ticker = setInterval(() => {
      ticks++;
      // The node's status every minute, the Lease every tick (the kubelet's 10 s).
      void heartbeat(ticks % 6 === 0);
      r.recheckBlocked();
    }, o.leaseRenewMs ?? LEASE_RENEW_SECONDS * 1000);

    o.log.log('INFO', `Watching the pods of node [${o.node}] (resync every ${Math.round(o.resyncMs / 1000)} s).`, { action: 'watch' });
    await o.ready?.();
    const lost = await Promise.race([
      mgr.lost,
      new Promise<undefined>((resolve) => {
        if (o.signal.aborted) resolve(undefined);
        else o.signal.addEventListener('abort', () => resolve(undefined), { once: true });
      }),
    ]);
    if (lost) {
      // Without the bus no state arrives and nothing can be started or stopped: keeping on would
      // be running blind. A fresh agent (Restart=always) reconnects and adopts the units.
      busLost = true;
      o.log.log('ERROR', `The connection to ${lost.bus} was lost (${lost.reason}); stopping so that a new agent connects again, the systemd units keep running.`, { action: 'disconnect' });
    } else {
      o.log.log('INFO', 'Stopping; the systemd units keep running.', { action: 'stop' });
    }
  } finally {
    clearInterval(ticker);
    await watcher?.stop();
    await reconciler?.stop();
    mgr.close();
    api.close();
  }
  return { cleanupFailures: cleanup.failures.length, busLost };
}
