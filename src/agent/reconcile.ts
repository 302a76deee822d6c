/**
 * The reconcile loop of `agent run`: the pods the API binds to the node (desired, pod-book.ts)
 * against the units the agent runs (actual), in batches (work-queue.ts). One batch
 *
 * 1. tears down the units of pods that are gone, terminating or replaced (unit-lifecycle.ts:
 *    StopUnit with the pod's grace period, a shorter deletion grace period ending in SIGKILL,
 *    ResetFailedUnit, one DisableUnitFiles, the files removed);
 * 2. renders the units of new pods with the one renderer, refusing what cannot run (an
 *    unrenderable pod: Failed; a command not installed under the package directory: Pending,
 *    rechecked, never a crash-looping unit), and writes changed files atomically;
 * 3. one Reload when systemd's view is stale (a file removed or replaced, NeedDaemonReload), one
 *    EnableUnitFiles, StartUnit (RestartUnit for a changed file);
 * 4. deletes the objects of terminating pods (pod-deletion.ts).
 *
 * Pod status follows the units' state (UnitTracker, from signals) and is written by status-writer.ts.
 */
import type { ApiClient } from './api';
import { ApiPod, podKeyOf } from './api-pod';
import type { Logger } from './log';
import { Managed, PodBook } from './pod-book';
import { deletePodObject } from './pod-deletion';
import { DEFAULT_MAX_PODS, DEFAULT_POD_SECURITY, PodSecurityLevel, policyViolations } from './pod-policy';
import { Blocked, podStatus } from './pod-status';
import { StatusWriter } from './status-writer';
import { dbusErrorName } from './systemd-dbus';
import { executableProblem, readUnitFile } from './unit-files';
import { pool, UnitLifecycle } from './unit-lifecycle';
import type { UnitTracker } from './unit-state';
import { WorkQueue } from './work-queue';
import { doublingMs } from '../kube/backoff';

const RETRY_FIRST_MS = 200;
const RETRY_MAX_MS = 10_000;
import { podIsTerminating } from '../systemd/pod';
import { PodRenderError, RenderedUnit, renderPodUnits, RenderOptions } from '../systemd/render';
import { UnitNameError } from '../systemd/unit-name';

export interface ReconcilerOptions {
  /** The unit lifecycle on the process's one bus connection. */
  readonly units: UnitLifecycle;
  readonly tracker: UnitTracker;
  readonly api: ApiClient;
  readonly render: RenderOptions & { readonly packageDir: string };
  readonly unitDir: string;
  readonly hostIP: string;
  readonly concurrency: number;
  /** Added to a pod's grace period when waiting for its stop job. */
  readonly stopMarginMs: number;
  /** The node's pod policy (pod-policy.ts). @default DEFAULT_POD_SECURITY */
  readonly podSecurity?: PodSecurityLevel;
  /** Pods the node runs at most; more are Failed with reason OutOfpods, as a kubelet does. @default DEFAULT_MAX_PODS */
  readonly maxPods?: number;
  readonly log: Logger;
}

interface Start {
  readonly m: Managed;
  readonly changed: RenderedUnit[];
  readonly replaced: Set<string>;
}

export class Reconciler {
  private readonly book = new PodBook();
  private readonly queue: WorkQueue;
  private readonly status: StatusWriter;
  private stopped = false;
  /** Pods whose units are being stopped and removed, each on its own (a grace period may take minutes). */
  private readonly tearingDown = new Map<string, Promise<void>>();
  /** How many DELETEs of a pod's object failed in a row (its next wait doubles with each). */
  private readonly deleteFailures = new Map<string, number>();
  /**
   * Pods whose object this agent deleted (key → uid): the watch may show them terminating once more
   * before their DELETED event (the teardown looks at the pod again at once), and a second DELETE
   * only earns a 404 (seen against kube-apiserver: test/cluster/agent-node.test.ts).
   */
  private readonly deleted = new Map<string, string>();
  private readonly retryTimers = new Set<NodeJS.Timeout>();
  /** Pods past the --max-pods check whose units are not set yet. */
  private readonly admitting = new Set<string>();

