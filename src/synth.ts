import * as fs from 'fs';
import * as path from 'path';
import { checkConfig, ConfigError, plansOf } from './config/load';
import type { UyuniConfig } from './config/schema';
import { planProblems, PLANS } from './plans';
import type { UyuniSettings } from './plans/settings';
import { PACKAGE_NAME, packageVersion } from './version';

/** What the plan index names as its generator (`generator`). */
export function generator(): string {
  return `${PACKAGE_NAME} ${packageVersion()}`;
}

/**
 * Synthesizes every plan of a configuration into `staging` (which must be empty or absent)
 * and returns the top-level directories written there.
 */
export function synthesize(config: UyuniConfig, staging: string): string[] {
  fs.rmSync(staging, { recursive: true, force: true });
  fs.mkdirSync(staging, { recursive: true });
  const by = generator();
  return plansOf(config).flatMap((name) => PLANS[name](config).synth(staging, by));
}

export interface WriteOptions {
  /**
   * Stage in this directory (which must be empty or absent, and is left holding the plans: the
   * cdk8s CLI's output, which it lists) and copy into `outdir`.
   * @default a staging directory of our own beside `outdir`, renamed in and then removed
   */
  readonly staging?: string;
  /** Test hook, see PublishOptions. @default none */
  readonly crashAfterRename?: number;
}

/**
 * Writes every plan of a checked configuration into `outdir` (`source` names it in errors):
 * checks what only the plans can see (ConfigError), synthesizes into a staging directory and
 * publishes the plans as one unit. Plans of other configurations in `outdir` are kept. Call
 * `recover(outdir)` first. Returns the plan directories written.
 */
export function writePlans(config: UyuniConfig, source: string, outdir: string, opts: WriteOptions = {}): string[] {
  const problems = planProblems(config, plansOf(config));
  if (problems.length > 0) throw new ConfigError(source, problems);
  // Our own staging directory sits beside the output, so the finished plans are renamed in, not copied.
  const staging = opts.staging ?? stagingBeside(outdir);
  try {
    const dirs = synthesize(config, staging);
    publish(staging, dirs, outdir, { move: !opts.staging, crashAfterRename: opts.crashAfterRename });
    return dirs;
  } finally {
    if (!opts.staging) fs.rmSync(staging, { recursive: true, force: true });
  }
}

/**
 * The library's synth (src/index.ts): the plans of `settings` (what uyuni.yaml holds, as a typed
 * object) written into `outdir` as `uyuni-cdk synth -o` writes them, each a directory for
 * `uyuni-cdk run`. Throws ConfigError naming every bad setting; `outdir` is then unchanged.
 */
export function synthesizePlans(settings: UyuniSettings, outdir: string): string[] {
  const dir = path.resolve(outdir);
  recover(dir);
  return writePlans(checkConfig(structuredClone(settings), 'synthesizePlans settings'), 'synthesizePlans settings', dir);
}

function stagingBeside(dist: string): string {
  const parent = path.dirname(dist);
  fs.mkdirSync(parent, { recursive: true });
  // The pid in the name tells `recover` whether its synth still runs.
  return fs.mkdtempSync(path.join(parent, `${STAGING_PREFIX}${process.pid}-`));
}

/** The journal of a publish in progress: dist/ holds it from before the first swap to after the last. */
export const JOURNAL = '.uyuni-cdk-publish.json';
/** Our staging directories beside dist/: `.uyuni-cdk-synth-<pid>-<random>`. */
export const STAGING_PREFIX = '.uyuni-cdk-synth-';

interface Journal {
  readonly pid: number;
  readonly id: string;
  /** Per plan: `incoming` (staged beside it) becomes `plan`; the old `plan`, if any, `outgoing`. */
  readonly moves: ReadonlyArray<{ plan: string; incoming: string; outgoing: string }>;
}

export interface PublishOptions {
  /** Rename the staged directories in (a staging directory of our own beside dist/) instead of copying them. */
  readonly move?: boolean;
  /**
   * Test hook (env UYUNI_CDK_CRASH_AFTER_RENAME): the process kills itself with SIGKILL right after
   * the n-th rename of the publish, as a crash or `kill -9` would.
   */
  readonly crashAfterRename?: number;
}

/**
 * Publishes the staged directories into `dist` as one unit, replacing the ones there; directories
 * of other plans are left as they are.
 *
 * 1. every staged plan is renamed (or copied) to `.<plan>.new-<id>` in dist/;
 * 2. the journal (JOURNAL) listing the swaps is written, fsynced and linked in (which fails when
 *    another synth is publishing);
 * 3. per plan, `<plan>` is renamed to `.<plan>.old-<id>` and `.<plan>.new-<id>` to `<plan>`;
 * 4. the journal is removed, then the old directories.
 *
 * A crash before 2 leaves the old set and `.new-` leftovers; one after it the journal, from which
 * `recover` completes the swap. Between the two renames of one plan its old directory is only at
 * `.<plan>.old-<id>` (rename(2) cannot replace a non-empty directory in one step).
 */
