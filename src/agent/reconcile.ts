/**
 * The reconcile loop of `agent run`: the pods the API binds to the node (desired) against the
 * units the agent runs (actual), in batches. Events mark pods dirty; one batch then
 *
 * 1. tears down the units of pods that are gone, terminating or replaced: StopUnit (the pod's
 *    grace period; a shorter deletion grace period ends in SIGKILL), ResetFailedUnit, one
 *    DisableUnitFiles, the files removed;
 * 2. renders the units of new pods with the one renderer, refusing what cannot run (an
 *    unrenderable pod: Failed; a command not installed under the package directory: Pending,
 *    rechecked, never a crash-looping unit), and writes changed files atomically;
 * 3. one Reload when systemd's view is stale (a file removed or replaced, NeedDaemonReload), one
 *    EnableUnitFiles, StartUnit (RestartUnit for a changed file);
 * 4. deletes the objects of terminating pods with grace period 0, as the kubelet does, so
 *    `kubectl delete pod` returns.
 *
 * Pod status follows the units' state (UnitTracker, from signals) and is patched only on change.
 */
import type { ApiClient } from './api';
import { ApiError } from './api';
import { ApiPod, podKeyOf } from './api-pod';
import { disableUnits, pool, stopUnit } from './cleanup';
import type { Logger } from './log';
import { Blocked, podStatus, statusIsCurrent } from './pod-status';
import { dbusErrorName, SystemdManager, UNIT_IFACE, unitObjectPath } from './systemd-dbus';
import { executableProblem, readUnitFile, removeUnitFile, writeUnitFileAtomic } from './unit-files';
import type { UnitTracker } from './unit-state';
import { podIsTerminating } from '../systemd/pod';
import { PodRenderError, RenderedUnit, renderPodUnits, RenderOptions } from '../systemd/render';
import { UnitNameError } from '../systemd/unit-name';

export interface ReconcilerOptions {
  readonly mgr: SystemdManager;
  readonly tracker: UnitTracker;
  readonly api: ApiClient;
  readonly render: RenderOptions & { readonly packageDir: string };
  readonly unitDir: string;
  readonly hostIP: string;
  readonly concurrency: number;
  /** Added to a pod's grace period when waiting for its stop job. */
  readonly stopMarginMs: number;
  readonly log: Logger;
}

interface Managed {
  readonly key: string;
  readonly uid: string;
  pod: ApiPod;
  /** The units written for it (none while blocked). */
  units: RenderedUnit[];
  blocked?: Blocked;
  /** The status last patched, until the watch shows it. */
  sent?: Record<string, unknown>;
}

const SIGKILL = 9;
const MERGE = 'application/merge-patch+json';
const STATUS_DEBOUNCE_MS = 15;
const STATUS_CONCURRENCY = 8;

const podPath = (pod: ApiPod): string => `api/v1/namespaces/${encodeURIComponent(pod.metadata?.namespace || 'default')}/pods/${encodeURIComponent(pod.metadata?.name ?? '')}`;

export class Reconciler {
  private readonly pods = new Map<string, ApiPod>();
  private readonly managed = new Map<string, Managed>();
  private readonly unitOwner = new Map<string, string>();
  private readonly dirty = new Set<string>();
  private readonly statusDirty = new Set<string>();
  private draining?: Promise<void>;
  private statusTimer?: NodeJS.Timeout;
  private statusRunning?: Promise<void>;
  private stopped = false;

  constructor(private readonly o: ReconcilerOptions) {}

  // --- what the watcher and the tracker report ---

  /** A complete list: pods not in it are gone. */
  listed(pods: readonly ApiPod[]): void {
    const keys = new Set(pods.map(podKeyOf));
    for (const key of [...this.pods.keys(), ...this.managed.keys()]) if (!keys.has(key)) this.forget(key);
    for (const pod of pods) this.observe(pod);
    // Signals may have been missed meanwhile: ask systemd again, then recompute every status.
    void this.o.tracker.refreshAll().then(() => this.markAllStatus());
  }