  constructor(private readonly o: ReconcilerOptions) {
    this.queue = new WorkQueue((keys) => this.batch(keys), (keys, e) => {
      this.o.log.log('ERROR', `A reconcile batch of ${keys.length} pods failed: ${e.message}`, { action: 'reconcile' });
    });
    this.status = new StatusWriter(o.api, (key) => this.wantedStatus(key), o.log);
  }

  // --- what the watcher and the tracker report ---

  /** A complete list: pods not in it are gone. */
  listed(pods: readonly ApiPod[]): void {
    for (const key of this.book.listed(pods)) this.markDirty(key);
    // Signals may have been missed meanwhile: ask systemd again, then recompute every status.
    void this.o.tracker.refreshAll().then(() => this.markAllStatus());
  }

  changed(type: 'ADDED' | 'MODIFIED' | 'DELETED', pod: ApiPod): void {
    for (const key of this.book.changed(type, pod)) this.markDirty(key);
  }

  /** The API answers again: retry what could not be sent (status patches, deletions). */
  reachable(): void {
    for (const key of this.book.pods.keys()) this.markDirty(key);
    this.markAllStatus();
  }

  unitChanged(unit: string): void {
    const key = this.book.ownerOf(unit);
    if (key) this.status.mark(key);
  }

  /** Pods waiting for their command to be installed are looked at again. */
  recheckBlocked(): void {
    for (const m of this.book.managed.values()) if (m.blocked?.phase === 'Pending') this.markDirty(m.key);
  }

  /** Resolves when every batch, teardown and status update queued so far is done. */
  async idle(): Promise<void> {
    while (this.queue.busy || this.tearingDown.size) {
      await this.queue.busy;
      await Promise.all(this.tearingDown.values());
      await this.status.idle();
    }
    await this.status.idle();
  }

