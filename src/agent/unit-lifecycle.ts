/**
 * The one way the agent changes systemd units: write, enable, start (or restart), stop, reset,
 * disable, remove, reload. Both the start-up cleanup and `agent run`'s reconcile loop go through
 * it, on the one bus connection of the process.
 *
 * Removing many units: at most `concurrency` D-Bus calls in flight, but every queued stop job is
 * waited for at once (systemd runs them side by side; a slot held per job until its JobRemoved
 * stopped 100 units in waves and took a third longer), meanwhile one DisableUnitFiles for all
 * (systemd scans the unit directories once per call: ~0.1 s with 200 units), then the files are
 * deleted (only inside the unit directory) and the caller reloads once.
 *
 * Owned units only: a unit file is written over, started, stopped or removed only when the agent
 * wrote it (ownership.ts) or the start-up cleanup kept it as a pod's exact rendering in the slice
 * (#312). claimProblem() says why a name cannot be the pod's: the agent's own unit, a file in the
 * unit directory the agent did not write (outside the slice, or changed), a unit systemd loads
 * from another file.
 */
import * as fs from 'fs';
import * as path from 'path';
import type { Logger } from './log';
import type { UnitOwnership } from './ownership';
import { AGENT_UNIT_NAME } from '../systemd/agent-unit';
import { unitFileSlice } from '../systemd/unit';
import { dbusErrorName, SystemdManager, UNIT_IFACE, unitObjectPath } from './systemd-dbus';
import { isInside, removeUnitFile, writeUnitFileAtomic } from './unit-files';

/** Errors that mean "already gone": a unit that is not loaded or has no file any more. */
const IGNORABLE = new Set(['org.freedesktop.systemd1.NoSuchUnit', 'org.freedesktop.DBus.Error.FileNotFound']);
const ignorable = (e: unknown): boolean => IGNORABLE.has(dbusErrorName(e) ?? '');

const SIGKILL = 9;

/** Runs `work` over `items`, at most `limit` at a time. */
export async function pool<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const runners = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) await work(items[next++]);
  });
  await Promise.all(runners);
}

/** One unit to take down. */
export interface Removal {
  readonly name: string;
  /** How long its stop job may take (its TimeoutStopSec and a margin). */
  readonly jobTimeoutMs: number;
  /** Send SIGKILL to its processes after this long (a deletion asking for less than the unit's grace period). */
  readonly killAfterMs?: number;
  /** The file to delete (`false`: none, systemd named no file). @default `<unitDir>/<name>` */
  readonly file?: string | false;
}

export interface LifecycleOptions {
  readonly unitDir: string;
  /** The slice the agent's units are in. */
  readonly slice: string;
  /** Where the agent records the files it wrote (`agent cleanup` without a state directory: none). */
  readonly ownership?: UnitOwnership;
  /** D-Bus calls in flight at the same time. */
  readonly concurrency: number;
  readonly log: Logger;
}

export class UnitLifecycle {
  constructor(readonly mgr: SystemdManager, private readonly o: LifecycleOptions) {}

  /**
   * Stops, resets (#321), disables and deletes the files of `units`. Returns each unit's
   * problems (empty: removed cleanly). No Reload: the caller reloads once for all it removed.
   */
  async remove(units: readonly Removal[]): Promise<Map<string, string[]>> {
    const problems = new Map(units.map((u) => [u.name, [] as string[]]));
    await Promise.all([this.stopAll(units, problems), this.disable(units.map((u) => u.name), problems)]);
    for (const u of units) {
      this.deleteFile(u, problems.get(u.name)!);
      if (problems.get(u.name)!.length) continue;
      try {
        this.o.ownership?.forget(u.name);
      } catch (e) {
        problems.get(u.name)!.push(`forgetting the record of ${u.name}: ${(e as Error).message}`);
      }
    }
    return problems;
  }

  /** Stops `units`: StopUnit calls bounded, their jobs waited for all at once, then ResetFailedUnit. */
  private async stopAll(units: readonly Removal[], problems: Map<string, string[]>): Promise<void> {
    const finishing: Array<Promise<void>> = [];
    await pool(units, this.o.concurrency, async (u) => {
      const p = problems.get(u.name)!;
      const kill = u.killAfterMs === undefined ? undefined : setTimeout(() => void this.mgr.KillUnit(u.name, 'all', SIGKILL).catch(() => undefined), u.killAfterMs);
      const job = await this.requestStop(u.name, p);
      finishing.push(this.finishStop(u.name, job, u.jobTimeoutMs, p).finally(() => clearTimeout(kill)));
    });
    await Promise.all(finishing);
  }

  private async requestStop(unit: string, problems: string[]): Promise<string | undefined> {
    try {
      return await this.mgr.StopUnit(unit, 'replace');
    } catch (e) {
      if (!ignorable(e)) problems.push(`StopUnit: ${(e as Error).message}`);
      return undefined;
    }
  }

  private async finishStop(unit: string, job: string | undefined, jobTimeoutMs: number, problems: string[]): Promise<void> {
    if (job) {
      try {
        const result = await this.mgr.waitForJob(job, jobTimeoutMs);
        if (result !== 'done') problems.push(`stop job ${job} ended with "${result}"`);
      } catch (e) {
        problems.push((e as Error).message);
      }
    }
    try {
      await this.mgr.ResetFailedUnit(unit);
    } catch (e) {
      // A stopped unit without references may already be gone (garbage-collected): nothing to reset.
      if (!ignorable(e)) problems.push(`ResetFailedUnit: ${(e as Error).message}`);
    }
  }

