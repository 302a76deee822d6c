/**
 * The start-up cleanup (spec §3 with the §4 fixes): compare the units of the slice with the pods
 * bound to the node and remove what does not belong.
 *
 * Order matters for failing closed: the pod list is read completely first; nothing on the
 * node is touched unless that succeeded. Units outside the slice are never touched: a loaded unit
 * counts only when systemd reports it in the slice, a file on disk only when it says `Slice=<slice>`.
 */
import * as fs from 'fs';
import * as path from 'path';
import { renderNodeUnits } from '../systemd/render';
import { unitFileSlice } from '../systemd/unit';
import { unitNameProblem } from '../systemd/unit-name';
import { Decision, decideCleanup, ObservedUnit } from './decide';
import type { Logger } from './log';
import { listNodePods } from './pods';
import { dbusErrorName, SERVICE_IFACE, SystemdManager, UNIT_IFACE } from './systemd-dbus';

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
  /** Per page of the pod list. @default 30000 */
  readonly apiTimeoutMs?: number;
  /** Per D-Bus call. @default 30000 */
  readonly callTimeoutMs?: number;
  /** Wait for one stop job's JobRemoved. @default 120000 */
  readonly jobTimeoutMs?: number;
  /** Units removed at the same time. @default 32 */
  readonly concurrency?: number;
  readonly log: Logger;
}

export interface CleanupResult {
  readonly decisions: readonly Decision[];
  readonly removed: readonly string[];
  readonly failures: ReadonlyArray<{ readonly unit: string; readonly error: string }>;
}

/** Runs `work` over `items`, at most `limit` at a time. */
async function pool<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
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
  await pool(requiredBy, options.concurrency ?? 32, async (name) => {
    const unitPath = await mgr.LoadUnit(name);
    const [slice, fragmentPath] = await Promise.all([
      mgr.getProperty(unitPath, SERVICE_IFACE, 'Slice'),
      mgr.getProperty(unitPath, UNIT_IFACE, 'FragmentPath'),
    ]);
    if (slice !== options.slice) return;
    const file = fragmentPath as string;
    found.set(name, { name, fragmentPath: file, ...(file ? readUnitFile(file) : {}) });
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

/** Stop (waiting for the job), reset-failed, disable, delete the file. Returns problems, if any. */
async function removeUnit(mgr: SystemdManager, d: Decision, options: CleanupOptions): Promise<string[]> {
  const problems: string[] = [];
  const jobTimeoutMs = options.jobTimeoutMs ?? 120_000;
  try {
    const job = await mgr.StopUnit(d.unit, 'replace');
    const result = await mgr.waitForJob(job, jobTimeoutMs);
    if (result !== 'done') problems.push(`stop job ended with "${result}"`);
  } catch (e) {
    if (dbusErrorName(e) !== 'org.freedesktop.systemd1.NoSuchUnit') problems.push(`StopUnit: ${(e as Error).message}`);
  }
  try {
    await mgr.ResetFailedUnit(d.unit);
  } catch (e) {
    if (dbusErrorName(e) !== 'org.freedesktop.systemd1.NoSuchUnit') problems.push(`ResetFailedUnit: ${(e as Error).message}`);
  }
  try {
    await mgr.DisableUnitFiles([d.unit], false);
  } catch (e) {
    if (dbusErrorName(e) !== 'org.freedesktop.systemd1.NoSuchUnit') problems.push(`DisableUnitFiles: ${(e as Error).message}`);
  }
  if (d.fragmentPath) {
    if (isInside(options.unitDir, d.fragmentPath)) {
      try {
        fs.unlinkSync(d.fragmentPath);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'ENOENT') problems.push(`deleting ${d.fragmentPath}: ${(e as Error).message}`);
      }
    } else {
      options.log.log('WARN', `The file ${d.fragmentPath} of the systemd unit [${d.unit}] is outside ${options.unitDir} and was not deleted.`);
    }
  }
  return problems;
}

export async function runCleanup(options: CleanupOptions): Promise<CleanupResult> {
  // Fail closed: without the complete pod list nothing below runs (PodListError propagates).
  const pods = await listNodePods({ kubeconfig: options.kubeconfig, node: options.node, timeoutMs: options.apiTimeoutMs });
  const expected = renderNodeUnits(pods, {
    session: options.session,
    packageDir: options.packageDir,
    kubeconfig: options.kubeconfig,
    slice: options.slice,
  });
  for (const [unit, owners] of expected.collisions) {
    options.log.log('WARN', `The pods ${owners.map((p) => `[${p}]`).join(' and ')} map to the same systemd unit [${unit}]; it is not rendered for either.`);
  }

  const mgr = await SystemdManager.connect({ session: options.session, address: options.busAddress, callTimeoutMs: options.callTimeoutMs });
  try {
    if (!options.dryRun) {
      await mgr.Subscribe();
      await mgr.Reload();
    }
    const units = await findSliceUnits(mgr, options);
    const decisions = decideCleanup(units, expected);
    for (const d of decisions) options.log.log(d.level, d.message);
    const removals = decisions.filter((d) => d.action === 'remove');
    if (options.dryRun) {
      options.log.log('INFO', `Dry run: ${removals.length} systemd units would be removed, ${decisions.length - removals.length} kept; nothing was changed.`);
      return { decisions, removed: [], failures: [] };
    }

    const removed: string[] = [];
    const failures: Array<{ unit: string; error: string }> = [];
    await pool(removals, options.concurrency ?? 32, async (d) => {
      const problems = await removeUnit(mgr, d, options);
      if (problems.length) {
        failures.push({ unit: d.unit, error: problems.join('; ') });
        options.log.log('ERROR', `The systemd unit [${d.unit}] could not be removed cleanly: ${problems.join('; ')}`);
      } else {
        removed.push(d.unit);
      }
    });
    if (removals.length) await mgr.Reload();
    return { decisions, removed, failures };
  } finally {
    mgr.close();
  }
}
