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
import { SERVICE_IFACE, SystemdManager, UNIT_IFACE, unitObjectPath } from './systemd-dbus';
import { UnitOwnership } from './ownership';
import { pool, UnitLifecycle } from './unit-lifecycle';

export interface CleanupOptions {
  readonly node: string;
  /** The user manager on the session bus instead of the system manager. */
  readonly session: boolean;
  /** Decide and log, touch nothing (no Reload, no stop, no file removed). */
  readonly dryRun: boolean;
  readonly packageDir: string;
  /** Where the agent's unit files live; files here that carry the slice are found even when not loaded. */
  readonly unitDir: string;
  /** The agent's state directory: the records of the unit files it wrote are forgotten with the units. @default none */
  readonly stateDir?: string;
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
  /**
   * The process's connection to systemd (`agent run` has one for the cleanup and its loop; it must
   * have called watchJobs()). @default connected here and closed at the end
   */
  readonly mgr?: SystemdManager;
}

export interface CleanupResult {
  readonly decisions: readonly Decision[];
  readonly removed: readonly string[];
  readonly failures: ReadonlyArray<{ readonly unit: string; readonly error: string }>;
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

export async function runCleanup(options: CleanupOptions): Promise<CleanupResult> {
  // Looking is not touching: the pod list and the units of the slice are read side by side, and
  // nothing is decided, logged or changed unless the pod list was read completely.
  let mgr: SystemdManager | undefined = options.mgr;
  const [podList, discovery] = await Promise.allSettled([
    options.pods ? Promise.resolve([...options.pods]) : listNodePods({ kubeconfig: options.kubeconfig, node: options.node, timeoutMs: options.apiTimeoutMs }),
    (async () => {
      if (!mgr) {
        mgr = await SystemdManager.connect({ session: options.session, address: options.busAddress, callTimeoutMs: options.callTimeoutMs });
        // Before any StopUnit, so no JobRemoved is missed; not subscribed (watchJobs says why).
        if (!options.dryRun) await mgr.watchJobs();
      }
      return findSliceUnits(mgr, options);
    })(),
  ]);
  try {
    if (podList.status === 'rejected') throw podList.reason;
    if (discovery.status === 'rejected') throw discovery.reason;
    if (!mgr) throw new Error('unreachable: no bus connection');
    const ownership = options.stateDir ? new UnitOwnership(options.stateDir) : undefined;
    const lifecycle = new UnitLifecycle(mgr, { unitDir: options.unitDir, slice: options.slice, ownership, concurrency: options.concurrency ?? DEFAULT_CONCURRENCY, log: options.log });
    return await decideAndRemove(lifecycle, podList.value, discovery.value, options);
  } finally {
    if (!options.mgr) (mgr as SystemdManager | undefined)?.close();
  }
}

async function decideAndRemove(lifecycle: UnitLifecycle, pods: PodLike[], units: ObservedUnit[], options: CleanupOptions): Promise<CleanupResult> {
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

  // Removal (unit-lifecycle.ts): stop + reset-failed concurrently per unit, meanwhile one
  // DisableUnitFiles for all; then the files deleted, one Reload at the end.
  const jobTimeoutMs = options.jobTimeoutMs ?? DEFAULT_JOB_TIMEOUT_SECONDS * 1000;
  const problems = await lifecycle.remove(removals.map((d) => ({ name: d.unit, jobTimeoutMs, file: d.fragmentPath || false })));
  if (removals.length) await lifecycle.reload();

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