  changed(type: 'ADDED' | 'MODIFIED' | 'DELETED', pod: ApiPod): void {
    if (type === 'DELETED') {
      const known = this.pods.get(podKeyOf(pod));
      if (!known || known.metadata?.uid === pod.metadata?.uid) this.forget(podKeyOf(pod));
    } else this.observe(pod);
  }

  /** The API answers again: retry what could not be sent (status patches, deletions). */
  reachable(): void {
    for (const key of this.pods.keys()) this.markDirty(key);
    this.markAllStatus();
  }

  unitChanged(unit: string): void {
    const key = this.unitOwner.get(unit);
    if (key) this.markStatus(key);
  }

  /** Pods waiting for their command to be installed are looked at again. */
  recheckBlocked(): void {
    for (const m of this.managed.values()) if (m.blocked?.phase === 'Pending') this.markDirty(m.key);
  }

  /** Resolves when every batch and status update queued so far is done. */
  async idle(): Promise<void> {
    while (this.draining || this.statusRunning || this.statusTimer) {
      await this.draining;
      await this.statusRunning;
      if (this.statusTimer) await new Promise((r) => setTimeout(r, STATUS_DEBOUNCE_MS));
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.statusTimer);
    this.statusTimer = undefined;
    await this.draining;
    await this.statusRunning;
  }

  /** The units the loop runs, by pod (for tests and the bench). */
  get runningUnits(): ReadonlyMap<string, readonly string[]> {
    return new Map([...this.managed].map(([k, m]) => [k, m.units.map((u) => u.name)]));
  }

  private observe(pod: ApiPod): void {
    const key = podKeyOf(pod);
    this.pods.set(key, pod);
    const m = this.managed.get(key);
    // Our own status patches come back as MODIFIED: only the status changed, nothing to do.
    if (m && m.uid === pod.metadata?.uid && !podIsTerminating(pod) && !m.blocked && sameSpec(m.pod, pod)) {
      m.pod = pod;
      if (m.sent && statusIsCurrent(pod.status, m.sent)) m.sent = undefined;
      return;
    }
    this.markDirty(key);
  }

  private forget(key: string): void {
    this.pods.delete(key);
    this.markDirty(key);
  }

  private markDirty(key: string): void {
    this.dirty.add(key);
    if (!this.draining && !this.stopped) {
      this.draining = new Promise<void>((resolve) => setImmediate(resolve)).then(() => this.drain()).finally(() => {
        this.draining = undefined;
        if (this.dirty.size && !this.stopped) this.markDirty([...this.dirty][0]);
      });
    }
  }

  private markStatus(key: string): void {
    this.statusDirty.add(key);
    if (!this.statusTimer && !this.stopped) {
      this.statusTimer = setTimeout(() => {
        this.statusTimer = undefined;
        void this.flushStatus();
      }, STATUS_DEBOUNCE_MS);
    }
  }

  private markAllStatus(): void {
    for (const key of this.managed.keys()) this.markStatus(key);
  }

  // --- one batch ---

  private async drain(): Promise<void> {
    while (this.dirty.size && !this.stopped) {
      const keys = [...this.dirty];
      this.dirty.clear();
      try {
        await this.batch(keys);
      } catch (e) {
        this.o.log.log('ERROR', `A reconcile batch of ${keys.length} pods failed: ${(e as Error).message}`, { action: 'reconcile' });
      }
    }
  }

