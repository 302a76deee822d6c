/**
 * The start-up cleanup (spec §3 with the §4 fixes): compare the units of the slice with the pods
 * bound to the node and remove what does not belong.
 *
 * Fails closed: the pod list and the units of the slice are read side by side, but nothing is
 * decided or changed unless the pod list was read completely. Units outside the slice are never
 * touched: a loaded unit counts only when its file (or systemd) puts it in the slice, a file on disk
 * only when it says `Slice=<slice>`.
 */
import * as fs from 'fs';
import * as path from 'path';
import { DEFAULT_CONCURRENCY, DEFAULT_JOB_TIMEOUT_SECONDS } from '../systemd/defaults';
import type { PodLike } from '../systemd/pod';
import { renderNodeUnits } from '../systemd/render';
import { unitFileSlice } from '../systemd/unit';
import { unitNameProblem } from '../systemd/unit-name';
import { Decision, decideCleanup, ObservedUnit } from './decide';
import type { Logger } from './log';
import { listNodePods } from './pods';
import { dbusErrorName, SERVICE_IFACE, SystemdManager, UNIT_IFACE, unitObjectPath } from './systemd-dbus';

export interface CleanupOptions {
  readonly node: string;
  /** The user manager on the session bus instead of the system manager. */
  readonly session: boolean;
  /** Decide and log, touch nothing (no Reload, no stop, no file removed). */
  readonly dryRun: boolean;
  readonly packageDir: string;
  /** Where the agent's unit files live; files here that carry the slice are found even when not loaded. */
  readonly unitDir: string;
  readonly slice: string;
  /** The kubeconfig used for the API and written into units as KUBECONFIG. */
  readonly kubeconfig: string;
  /** D-Bus address overriding the environment's. */
  readonly busAddress?: string;
  /** Per page of the pod list. @default DEFAULT_API_TIMEOUT_SECONDS (30 s) */
  readonly apiTimeoutMs?: number;
  /** Per D-Bus call. @default 30000 */
  readonly callTimeoutMs?: number;
  /** Wait for one stop job's JobRemoved. @default DEFAULT_JOB_TIMEOUT_SECONDS (120 s) */
  readonly jobTimeoutMs?: number;
  /** D-Bus calls in flight at the same time (units looked at, units stopped). @default DEFAULT_CONCURRENCY (64) */
  readonly concurrency?: number;
  readonly log: Logger;
  /** The node's pods, already read completely (`agent run` lists once for the cleanup and its watch). @default listed here */
  readonly pods?: readonly PodLike[];
}

export interface CleanupResult {
  readonly decisions: readonly Decision[];
  readonly removed: readonly string[];
  readonly failures: ReadonlyArray<{ readonly unit: string; readonly error: string }>;
}

/** Runs `work` over `items`, at most `limit` at a time. */
export async function pool<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const runners = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) await work(items[next++]);
  });
  await Promise.all(runners);
}

function isInside(dir: string, file: string): boolean {
  const rel = path.relative(path.resolve(dir), path.resolve(file));
  return rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel);
}

function readUnitFile(file: string): { content?: string; readError?: string } {
  try {
    return { content: fs.readFileSync(file, 'utf8') };
  } catch (e) {
    return { readError: (e as Error).message };
  }
}