  /** One DisableUnitFiles for all; if the batch fails, unit by unit, to tell which one failed. */
  private async disable(units: readonly string[], problems: Map<string, string[]>): Promise<void> {
    if (units.length === 0) return;
    try {
      await this.mgr.DisableUnitFiles([...units], false);
      return;
    } catch {
      // fall through to one call per unit
    }
    for (const unit of units) {
      try {
        await this.mgr.DisableUnitFiles([unit], false);
      } catch (e) {
        if (!ignorable(e)) problems.get(unit)!.push(`DisableUnitFiles: ${(e as Error).message}`);
      }
    }
  }

  /** Deletes the unit's file, only inside the unit directory (a file elsewhere is named in a WARN and left). */
  private deleteFile(u: Removal, problems: string[]): void {
    if (u.file === false) return;
    const file = u.file ?? path.join(this.o.unitDir, u.name);
    if (!isInside(this.o.unitDir, file)) {
      this.o.log.log('WARN', `The file ${file} of the systemd unit [${u.name}] is outside ${this.o.unitDir} and was not deleted.`, { unit: u.name, action: 'remove' });
      return;
    }
    try {
      removeUnitFile(this.o.unitDir, path.relative(this.o.unitDir, file));
    } catch (e) {
      problems.push(`deleting ${file}: ${(e as Error).message}`);
    }
  }

  /**
   * Why `name` cannot be the unit of `pod` (whose rendering is `content`), naming the file; undefined
   * when it can: no file there and systemd loads no other, a file the agent wrote, or a file of the
   * slice that is exactly this rendering (kept by the start-up cleanup: adopted).
   */
  async claimProblem(name: string, content: string): Promise<string | undefined> {
    if (name === AGENT_UNIT_NAME) return `the unit name ${name} is the agent's own`;
    const file = path.join(this.o.unitDir, name);
    let st: fs.Stats | undefined;
    try {
      st = fs.lstatSync(file);
    } catch {
      st = undefined;
    }
    if (st) {
      if (!st.isFile()) return `${file} exists and is not a unit file the agent wrote (not a regular file)`;
      let current: string;
      try {
        current = fs.readFileSync(file, 'utf8');
      } catch (e) {
        return `${file} exists and cannot be read (${(e as Error).message})`;
      }
      if (this.o.ownership?.owns(name, current)) return undefined;
      if (current === content && unitFileSlice(current) === this.o.slice) return undefined;
      const where = unitFileSlice(current) === this.o.slice ? 'the agent did not write it' : `it is not in the slice ${this.o.slice}`;
      return `the unit file ${file} exists and is not the agent's (${where})`;
    }
    // No file here: systemd may still load the name from another directory (an admin's unit).
    try {
      const unitPath = await this.mgr.LoadUnit(name);
      const fragment = (await this.mgr.getProperty(unitPath, UNIT_IFACE, 'FragmentPath')) as string;
      if (fragment && path.resolve(fragment) !== path.resolve(file)) return `systemd already loads the unit ${name} from ${fragment}`;
    } catch (e) {
      if (!ignorable(e)) return `the unit ${name} could not be looked up: ${(e as Error).message}`;
    }
    return undefined;
  }

  /** Writes a unit file atomically into the unit directory, and records it as the agent's (for `pod`). */
  write(name: string, content: string, pod?: { key: string; uid: string }): void {
    writeUnitFileAtomic(this.o.unitDir, name, content);
    if (pod) this.o.ownership?.record(name, pod.key, pod.uid, content);
  }

  /** Records a file that is already there (adopted) as the agent's. */
  adopt(name: string, content: string, pod: { key: string; uid: string }): void {
    if (!this.o.ownership || this.o.ownership.owns(name, content)) return;
    this.o.ownership.record(name, pod.key, pod.uid, content);
  }

  /** The pod (uid) the agent recorded as the unit's, if any. */
  recordedOwner(name: string): string | undefined {
    return this.o.ownership?.get(name)?.uid;
  }

  private reloading?: Promise<void>;
  private nextReload?: Promise<void>;

  /**
   * One Reload for every caller of a moment: a caller that comes while a Reload runs gets the next
   * one (its file change may have come after the running one read the directory), and every caller
   * that comes meanwhile shares it.
   */
  reload(): Promise<void> {
    if (this.nextReload) return this.nextReload;
    if (!this.reloading) {
      this.reloading = this.mgr.Reload().finally(() => { this.reloading = undefined; });
      return this.reloading;
    }
    this.nextReload = this.reloading.catch(() => undefined).then(() => {
      this.nextReload = undefined;
      return this.reload();
    });
    return this.nextReload;
  }

  /** Whether systemd must reload to see these files (loaded before with other content, or not found). */
  async stale(units: readonly string[]): Promise<boolean> {
    let stale = false;
    await pool(units, this.o.concurrency, async (u) => {
      try {
        await this.mgr.LoadUnit(u);
        const unitPath = unitObjectPath(u);
        const [load, need] = await Promise.all([this.mgr.getProperty(unitPath, UNIT_IFACE, 'LoadState'), this.mgr.getProperty(unitPath, UNIT_IFACE, 'NeedDaemonReload')]);
        if (load !== 'loaded' || need === true) stale = true;
      } catch {
        stale = true;
      }
    });
    return stale;
  }

  /** EnableUnitFiles for all of `units` in one call (WantedBy= links: started at boot). */
  async enable(units: readonly string[]): Promise<void> {
    if (units.length) await this.mgr.EnableUnitFiles([...units], false, true);
  }

  /** Starts the unit, or restarts it when its file was replaced while it ran. */
  async start(unit: string, restart: boolean): Promise<void> {
    if (restart) await this.mgr.RestartUnit(unit, 'replace');
    else await this.mgr.StartUnit(unit, 'replace');
  }
}