  private async batch(keys: readonly string[]): Promise<void> {
    const teardown: Array<{ m: Managed; why: string; pod?: ApiPod }> = [];
    const toDelete: ApiPod[] = [];
    const setup: ApiPod[] = [];
    for (const key of keys) {
      const pod = this.pods.get(key);
      const m = this.managed.get(key);
      const terminating = pod !== undefined && podIsTerminating(pod);
      if (m && (!pod || pod.metadata?.uid !== m.uid || terminating)) {
        teardown.push({ m, pod: terminating ? pod : undefined, why: !pod ? 'no corresponding pod exists' : terminating ? 'the corresponding pod is terminating' : 'the pod was replaced by a new one of the same name' });
      } else if (terminating) toDelete.push(pod);
      if (pod && !terminating) setup.push(pod);
    }

    let reload = false;
    if (teardown.length) {
      const ok = await this.teardown(teardown);
      reload = true;
      for (const t of ok) if (t.pod) toDelete.push(t.pod);
    }
    const starts = this.prepare(setup);
    const written = starts.flatMap((s) => s.changed);
    if (!reload && written.length) reload = await this.stale(written.map((u) => u.name));
    if (reload) await this.o.mgr.Reload();
    if (written.length) {
      try {
        await this.o.mgr.EnableUnitFiles(written.map((u) => u.name), false, true);
      } catch (e) {
        this.o.log.log('WARN', `EnableUnitFiles(${written.map((u) => u.name).join(', ')}) failed: ${(e as Error).message}; the units run but will not start at boot.`, { action: 'enable' });
      }
    }
    await pool(starts, this.o.concurrency, (s) => this.start(s));
    await pool(toDelete, this.o.concurrency, (pod) => this.deletePod(pod));
  }

  /** Stops and removes the units of `items`; returns those removed cleanly (their pods may go). */
  private async teardown(items: Array<{ m: Managed; why: string; pod?: ApiPod }>): Promise<Array<{ m: Managed; pod?: ApiPod }>> {
    const units = items.flatMap(({ m }) => m.units.map((u) => u.name));
    const problems = new Map(units.map((u) => [u, [] as string[]]));
    await Promise.all([
      pool(items, this.o.concurrency, async ({ m, pod }) => {
        const spec = m.pod.spec?.terminationGracePeriodSeconds ?? 30;
        const asked = pod?.metadata?.deletionGracePeriodSeconds;
        const grace = typeof asked === 'number' && asked < spec ? asked : spec;
        await Promise.all(m.units.map(async (u) => {
          // The unit's TimeoutStopSec is the pod's grace period; a deletion that asked for less gets SIGKILL then.
          const kill = grace < spec ? setTimeout(() => void this.o.mgr.KillUnit(u.name, 'all', SIGKILL).catch(() => undefined), grace * 1000) : undefined;
          try {
            problems.get(u.name)!.push(...(await stopUnit(this.o.mgr, u.name, spec * 1000 + this.o.stopMarginMs)));
          } finally {
            clearTimeout(kill);
          }
        }));
      }),
      disableUnits(this.o.mgr, units, problems),
    ]);
    const clean: Array<{ m: Managed; pod?: ApiPod }> = [];
    for (const { m, why, pod } of items) {
      const p: string[] = [];
      for (const u of m.units) {
        try {
          removeUnitFile(this.o.unitDir, u.name);
        } catch (e) {
          problems.get(u.name)!.push((e as Error).message);
        }
        p.push(...problems.get(u.name)!);
      }
      if (p.length) {
        // Kept: the next batch for this pod (an event, the resync) tries again; its object stays.
        this.o.log.log('ERROR', `The systemd units of pod [${m.key}] could not be removed cleanly: ${p.join('; ')}`, { pod: m.key, action: 'remove' });
        continue;
      }
      for (const u of m.units) {
        this.o.log.log('INFO', `The systemd unit [${u.name}] was stopped and removed because ${why}.`, { pod: m.key, unit: u.name, action: 'remove' });
        this.o.tracker.untrack(u.name);
        this.unitOwner.delete(u.name);
      }
      if (m.blocked) this.o.log.log('INFO', `The pod [${m.key}] is no longer waiting: ${why}.`, { pod: m.key, action: 'forget' });
      this.managed.delete(m.key);
      clean.push({ m, pod });
    }
    return clean;
  }