/** The units of the slice: loaded ones (the slice's RequiredBy) and unit files on disk that carry the slice. */
export async function findSliceUnits(mgr: SystemdManager, options: Pick<CleanupOptions, 'slice' | 'unitDir' | 'concurrency'>): Promise<ObservedUnit[]> {
  const found = new Map<string, ObservedUnit>();
  const slicePath = await mgr.LoadUnit(options.slice);
  const requiredBy = ((await mgr.getProperty(slicePath, UNIT_IFACE, 'RequiredBy')) as string[])
    .filter((n) => n.endsWith('.service') && !unitNameProblem(n));
  await pool(requiredBy, options.concurrency ?? DEFAULT_CONCURRENCY, async (name) => {
    const unitPath = unitObjectPath(name);
    const file = (await mgr.getProperty(unitPath, UNIT_IFACE, 'FragmentPath')) as string;
    const read = file ? readUnitFile(file) : {};
    // The unit file says which slice; only when it does not (a drop-in, no file) ask systemd.
    if (read.content === undefined || unitFileSlice(read.content) !== options.slice) {
      if ((await mgr.getProperty(unitPath, SERVICE_IFACE, 'Slice')) !== options.slice) return;
    }
    found.set(name, { name, fragmentPath: file, ...read });
  });

  let entries: fs.Dirent[] = [];
  try {
    entries = fs.readdirSync(options.unitDir, { withFileTypes: true });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
  for (const entry of entries) {
    const name = entry.name;
    if (found.has(name) || !name.endsWith('.service') || unitNameProblem(name) || !(entry.isFile() || entry.isSymbolicLink())) continue;
    const file = path.join(options.unitDir, name);
    const read = readUnitFile(file);
    if (read.content !== undefined && unitFileSlice(read.content) === options.slice) {
      found.set(name, { name, fragmentPath: file, content: read.content });
    }
  }
  return [...found.values()];
}

const IGNORABLE = new Set(['org.freedesktop.systemd1.NoSuchUnit', 'org.freedesktop.DBus.Error.FileNotFound']);

/** Queues the unit's stop job: its object path, if systemd queued one, and what went wrong. */
async function requestStop(mgr: SystemdManager, unit: string, problems: string[]): Promise<string | undefined> {
  try {
    return await mgr.StopUnit(unit, 'replace');
  } catch (e) {
    if (!IGNORABLE.has(dbusErrorName(e) ?? '')) problems.push(`StopUnit: ${(e as Error).message}`);
    return undefined;
  }
}

/** Waits for the stop job's JobRemoved, then reset-failed (#321). */
async function finishStop(mgr: SystemdManager, unit: string, job: string | undefined, jobTimeoutMs: number, problems: string[]): Promise<void> {
  if (job) {
    try {
      const result = await mgr.waitForJob(job, jobTimeoutMs);
      if (result !== 'done') problems.push(`stop job ${job} ended with "${result}"`);
    } catch (e) {
      problems.push((e as Error).message);
    }
  }
  try {
    await mgr.ResetFailedUnit(unit);
  } catch (e) {
    // A stopped unit without references may already be gone (garbage-collected): nothing to reset.
    if (!IGNORABLE.has(dbusErrorName(e) ?? '')) problems.push(`ResetFailedUnit: ${(e as Error).message}`);
  }
}

/** Stop, waiting for the job's JobRemoved, then reset-failed (#321). Returns problems, if any. */
export async function stopUnit(mgr: SystemdManager, unit: string, jobTimeoutMs: number): Promise<string[]> {
  const problems: string[] = [];
  await finishStop(mgr, unit, await requestStop(mgr, unit, problems), jobTimeoutMs, problems);
  return problems;
}

/**
 * Stops many units: at most `concurrency` StopUnit calls in flight, but every queued job waited
 * for at once. systemd runs the jobs side by side, so a pool that held a slot per job until its
 * JobRemoved stopped the units in waves (64, then the rest) and took a third longer for 100.
 */
export async function stopUnits(mgr: SystemdManager, units: readonly string[], concurrency: number, jobTimeoutMs: number, problems: Map<string, string[]>): Promise<void> {
  const finishing: Array<Promise<void>> = [];
  await pool(units, concurrency, async (unit) => {
    const job = await requestStop(mgr, unit, problems.get(unit)!);
    finishing.push(finishStop(mgr, unit, job, jobTimeoutMs, problems.get(unit)!));
  });
  await Promise.all(finishing);
}

/**
 * Disables the units in one DisableUnitFiles call: systemd scans the unit directories once per call
 * (~0.1 s with 200 units), so one call per unit would dominate. If the batch fails, unit by unit,
 * to tell which one failed.
 */
export async function disableUnits(mgr: SystemdManager, units: readonly string[], problems: Map<string, string[]>): Promise<void> {
  if (units.length === 0) return;
  try {
    await mgr.DisableUnitFiles([...units], false);
    return;
  } catch {
    // fall through to one call per unit
  }
  for (const unit of units) {
    try {
      await mgr.DisableUnitFiles([unit], false);
    } catch (e) {
      if (!IGNORABLE.has(dbusErrorName(e) ?? '')) problems.get(unit)!.push(`DisableUnitFiles: ${(e as Error).message}`);
    }
  }
}

function deleteUnitFile(d: Decision, options: CleanupOptions, problems: string[]): void {
  if (!d.fragmentPath) return;
  if (!isInside(options.unitDir, d.fragmentPath)) {
    options.log.log('WARN', `The file ${d.fragmentPath} of the systemd unit [${d.unit}] is outside ${options.unitDir} and was not deleted.`);
    return;
  }
  try {
    fs.unlinkSync(d.fragmentPath);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') problems.push(`deleting ${d.fragmentPath}: ${(e as Error).message}`);
  }
}

export async function runCleanup(options: CleanupOptions): Promise<CleanupResult> {
  // Looking is not touching: the pod list and the units of the slice are read side by side, and
  // nothing is decided, logged or changed unless the pod list was read completely.
  let mgr: SystemdManager | undefined;
  const [podList, discovery] = await Promise.allSettled([
    options.pods ? Promise.resolve([...options.pods]) : listNodePods({ kubeconfig: options.kubeconfig, node: options.node, timeoutMs: options.apiTimeoutMs }),
    (async () => {
      mgr = await SystemdManager.connect({ session: options.session, address: options.busAddress, callTimeoutMs: options.callTimeoutMs });
      // Before any StopUnit, so no JobRemoved is missed; not subscribed (watchJobs says why).
      if (!options.dryRun) await mgr.watchJobs();
      return findSliceUnits(mgr, options);
    })(),
  ]);
  try {
    if (podList.status === 'rejected') throw podList.reason;
    if (discovery.status === 'rejected') throw discovery.reason;
    if (!mgr) throw new Error('unreachable: no bus connection');
    return await decideAndRemove(mgr, podList.value, discovery.value, options);
  } finally {
    (mgr as SystemdManager | undefined)?.close();
  }
}

async function decideAndRemove(mgr: SystemdManager, pods: PodLike[], units: ObservedUnit[], options: CleanupOptions): Promise<CleanupResult> {
  const expected = renderNodeUnits(pods, {
    session: options.session,
    packageDir: options.packageDir,
    kubeconfig: options.kubeconfig,
    slice: options.slice,
  });
  for (const [unit, owners] of expected.collisions) {
    options.log.log('WARN', `The pods ${owners.map((p) => `[${p}]`).join(' and ')} map to the same systemd unit [${unit}]; it is not rendered for either.`);
  }
  const decisions = decideCleanup(units, expected);
  for (const d of decisions) options.log.log(d.level, d.message);
  const removals = decisions.filter((d) => d.action === 'remove');
  if (options.dryRun) {
    options.log.log('INFO', `Dry run: ${removals.length} systemd units would be removed, ${decisions.length - removals.length} kept; nothing was changed.`);
    return { decisions, removed: [], failures: [] };
  }

  // Removal: stop + reset-failed concurrently per unit, meanwhile one DisableUnitFiles for all
  // (disabling only removes symlinks, it does not touch the running unit); then delete the files,
  // one Reload at the end.
  const problems = new Map(removals.map((d) => [d.unit, [] as string[]]));
  const names = removals.map((d) => d.unit);
  await Promise.all([
    stopUnits(mgr, names, options.concurrency ?? DEFAULT_CONCURRENCY, options.jobTimeoutMs ?? DEFAULT_JOB_TIMEOUT_SECONDS * 1000, problems),
    disableUnits(mgr, names, problems),
  ]);
  for (const d of removals) deleteUnitFile(d, options, problems.get(d.unit)!);
  if (removals.length) await mgr.Reload();

  const removed: string[] = [];
  const failures: Array<{ unit: string; error: string }> = [];
  for (const d of removals) {
    const p = problems.get(d.unit)!;
    if (p.length === 0) {
      removed.push(d.unit);
      continue;
    }
    failures.push({ unit: d.unit, error: p.join('; ') });
    options.log.log('ERROR', `The systemd unit [${d.unit}] could not be removed cleanly: ${p.join('; ')}`);
  }
  return { decisions, removed, failures };
}