export function publish(staging: string, dirs: readonly string[], dist: string, opts: PublishOptions = {}): void {
  fs.mkdirSync(dist, { recursive: true });
  const id = `${process.pid}-${Date.now()}`;
  let renames = 0;
  const rename = (from: string, to: string) => {
    fs.renameSync(from, to);
    if (++renames === opts.crashAfterRename) process.kill(process.pid, 'SIGKILL');
  };
  const journal: Journal = {
    pid: process.pid, id,
    moves: dirs.map((plan) => ({ plan, incoming: `.${plan}.new-${id}`, outgoing: `.${plan}.old-${id}` })),
  };
  try {
    for (const { plan, incoming } of journal.moves) {
      const from = path.join(staging, plan);
      const to = path.join(dist, incoming);
      if (!opts.move) fs.cpSync(from, to, { recursive: true });
      else {
        try {
          rename(from, to);
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code !== 'EXDEV') throw e;
          fs.cpSync(from, to, { recursive: true });
        }
      }
    }
    writeJournal(dist, journal);
  } catch (e) {
    for (const { incoming } of journal.moves) fs.rmSync(path.join(dist, incoming), { recursive: true, force: true });
    throw e;
  }
  swap(dist, journal, rename);
}

function writeJournal(dist: string, journal: Journal): void {
  const tmp = path.join(dist, `${JOURNAL}.${journal.id}`);
  const fd = fs.openSync(tmp, 'wx');
  try {
    fs.writeSync(fd, `${JSON.stringify(journal, null, 2)}\n`);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  try {
    fs.linkSync(tmp, path.join(dist, JOURNAL));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    throw new Error(`another synth is publishing into ${dist} (${JOURNAL} exists); run synth again when it has finished`);
  } finally {
    fs.rmSync(tmp, { force: true });
  }
  syncDir(dist);
}

/** Steps 3 and 4 of `publish`; also completes an interrupted one (each step is skipped when done). */
function swap(dist: string, journal: Journal, rename: (from: string, to: string) => void): void {
  for (const { plan, incoming, outgoing } of journal.moves) {
    const target = path.join(dist, plan);
    if (!fs.existsSync(path.join(dist, incoming))) continue; // swapped already
    if (fs.existsSync(target)) {
      if (fs.existsSync(path.join(dist, outgoing))) fs.rmSync(target, { recursive: true, force: true });
      else rename(target, path.join(dist, outgoing));
    }
    rename(path.join(dist, incoming), target);
  }
  syncDir(dist);
  fs.rmSync(path.join(dist, JOURNAL), { force: true });
  for (const { outgoing } of journal.moves) fs.rmSync(path.join(dist, outgoing), { recursive: true, force: true });
}

/** Makes renames in `dir` durable; a no-op where directories cannot be opened (Windows). */
function syncDir(dir: string): void {
  let fd: number | undefined;
  try {
    fd = fs.openSync(dir, 'r');
    fs.fsyncSync(fd);
  } catch {
    // best effort
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

/**
 * Whether another process `pid` runs (EPERM: it does, as another user). Our own pid is a dead
 * predecessor's (a container's synth often has the same pid every run): recover runs before this
 * process stages or publishes anything.
 */
function alive(pid: number): boolean {
  if (pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

const LEFTOVER = /^\.(.+)\.(old|new)-(\d+)-\d+$/;
const STAGING = new RegExp(`^${STAGING_PREFIX.replace(/[.]/g, '\\.')}(?:(\\d+)-)?`);
/** A staging directory without the pid in its name (an earlier version's) counts as stale after this long. */
const STALE_MS = 10 * 60 * 1000;

/**
 * Run at the start of every synth: completes a publish a crash interrupted (from its journal) and
 * removes what dead synths left: `.<plan>.old-*`, `.<plan>.new-*` in dist/ and our staging
 * directories beside it. Leftovers of a synth that still runs are left to it. Returns what it did.
 */
export function recover(dist: string): string[] {
  const done: string[] = [];
  const journalFile = path.join(dist, JOURNAL);
  let journal: Journal | undefined;
  try {
    journal = JSON.parse(fs.readFileSync(journalFile, 'utf8')) as Journal;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') {
      // Written by tmp+link, so a journal is whole; an unreadable one is not ours to act on.
      throw new Error(`${journalFile}: cannot be read (${(e as Error).message}): remove it once no synth runs`);
    }
  }
  if (journal && !alive(journal.pid)) {
    swap(dist, journal, (from, to) => fs.renameSync(from, to));
    done.push(`completed the interrupted publish of ${journal.moves.map((m) => `${m.plan}/`).join(', ')}`);
  }
  const entries = (dir: string) => {
    try {
      return fs.readdirSync(dir);
    } catch {
      return [];
    }
  };
  for (const name of entries(dist)) {
    const m = LEFTOVER.exec(name);
    const tmpJournal = name.startsWith(`${JOURNAL}.`) ? /^(\d+)-/.exec(name.slice(JOURNAL.length + 1)) : null;
    const pid = m ? Number(m[3]) : tmpJournal ? Number(tmpJournal[1]) : undefined;
    if (pid === undefined || alive(pid)) continue;
    fs.rmSync(path.join(dist, name), { recursive: true, force: true });
    done.push(`removed ${name}`);
  }
  const parent = path.dirname(dist);
  for (const name of entries(parent)) {
    const m = STAGING.exec(name);
    if (!m) continue;
    const full = path.join(parent, name);
    const stale = m[1] ? !alive(Number(m[1])) : Date.now() - fs.statSync(full).mtimeMs > STALE_MS;
    if (!stale) continue;
    fs.rmSync(full, { recursive: true, force: true });
    done.push(`removed staging directory ${name}`);
  }
  return done;
}