  /** Renders and writes the units of `pods`; returns per pod what to start. */
  private prepare(pods: readonly ApiPod[]): Array<{ m: Managed; changed: RenderedUnit[]; replaced: Set<string> }> {
    const out: Array<{ m: Managed; changed: RenderedUnit[]; replaced: Set<string> }> = [];
    for (const pod of pods) {
      const key = podKeyOf(pod);
      const previous = this.managed.get(key);
      // The units of a replaced pod of this name could not be removed yet: the new one waits for that.
      if (previous && previous.uid !== (pod.metadata?.uid ?? '')) continue;
      const m: Managed = previous ?? { key, uid: pod.metadata?.uid ?? '', pod, units: [] };
      m.pod = pod;
      this.managed.set(key, m);
      const outcome = this.render(pod, key);
      if ('blocked' in outcome) {
        const was = m.blocked?.message;
        m.blocked = outcome.blocked;
        if (was !== outcome.blocked.message) {
          this.o.log.log(outcome.blocked.phase === 'Failed' ? 'ERROR' : 'WARN', `The pod [${key}] cannot run (${outcome.blocked.reason}): ${outcome.blocked.message}`, { pod: key, action: 'refuse' });
        }
        this.markStatus(key);
        continue;
      }
      if (m.blocked) this.o.log.log('INFO', `The pod [${key}] can run now.`, { pod: key, action: 'unblock' });
      m.blocked = undefined;
      const changed: RenderedUnit[] = [];
      const replaced = new Set<string>();
      for (const u of outcome.units) {
        const current = readUnitFile(this.o.unitDir, u.name);
        if (current === u.content) continue;
        try {
          writeUnitFileAtomic(this.o.unitDir, u.name, u.content);
        } catch (e) {
          this.o.log.log('ERROR', `The systemd unit [${u.name}] could not be written: ${(e as Error).message}`, { pod: key, unit: u.name, action: 'write' });
          continue;
        }
        changed.push(u);
        if (current !== undefined) replaced.add(u.name);
      }
      m.units = outcome.units;
      for (const u of outcome.units) this.unitOwner.set(u.name, key);
      out.push({ m, changed, replaced });
    }
    return out;
  }

  private render(pod: ApiPod, key: string): { units: RenderedUnit[] } | { blocked: Blocked } {
    let units: RenderedUnit[];
    try {
      units = renderPodUnits(pod, this.o.render);
    } catch (e) {
      if (!(e instanceof PodRenderError) && !(e instanceof UnitNameError)) throw e;
      return { blocked: { phase: 'Failed', reason: 'UnitRenderError', message: (e as Error).message } };
    }
    const taken = units.find((u) => (this.unitOwner.get(u.name) ?? key) !== key);
    if (taken) {
      return { blocked: { phase: 'Failed', reason: 'UnitNameCollision', message: `its unit ${taken.name} belongs to the pod ${this.unitOwner.get(taken.name)}; rename one of them` } };
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

  /** Whether systemd must reload to see these files (loaded before with other content, or not found). */
  private async stale(units: readonly string[]): Promise<boolean> {
    let stale = false;
    await pool(units, this.o.concurrency, async (u) => {
      try {
        await this.o.mgr.LoadUnit(u);
        const path = unitObjectPath(u);
        const [load, need] = await Promise.all([this.o.mgr.getProperty(path, UNIT_IFACE, 'LoadState'), this.o.mgr.getProperty(path, UNIT_IFACE, 'NeedDaemonReload')]);
        if (load !== 'loaded' || need === true) stale = true;
      } catch {
        stale = true;
      }
    });
    return stale;
  }

  private async start(s: { m: Managed; changed: RenderedUnit[]; replaced: Set<string> }): Promise<void> {
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
        if (replaced) await this.o.mgr.RestartUnit(u.name, 'replace');
        else await this.o.mgr.StartUnit(u.name, 'replace');
        const why = replaced ? 'its file changed with the pod' : changed.has(u.name) ? `the pod [${m.key}] is bound to this node` : `the pod [${m.key}] is bound to this node and the unit had not run`;
        this.o.log.log('INFO', `The systemd unit [${u.name}] was ${replaced ? 'restarted' : 'started'} because ${why}.`, { pod: m.key, unit: u.name, action: replaced ? 'restart' : 'start' });
      } catch (e) {
        this.o.log.log('ERROR', `The systemd unit [${u.name}] could not be started: ${dbusErrorName(e) ?? ''} ${(e as Error).message}`, { pod: m.key, unit: u.name, action: 'start' });
      }
    }
    this.markStatus(m.key);
  }

