import * as fs from 'fs';
import * as path from 'path';
import { checkConfig, ConfigError, plansOf, plansOfSections } from './config/load';
import type { UyuniConfig } from './config/schema';
import { planProblems, PLANS } from './plans';
import { acquirePublishLock, describe, processAlive, processStart } from './publish-lock';
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
   * The cdk8s CLI's output directory, which it wipes at its start and lists after the app: it gets
   * a copy of the published plans. Never a staging directory: two CLIs share it, and each wipes it.
   * @default none
   */
  readonly listing?: string;
  /** Test hook, see PublishOptions. @default none */
  readonly crashAfterRename?: number;
}

/**
 * A refused configuration's problems and, in the same round, those only the plans can see (the
 * node pods' units) of the sections that passed the schema: every problem is listed at once.
 */
export function withPlanProblems(e: ConfigError): ConfigError {
  const valid = e.sections;
  if (!valid?.sections.nodeServices || valid.invalid.has('nodeServices')) return e;
  const config = valid.sections as UyuniConfig;
  const extra = planProblems(config, plansOfSections(valid) ?? ['node-services']).filter((p) => !e.problems.includes(p));
  return extra.length > 0 ? new ConfigError(e.file, [...e.problems, ...extra], undefined, e.where) : e;
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
  const staging = stagingBeside(outdir);
  try {
    const dirs = synthesize(config, staging);
    publish(staging, dirs, outdir, { move: true, crashAfterRename: opts.crashAfterRename });
    if (opts.listing) mirrorForListing(outdir, dirs, opts.listing);
    return dirs;
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
  }
}

/**
 * The published plans copied into the cdk8s CLI's output directory, which it lists. Only a
 * listing: another CLI started meanwhile may wipe it, which must not fail a synth that published.
 */
function mirrorForListing(outdir: string, dirs: readonly string[], listing: string): void {
  try {
    fs.rmSync(listing, { recursive: true, force: true });
    for (const d of dirs) fs.cpSync(path.join(outdir, d), path.join(listing, d), { recursive: true });
  } catch {
    // best effort; see above
  }
  // The CLI fails when its output directory is missing after the app.
  fs.mkdirSync(listing, { recursive: true });
}

/** How long a synth waits for another one publishing into the same directory. */
export const PUBLISH_WAIT_MS = 120_000;

/**
 * Runs `fn` holding the publish lock of `outdir` (src/publish-lock.ts): a synth's recovery pass,
 * staging and publish never overlap another's. A synth that has to wait says so once on stderr.
 */
export function withPublishLock<T>(outdir: string, shown: string, fn: () => T, waitMs = PUBLISH_WAIT_MS): T {
  const release = acquirePublishLock(outdir, {
    waitMs, shown,
    onWait: (h) => console.error(`uyuni-cdk: waiting for the synth publishing into ${shown}/ (${describe(h)})`),
  });
  try {
    return fn();
  } finally {
    release();
  }
}

/**
 * The library's synth (src/index.ts): the plans of `settings` (what uyuni.yaml holds, as a typed
 * object) written into `outdir` as `uyuni-cdk synth -o` writes them, each a directory for
 * `uyuni-cdk run`. Throws ConfigError naming every bad setting; `outdir` is then unchanged.
 */
export function synthesizePlans(settings: UyuniSettings, outdir: string): string[] {
  const dir = path.resolve(outdir);
  let config: UyuniConfig;
  try {
    config = checkConfig(structuredClone(settings), 'synthesizePlans settings');
  } catch (e) {
    throw e instanceof ConfigError ? withPlanProblems(e) : e;
  }
  return withPublishLock(dir, dir, () => {
    recover(dir);
    return writePlans(config, 'synthesizePlans settings', dir);
  });
}

function stagingBeside(dist: string): string {
  const parent = path.dirname(dist);
  fs.mkdirSync(parent, { recursive: true });
  // The pid and its start time in the name tell `recover` whether its synth still runs (a synth
  // into another directory of the same parent holds another lock).
  return fs.mkdtempSync(path.join(parent, `${STAGING_PREFIX}${process.pid}-${processStart(process.pid) ?? 0}-`));
}

/** The journal of a publish in progress: dist/ holds it from before the first swap to after the last. */
export const JOURNAL = '.uyuni-cdk-publish.json';
/** Our staging directories beside dist/: `.uyuni-cdk-synth-<pid>-<start time>-<random>`. */
export const STAGING_PREFIX = '.uyuni-cdk-synth-';

interface Journal {
  readonly pid: number;
  /** The publishing process's start time (src/publish-lock.ts processStart): a pid alone may be another process's by now. */
  readonly start?: string;
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
    pid: process.pid, start: processStart(process.pid), id,
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

const LEFTOVER = /^\.(.+)\.(old|new)-(\d+)-\d+$/;
/** `<pid>-<start>-` (or an earlier version's `<pid>-`, or none at all). */
const STAGING = new RegExp(`^${STAGING_PREFIX.replace(/[.]/g, '\\.')}(?:(\\d+)-(?:(\\d+)-)?)?`);
/** A staging directory without the pid in its name (an earlier version's) counts as stale after this long. */
const STALE_MS = 10 * 60 * 1000;

/**
 * Run at the start of every synth, holding the publish lock (`withPublishLock`): completes a
 * publish a crash interrupted (from its journal) and removes what dead synths left:
 * `.<plan>.old-*`, `.<plan>.new-*` in dist/ and our staging directories beside it. Under the lock
 * nobody else publishes into dist/, so its leftovers are a dead synth's (only a journal whose
 * holder runs, from a version without the lock, keeps its own); a staging directory beside it may
 * be that of a synth into another directory, and is removed only when its process is gone.
 * Returns what it did.
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
  const live = journal && processAlive(journal.pid, journal.start) ? journal.pid : undefined;
  if (journal && live === undefined) {
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
    if (pid === undefined || pid === live) continue;
    fs.rmSync(path.join(dist, name), { recursive: true, force: true });
    done.push(`removed ${name}`);
  }
  const parent = path.dirname(dist);
  for (const name of entries(parent)) {
    const m = STAGING.exec(name);
    if (!m) continue;
    const full = path.join(parent, name);
    // start time 0: it could not be read when the directory was made
    const stale = m[1] ? !processAlive(Number(m[1]), m[2] && m[2] !== '0' ? m[2] : undefined) : Date.now() - fs.statSync(full).mtimeMs > STALE_MS;
    if (!stale) continue;
    fs.rmSync(full, { recursive: true, force: true });
    done.push(`removed staging directory ${name}`);
  }
  return done;
}