  /** Stops the loop; stop jobs still running are systemd's and go on (the next agent finishes the removal). */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.retryTimers) clearTimeout(t);
    this.retryTimers.clear();
    await this.status.stop();
    await this.queue.stop();
  }

  /** The units the loop runs, by pod (for tests and the bench). */
  get runningUnits(): ReadonlyMap<string, readonly string[]> {
    return new Map([...this.book.managed].map(([k, m]) => [k, m.units.map((u) => u.name)]));
  }

  private markDirty(key: string): void {
    if (!this.stopped) this.queue.mark(key);
  }

  private markAllStatus(): void {
    for (const key of this.book.managed.keys()) this.status.mark(key);
  }

  // --- one batch ---

  private async batch(keys: readonly string[]): Promise<void> {
    const toDelete: ApiPod[] = [];
    const setup: ApiPod[] = [];
    for (const key of keys) {
      // Its units are still being stopped: looked at again when that is done.
      if (this.tearingDown.has(key)) continue;
      const pod = this.book.pods.get(key);
      if (this.deleted.has(key) && this.deleted.get(key) !== pod?.metadata?.uid) this.deleted.delete(key);
      const m = this.book.managed.get(key);
      const terminating = pod !== undefined && podIsTerminating(pod);
      if (m && (!pod || pod.metadata?.uid !== m.uid || terminating)) {
        const why = !pod ? 'no corresponding pod exists' : terminating ? 'the corresponding pod is terminating' : 'the pod was replaced by a new one of the same name';
        this.startTeardown({ m, pod: terminating ? pod : undefined, why });
      } else if (terminating && !this.deleted.has(key)) toDelete.push(pod);
      if (pod && !terminating && !this.tearingDown.has(key)) setup.push(pod);
    }

    const starts = await this.prepare(setup);
    const written = starts.flatMap((s) => s.changed.map((u) => u.name));
    if (written.length && await this.o.units.stale(written)) await this.o.units.reload();
    try {
      await this.o.units.enable(written);
    } catch (e) {
      this.o.log.log('WARN', `EnableUnitFiles(${written.join(', ')}) failed: ${(e as Error).message}; the units run but will not start at boot.`, { action: 'enable' });
    }
    await pool(starts, this.o.concurrency, (s) => this.start(s));
    await pool(toDelete, this.o.concurrency, (pod) => this.deletePod(pod));
  }

  /**
   * Takes one pod's units down on its own, so a long stop (a grace period of minutes) never holds up
   * another pod's start; then one (shared) Reload, the pod object deleted, and the pod looked at again.
   */
  private startTeardown(item: { m: Managed; why: string; pod?: ApiPod }): void {
    const key = item.m.key;
    const done = (async () => {
      const clean = await this.teardown([item]);
      if (clean.length && item.m.units.length) await this.o.units.reload();
      for (const t of clean) if (t.pod) await this.deletePod(t.pod);
    })().catch((e: Error) => {
      this.o.log.log('ERROR', `The systemd units of pod [${key}] could not be removed: ${e.message}`, { pod: key, action: 'remove' });
    }).finally(() => {
      this.tearingDown.delete(key);
      this.markDirty(key);
    });
    this.tearingDown.set(key, done);
  }

  /** Deletes a terminating pod's object; a failure is retried with backoff (0.2 s, doubling, to 10 s). */
  private async deletePod(pod: ApiPod): Promise<void> {
    const key = podKeyOf(pod);
    if (await deletePodObject(this.o.api, pod, this.o.log)) {
      this.deleteFailures.delete(key);
      if (pod.metadata?.uid) this.deleted.set(key, pod.metadata.uid);
      return;
    }
    const failures = (this.deleteFailures.get(key) ?? 0) + 1;
    this.deleteFailures.set(key, failures);
    this.retryLater(key, doublingMs(failures, RETRY_FIRST_MS, RETRY_MAX_MS));
  }

  private retryLater(key: string, ms: number): void {
    if (this.stopped) return;
    const t = setTimeout(() => {
      this.retryTimers.delete(t);
      this.markDirty(key);
    }, ms);
    this.retryTimers.add(t);
  }

  /** Stops and removes the units of `items`; returns those removed cleanly (their pods may go). */
  private async teardown(items: Array<{ m: Managed; why: string; pod?: ApiPod }>): Promise<Array<{ m: Managed; pod?: ApiPod }>> {
    const problems = await this.o.units.remove(items.flatMap(({ m, pod }) => {
      const spec = m.pod.spec?.terminationGracePeriodSeconds ?? 30;
      const asked = pod?.metadata?.deletionGracePeriodSeconds;
      // The unit's TimeoutStopSec is the pod's grace period; a deletion that asked for less gets SIGKILL then.
      const killAfterMs = typeof asked === 'number' && asked < spec ? asked * 1000 : undefined;
      return m.units.map((u) => ({ name: u.name, jobTimeoutMs: spec * 1000 + this.o.stopMarginMs, killAfterMs }));
    }));
    const clean: Array<{ m: Managed; pod?: ApiPod }> = [];
    for (const { m, why, pod } of items) {
      const p = m.units.flatMap((u) => problems.get(u.name) ?? []);
      if (p.length) {
        // Kept: the next batch for this pod (an event, the resync) tries again; its object stays.
        this.o.log.log('ERROR', `The systemd units of pod [${m.key}] could not be removed cleanly: ${p.join('; ')}`, { pod: m.key, action: 'remove' });
        continue;
      }
      for (const u of m.units) {
        this.o.log.log('INFO', `The systemd unit [${u.name}] was stopped and removed because ${why}.`, { pod: m.key, unit: u.name, action: 'remove' });
        this.o.tracker.untrack(u.name);
      }
      if (m.blocked) this.o.log.log('INFO', `The pod [${m.key}] is no longer waiting: ${why}.`, { pod: m.key, action: 'forget' });
      this.book.release(m);
      clean.push({ m, pod });
    }
    // A name that became free may now be another pod's.
    if (clean.some(({ m }) => m.units.length)) {
      for (const other of this.book.managed.values()) if (other.blocked?.reason === 'UnitNameConflict' || other.blocked?.reason === 'OutOfpods') this.markDirty(other.key);
    }
    return clean;
  }

  /** Renders, claims and writes the units of `pods`; returns per pod what to start. */
  private async prepare(pods: readonly ApiPod[]): Promise<Start[]> {
    const out: Start[] = [];
    await pool(pods, this.o.concurrency, async (pod) => {
      const start = await this.preparePod(pod);
      if (start) out.push(start);
    });
    return out;
  }

  private async preparePod(pod: ApiPod): Promise<Start | undefined> {
    const key = podKeyOf(pod);
    const previous = this.book.managed.get(key);
    // The units of a replaced pod of this name could not be removed yet: the new one waits for that.
    if (previous && previous.uid !== (pod.metadata?.uid ?? '')) return undefined;
    const m: Managed = previous ?? { key, uid: pod.metadata?.uid ?? '', pod, units: [] };
    m.pod = pod;
    this.book.managed.set(key, m);
    let outcome: Awaited<ReturnType<Reconciler['render']>>;
    try {
      outcome = await this.render(pod, key, m);
    } finally {
      this.admitting.delete(key);
    }
    if ('blocked' in outcome) {
      const was = m.blocked?.message;
      m.blocked = outcome.blocked;
      if (was !== outcome.blocked.message) {
        this.o.log.log(outcome.blocked.phase === 'Failed' ? 'ERROR' : 'WARN', `The pod [${key}] cannot run (${outcome.blocked.reason}): ${outcome.blocked.message}`, { pod: key, action: 'refuse' });
      }
      this.status.mark(key);
      return undefined;
    }
    if (m.blocked) this.o.log.log('INFO', `The pod [${key}] can run now.`, { pod: key, action: 'unblock' });
    m.blocked = undefined;
    const changed: RenderedUnit[] = [];
    const replaced = new Set<string>();
    const owner = { key, uid: m.uid };
    for (const u of outcome.units) {
      const current = readUnitFile(this.o.unitDir, u.name);
      if (current === u.content) {
        this.o.units.adopt(u.name, u.content, owner);
        continue;
      }
      try {
        this.o.units.write(u.name, u.content, owner);
      } catch (e) {
        this.o.log.log('ERROR', `The systemd unit [${u.name}] could not be written: ${(e as Error).message}`, { pod: key, unit: u.name, action: 'write' });
        continue;
      }
      changed.push(u);
      if (current !== undefined) replaced.add(u.name);
    }
    m.units = outcome.units;
    this.book.claim(key, outcome.units);
    return { m, changed, replaced };
  }

  private async render(pod: ApiPod, key: string, m: Managed): Promise<{ units: RenderedUnit[] } | { blocked: Blocked }> {
    let units: RenderedUnit[];
    try {
      units = renderPodUnits(pod, this.o.render);
    } catch (e) {
      if (!(e instanceof PodRenderError) && !(e instanceof UnitNameError)) throw e;
      return { blocked: { phase: 'Failed', reason: 'UnitRenderError', message: (e as Error).message } };
    }
    const level = this.o.podSecurity ?? DEFAULT_POD_SECURITY;
    const violations = policyViolations(pod, level, this.o.render.packageDir);
    if (violations.length) {
      return { blocked: { phase: 'Failed', reason: 'PodSecurityViolation', message: `the node's policy is --pod-security ${level}: ${violations.join('; ')}` } };
    }
    const mine = new Set(m.units.map((u) => u.name));
    const maxPods = this.o.maxPods ?? DEFAULT_MAX_PODS;
    if (!mine.size) {
      // Pods prepared side by side reserve their place before their first await.
      const running = [...this.book.managed.values()].filter((x) => x.units.length > 0).length + this.admitting.size;
      if (running >= maxPods) return { blocked: { phase: 'Failed', reason: 'OutOfpods', message: `the node runs ${running} pods, its --max-pods` } };
      this.admitting.add(key);
    }
    for (const u of units) {
      // Two pods, one name: the same pod wins every time (pod-book.ts nameOwner), nothing running is killed.
      const winner = this.book.nameOwner(u.name, this.o.units.recordedOwner(u.name));
      if (winner && winner.key !== key) {
        return { blocked: { phase: 'Failed', reason: 'UnitNameConflict', message: `its unit ${u.name} is also the unit of the pod [${winner.key}], ${winner.why}; rename one of them` } };
      }
      // Units the agent already runs for this pod are its own; any other name is checked on disk and in systemd.
      if (mine.has(u.name)) continue;
      const problem = await this.o.units.claimProblem(u.name, u.content);
      if (problem) return { blocked: { phase: 'Failed', reason: 'UnitNameConflict', message: problem } };
    }
    for (const u of units) {
      const problem = executableProblem(u.executable);
      if (problem) {
        const where = u.executable.startsWith(`${this.o.render.packageDir}/`) ? ` (is its package installed under ${this.o.render.packageDir}?)` : '';
        return { blocked: { phase: 'Pending', reason: 'CommandNotFound', message: `the command ${u.executable} of container ${u.container} ${problem}${where}` } };
      }
    }
    return { units };
  }

  private async start(s: Start): Promise<void> {
    const { m } = s;
    const changed = new Set(s.changed.map((u) => u.name));
    await Promise.all(m.units.map((u) => this.o.tracker.track(u.name)));
    // App units pull their init units in (Requires=, ordered Before=); a changed init unit restarts with them.
    for (const u of m.units.filter((x) => !x.init)) {
      const state = this.o.tracker.get(u.name) ?? {};
      const initChanged = m.units.some((x) => x.init && changed.has(x.name));
      const replaced = s.replaced.has(u.name) || m.units.some((x) => x.init && s.replaced.has(x.name));
      // A unit that ran in this boot and ended (Never, OnFailure after success) is not started again.
      const neverRan = !state.execMainStartTimestamp && (state.activeState === 'inactive' || state.activeState === undefined);
      if (!changed.has(u.name) && !initChanged && !neverRan) continue;
      try {
        await this.o.units.start(u.name, replaced);
        const why = replaced ? 'its file changed with the pod' : changed.has(u.name) ? `the pod [${m.key}] is bound to this node` : `the pod [${m.key}] is bound to this node and the unit had not run`;
        this.o.log.log('INFO', `The systemd unit [${u.name}] was ${replaced ? 'restarted' : 'started'} because ${why}.`, { pod: m.key, unit: u.name, action: replaced ? 'restart' : 'start' });
      } catch (e) {
        this.o.log.log('ERROR', `The systemd unit [${u.name}] could not be started: ${dbusErrorName(e) ?? ''} ${(e as Error).message}`, { pod: m.key, unit: u.name, action: 'start' });
      }
    }
    this.status.mark(m.key);
  }

  // --- status ---

  private wantedStatus(key: string): { pod: ApiPod; m: Managed; want: Record<string, unknown> } | undefined {
    const m = this.book.managed.get(key);
    const pod = this.book.pods.get(key);
    if (!m || !pod || pod.metadata?.uid !== m.uid || podIsTerminating(pod) || this.stopped) return undefined;
    const want = podStatus({
      pod,
      units: m.units.map((u) => ({ container: u.container, image: containerImage(pod, u), init: u.init, state: this.o.tracker.get(u.name) })),
      hostIP: this.o.hostIP,
      blocked: m.blocked,
      now: new Date(),
    });
    return { pod, m, want };
  }
}

function containerImage(pod: ApiPod, u: RenderedUnit): string | undefined {
  const list = u.init ? pod.spec?.initContainers : pod.spec?.containers;
  return list?.find((c) => c.name === u.container)?.image;
}