  /** Deletes a terminating pod's object now that nothing of it runs (grace period 0, this uid only). */
  private async deletePod(pod: ApiPod): Promise<void> {
    const key = podKeyOf(pod);
    try {
      await this.o.api.request('DELETE', podPath(pod), {
        body: { apiVersion: 'v1', kind: 'DeleteOptions', gracePeriodSeconds: 0, ...(pod.metadata?.uid ? { preconditions: { uid: pod.metadata.uid } } : {}) },
      });
      this.o.log.log('INFO', `The pod [${key}] was deleted with grace period 0: none of its units runs any more.`, { pod: key, action: 'delete' });
    } catch (e) {
      if (e instanceof ApiError && (e.status === 404 || e.status === 409)) return;
      this.o.log.log('WARN', `The pod [${key}] could not be deleted: ${(e as Error).message}; retried when the API answers again.`, { pod: key, action: 'delete' });
    }
  }

  // --- status ---

  private async flushStatus(): Promise<void> {
    if (this.statusRunning) {
      await this.statusRunning;
      if (this.statusDirty.size) this.markStatus([...this.statusDirty][0]);
      return;
    }
    const keys = [...this.statusDirty];
    this.statusDirty.clear();
    this.statusRunning = pool(keys, STATUS_CONCURRENCY, (key) => this.patchStatus(key)).finally(() => {
      this.statusRunning = undefined;
    });
    await this.statusRunning;
  }

  private async patchStatus(key: string): Promise<void> {
    const m = this.managed.get(key);
    const pod = this.pods.get(key);
    if (!m || !pod || pod.metadata?.uid !== m.uid || podIsTerminating(pod) || this.stopped) return;
    const want = podStatus({
      pod,
      units: m.units.map((u) => ({ container: u.container, image: containerImage(pod, u), init: u.init, state: this.o.tracker.get(u.name) })),
      hostIP: this.o.hostIP,
      blocked: m.blocked,
      now: new Date(),
    });
    if (statusIsCurrent(m.sent ?? pod.status, want)) return;
    try {
      await this.o.api.request('PATCH', `${podPath(pod)}/status`, { contentType: MERGE, body: { status: want } });
      m.sent = want;
      const states = (want.containerStatuses as Array<{ name: string; state: Record<string, unknown> }>).map((c) => `${c.name} ${Object.keys(c.state)[0] ?? 'unknown'}`);
      this.o.log.log('INFO', `The status of pod [${key}] was updated: ${want.phase} (${states.join(', ')}).`, { pod: key, action: 'status' });
    } catch (e) {
      // Sent again when the API answers again (reachable()) or the next change comes.
      this.statusDirty.add(key);
      if (!(e instanceof ApiError && e.status === 404)) this.o.log.log('WARN', `The status of pod [${key}] could not be updated: ${(e as Error).message}`, { pod: key, action: 'status' });
    }
  }
}

function containerImage(pod: ApiPod, u: RenderedUnit): string | undefined {
  const list = u.init ? pod.spec?.initContainers : pod.spec?.containers;
  return list?.find((c) => c.name === u.container)?.image;
}

/** The parts of a pod its units are rendered from (a status change leaves them as they are). */
function sameSpec(a: ApiPod, b: ApiPod): boolean {
  return JSON.stringify(a.spec) === JSON.stringify(b.spec) && (a.metadata?.deletionTimestamp ?? null) === (b.metadata?.deletionTimestamp ?? null);
}
