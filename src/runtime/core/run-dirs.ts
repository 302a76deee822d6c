/**
 * Run directories: where `run` keeps each attempt's logs and events, grouped by series.
 *
 * `<runs>/<series>/<attempt>/` under the runs directory of a namespace and plan
 * (src/plan/run-defaults.ts `defaultRunsDir`). A **series** is the runs of one plan in one
 * namespace from the first run after the last finished one up to and including the run that
 * finishes it: a run that stops (a failed step, a refusal, Ctrl-C, a lost connection) is resumed by
 * running the same command again (src/runtime/decide/job-decision.ts: finished steps are skipped, running Jobs
 * attached to), and that run is the next attempt of the same series, so one migration's logs are
 * in one place. A series ends with an attempt whose `events.jsonl` ends in `run-done` with status
 * `done`; the next run starts a new one. The series is named after its first attempt's run id, and
 * holds `series.json` (its plan, namespace and first run) so nothing else is taken for one. A new
 * series never reuses a directory that exists: run ids are to the millisecond, and a series whose
 * name is taken (two runs in the same millisecond, or a clock set back) gets `.2`, `.3`, ...
 * Names sort oldest first by `compareRunNames` (run ids to the second, from before milliseconds,
 * sort as `.000`; a `.10` after a `.9`).
 * A directory of the layout before series (`<runs>/<run id>/events.jsonl`) reads as a series of
 * one finished or unfinished attempt.
 *
 * Retention: after a run, only the newest `keep` series of the plan and namespace remain
 * (`--keep-runs`, RUN_DEFAULTS.keepRuns); the current one is never removed, and nothing that is
 * not a series (no `series.json`, no `events.jsonl`) is touched.
 */
import * as fs from 'fs';
import * as path from 'path';

export const SERIES_FILE = 'series.json';
const EVENTS = 'events.jsonl';

export interface Series {
  /** The series' directory. */
  readonly dir: string;
  /** Its attempts' directories, oldest first. */
  readonly attempts: readonly string[];
  /** A directory of the layout before series: the attempt is the directory itself. */
  readonly legacy: boolean;
}

interface SeriesRecord {
  readonly plan: string;
  readonly namespace: string;
  readonly firstRun: string;
}

/** A run id to sort by: `<plan>-<UTC time>[.<n>]`, the time to the millisecond, the suffix a number. */
function sortKey(name: string): [string, number] {
  const m = /^(.*?)(?:\.(\d+))?$/.exec(name.replace(/(T\d{6})Z/, '$1.000Z'))!;
  return [m[1], m[2] === undefined ? 1 : Number(m[2])];
}

/** Run ids (and series, attempt names) oldest first: by time, then by their `.n` suffix. */
export function compareRunNames(a: string, b: string): number {
  const [ka, na] = sortKey(a);
  const [kb, nb] = sortKey(b);
  return ka < kb ? -1 : ka > kb ? 1 : na - nb;
}

function subdirs(dir: string): string[] {
  try {
    return fs.readdirSync(dir, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name).sort(compareRunNames);
  } catch {
    return [];
  }
}

