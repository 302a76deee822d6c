/**
 * The publish lock: one synth at a time writes into an output directory, from its recovery pass
 * and staging to the last swap. A holder is a process named by its pid *and* its start time, so
 * a dead synth whose pid another process has since taken does not hold anything.
 *
 * Synth is synchronous (the cdk8s app has nothing else to do), so waiting is a blocking sleep.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

/** In the output directory, beside the plans; removed by its holder when the publish is done. */
export const PUBLISH_LOCK = '.uyuni-cdk-publish.lock';

/** Who holds the lock. */
export interface LockHolder {
  readonly pid: number;
  /** The process's start time (Linux: /proc/<pid>/stat field 22); absent where it cannot be read. */
  readonly start?: string;
  readonly host: string;
  /** When it took the lock (ISO 8601). */
  readonly since: string;
}

/** A synth that waited for the lock longer than it may: an expected failure, said in one line. */
export class PublishBusy extends Error {}

/**
 * Start time of process `pid` in clock ticks since boot, as the kernel keeps it; undefined where
 * /proc is not there (not Linux) or the process is gone. The command name (field 2) may hold
 * spaces and parentheses, so fields are counted after its last `)`.
 */
export function processStart(pid: number): string | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

/**
 * Whether process `pid` (started at `start`, when known) still runs. Our own pid is a dead
 * predecessor's unless the start time says it is us (a container's synth often has the same pid
 * every run).
 */
export function processAlive(pid: number, start?: string): boolean {
  if (pid === process.pid) return start !== undefined && start === processStart(pid);
  try {
    process.kill(pid, 0);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  if (start === undefined) return true;
  const now = processStart(pid);
  // A start time we cannot read (another user's /proc hidden): trust the pid.
  return now === undefined || now === start;
}

/** This process as a holder. */
export function self(): LockHolder {
  return { pid: process.pid, start: processStart(process.pid), host: os.hostname(), since: new Date().toISOString() };
}

function holderAlive(h: LockHolder): boolean {
  // A holder on another host (a shared file system): nothing here can tell; it holds until removed.
  return h.host !== os.hostname() || processAlive(h.pid, h.start);
}

function readHolder(file: string): { holder?: LockHolder; text: string } | undefined {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
  try {
    const v = JSON.parse(text) as Partial<LockHolder>;
    if (typeof v.pid === 'number' && typeof v.host === 'string') return { holder: v as LockHolder, text };
  } catch {
    // being written (created, not yet filled), or damaged: see `stale`
  }
  return { text };
}

/** A lock file without a readable holder is being written; one that stays so this long was left by a crash. */
const UNREADABLE_STALE_MS = 5000;

function stale(file: string, seen: { holder?: LockHolder }): boolean {
  if (seen.holder) return !holderAlive(seen.holder);
  try {
    return Date.now() - fs.statSync(file).mtimeMs > UNREADABLE_STALE_MS;
  } catch {
    return false;
  }
}

/**
 * Removes a dead holder's lock. It is renamed away first and checked again, so a lock that a live
 * synth took in the meantime is put back rather than removed.
 */
function takeOver(file: string, seen: { text: string }): void {
  const aside = `${file}.stale-${process.pid}-${Math.random().toString(36).slice(2)}`;
  try {
    fs.renameSync(file, aside);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return; // someone else took it over
    throw e;
  }
  try {
    if (fs.readFileSync(aside, 'utf8') !== seen.text) {
      try {
        fs.linkSync(aside, file);
      } catch {
        // a third synth took the free lock meanwhile: it holds it now
      }
    }
  } finally {
    fs.rmSync(aside, { force: true });
  }
}

function sleep(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

export interface AcquireOptions {
  /** How long to wait for another synth. */
  readonly waitMs: number;
  /** Called once, when this synth has to wait, with the holder (when readable). */
  readonly onWait?: (holder: LockHolder | undefined) => void;
  /** The directory as the user would type it, for messages. */
  readonly shown: string;
}

/** Takes the publish lock of `dir` (created when missing); returns its release. */
export function acquirePublishLock(dir: string, o: AcquireOptions): () => void {
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, PUBLISH_LOCK);
  const me = self();
  const text = `${JSON.stringify(me)}\n`;
  const deadline = Date.now() + o.waitMs;
  let told = false;
  for (;;) {
    try {
      const fd = fs.openSync(file, 'wx', 0o644);
      try {
        fs.writeSync(fd, text);
      } finally {
        fs.closeSync(fd);
      }
      return () => release(file, text);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
    const seen = readHolder(file);
    if (!seen) continue; // released just now
    if (stale(file, seen)) {
      takeOver(file, seen);
      continue;
    }
    if (Date.now() >= deadline) {
      throw new PublishBusy(`another synth is publishing into ${o.shown}/ (${describe(seen.holder)}) and did not finish within ${Math.round(o.waitMs / 1000)}s; `
        + `if no synth runs, remove ${o.shown}/${PUBLISH_LOCK}`);
    }
    if (!told) o.onWait?.(seen.holder);
    told = true;
    sleep(50);
  }
}

function release(file: string, text: string): void {
  // Only our own lock: should it ever have been taken over, the new holder's stays.
  const seen = readHolder(file);
  if (seen?.text === text) fs.rmSync(file, { force: true });
}

export function describe(h: LockHolder | undefined): string {
  return h ? `pid ${h.pid} on ${h.host}, since ${h.since}` : 'its holder is still being written';
}