/** Makes a directory that did not exist: `base`, else `base.2`, `base.3`, ... (mkdir fails on one that exists). */
function makeNew(parent: string, base: string): string {
  fs.mkdirSync(parent, { recursive: true });
  for (let n = 1; ; n++) {
    const dir = path.join(parent, n === 1 ? base : `${base}.${n}`);
    try {
      fs.mkdirSync(dir);
      return dir;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
  }
}

export const isSeries = (dir: string) => fs.existsSync(path.join(dir, SERIES_FILE));

/** The series in a runs directory, oldest first (new ones and those of the layout before). */
export function listSeries(runsDir: string): Series[] {
  return subdirs(runsDir).map((name) => {
    const dir = path.join(runsDir, name);
    return isSeries(dir)
      ? { dir, attempts: subdirs(dir).map((a) => path.join(dir, a)), legacy: false }
      : { dir, attempts: [dir], legacy: true };
  });
}

/** Every attempt in a runs directory, newest first. */
export function attemptsNewestFirst(runsDir: string): string[] {
  return listSeries(runsDir).flatMap((s) => s.attempts).sort((a, b) => compareRunNames(path.basename(b), path.basename(a)));
}

/**
 * The other attempts a failure report may find saved logs in: those of the same runs directory,
 * newest first (for a `--run-dir` of the user's: the directories beside it, as before series).
 */
export function earlierAttempts(runDir: string): string[] {
  const parent = path.dirname(runDir);
  const runs = isSeries(parent) ? path.dirname(parent) : parent;
  return attemptsNewestFirst(runs).filter((d) => path.resolve(d) !== path.resolve(runDir));
}

/** How an attempt ended, from the last event of its events.jsonl: `done`, `failed`, `interrupted`, ..., or none (killed, or still running). */
export function attemptStatus(attemptDir: string): string | undefined {
  let fd: number;
  try {
    fd = fs.openSync(path.join(attemptDir, EVENTS), 'r');
  } catch {
    return undefined;
  }
  try {
    // the last event is short; a 24-hour run's file is not read whole
    const size = fs.fstatSync(fd).size;
    const len = Math.min(size, 64 * 1024);
    const buf = Buffer.alloc(len);
    fs.readSync(fd, buf, 0, len, size - len);
    const last = buf.toString('utf8').trimEnd().split('\n').pop() ?? '';
    const ev = JSON.parse(last) as { type?: string; status?: string };
    return ev.type === 'run-done' && typeof ev.status === 'string' ? ev.status : undefined;
  } catch {
    return undefined;
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * A series is open until an attempt of it finished the plan: any attempt, not only the newest (a
 * run refused by the lock while another ran has a newer directory than the run that finished).
 */
export const seriesOpen = (s: Series) => !s.attempts.some((a) => attemptStatus(a) === 'done');

/**
 * The directory of a new attempt, made: in the newest series when that one is open (this run
 * resumes it), else in a new series named `runId`. Returns it and its series.
 */
export function openAttempt(runsDir: string, runId: string, plan: { name: string; namespace: string }): { dir: string; series: string } {
  const newest = listSeries(runsDir).filter((s) => !s.legacy).pop();
  let series = newest && seriesOpen(newest) ? newest.dir : undefined;
  if (!series) {
    // never an existing directory: that would make this run an attempt of a finished series
    series = makeNew(runsDir, runId);
    const record: SeriesRecord = { plan: plan.name, namespace: plan.namespace, firstRun: runId };
    fs.writeFileSync(path.join(series, SERIES_FILE), `${JSON.stringify(record, null, 2)}\n`);
  }
  return { dir: makeNew(series, runId), series };
}

/**
 * Removes the oldest series beyond the newest `keep` (never `current`, nor anything that is not
 * a series); returns the directories removed.
 */
export function pruneSeries(runsDir: string, keep: number, current: string): string[] {
  const all = listSeries(runsDir).filter((s) => !s.legacy || fs.existsSync(path.join(s.dir, EVENTS)));
  const removable = all.filter((s) => path.resolve(s.dir) !== path.resolve(current));
  const excess = all.length - Math.max(keep, 1);
  const removed: string[] = [];
  for (const s of removable.slice(0, Math.max(excess, 0))) {
    fs.rmSync(s.dir, { recursive: true, force: true });
    removed.push(s.dir);
  }
  return removed;
}

/** One line per series and attempt, for the support bundle's runs/index.txt. */
export function describeRuns(runsDir: string): string {
  const lines: string[] = [];
  for (const s of listSeries(runsDir)) {
    lines.push(`${path.basename(s.dir)}: ${s.attempts.length} attempt${s.attempts.length === 1 ? '' : 's'}, ${seriesOpen(s) ? 'not finished' : 'finished'}${s.legacy ? ' (a run directory from before series)' : ''}`);
    if (!s.legacy) for (const a of s.attempts) lines.push(`  ${path.basename(a)}: ${attemptStatus(a) ?? 'no run-done (killed, or still running)'}`);
  }
  return lines.length ? `${lines.join('\n')}\n` : '';
}
