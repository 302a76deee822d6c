/**
 * The parsed documents of step files, kept by the SHA-256 of their text (and the YAML parser's
 * version) under `$XDG_CACHE_HOME/uyuni-cdk/plans/` (`~/.cache` without it): parsing a plan's
 * step files with `yaml` was a quarter of a `status`; JSON.parse of the same values takes a
 * millisecond. Only a successful parse whose values survive JSON unchanged is kept, so a hit
 * gives exactly what a parse would. An entry that is missing, unreadable, too large or not the
 * one for this text is parsed again; one that cannot be written costs the next command a parse.
 */
import * as crypto from 'crypto';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { version as YAML_VERSION } from 'yaml/package.json';

/** Bumped when what is cached for a text changes (its parse options, the entry's shape). */
const FORMAT = 1;

/** Entries kept: a plan's step files are a few to a dozen, so this is many plans and versions. */
export const MAX_ENTRIES = 1000;

/** The cache directory (XDG Base Directory: a relative $XDG_CACHE_HOME is ignored). */
export function parseCacheDir(env: NodeJS.ProcessEnv = process.env, home = os.homedir()): string {
  const xdg = env.XDG_CACHE_HOME;
  return path.join(xdg && path.isAbsolute(xdg) ? xdg : path.join(home, '.cache'), 'uyuni-cdk', 'plans');
}

/** Whether JSON gives `v` back exactly: plain objects and arrays of strings, finite numbers, booleans and null. */
export function jsonExact(v: unknown): boolean {
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return true;
  if (typeof v === 'number') return Number.isFinite(v) && !Object.is(v, -0);
  if (Array.isArray(v)) return v.every(jsonExact);
  if (typeof v !== 'object' || Object.getPrototypeOf(v) !== Object.prototype) return false;
  return Object.values(v as object).every(jsonExact);
}

interface Entry {
  readonly key: string;
  readonly documents: unknown[];
}

export class ParseCache {
  /**
   * @param dir where the entries are (`parseCacheDir()`)
   * @param maxBytes the largest entry read or written; a larger one is parsed every time
   */
  constructor(readonly dir: string, readonly maxBytes: number) {}

  keyOf(text: string): string {
    return crypto.createHash('sha256').update(`uyuni-cdk parse-cache ${FORMAT} yaml ${YAML_VERSION}\0`).update(text).digest('hex');
  }

  file(key: string): string {
    return path.join(this.dir, `${key}.json`);
  }

  /** The documents of `text`, when a well-formed entry for exactly this text holds them. */
  get(text: string): unknown[] | undefined {
    const key = this.keyOf(text);
    try {
      const file = this.file(key);
      if (fs.statSync(file).size > this.maxBytes) return undefined;
      const entry = JSON.parse(fs.readFileSync(file, 'utf8')) as Partial<Entry> | null;
      return entry?.key === key && Array.isArray(entry.documents) ? entry.documents : undefined;
    } catch {
      return undefined; // absent, unreadable or corrupt: parse
    }
  }

  /** Keeps the documents of `text`, when JSON holds them exactly; written whole or not at all. */
  put(text: string, documents: unknown[]): void {
    if (!jsonExact(documents)) return;
    const key = this.keyOf(text);
    const json = JSON.stringify({ key, documents } satisfies Entry);
    if (json.length > this.maxBytes) return;
    const file = this.file(key);
    const tmp = `${file}.${process.pid}.${crypto.randomBytes(4).toString('hex')}.tmp`;
    try {
      fs.mkdirSync(this.dir, { recursive: true, mode: 0o700 });
      fs.writeFileSync(tmp, json, { mode: 0o600 });
      fs.renameSync(tmp, file); // a concurrent command reads the old entry or the whole new one
    } catch {
      try {
        fs.rmSync(tmp, { force: true });
      } catch {
        // nothing was written
      }
      return; // read-only home, full disk: without the cache
    }
    this.prune();
  }

  /** Beyond MAX_ENTRIES (old plans' step files), the least recently written entries go. */
  private prune(): void {
    try {
      const names = fs.readdirSync(this.dir).filter((n) => n.endsWith('.json'));
      if (names.length <= MAX_ENTRIES) return;
      const aged = names.map((n) => ({ n, t: fs.statSync(path.join(this.dir, n)).mtimeMs })).sort((a, b) => a.t - b.t);
      for (const { n } of aged.slice(0, names.length - MAX_ENTRIES)) fs.rmSync(path.join(this.dir, n), { force: true });
    } catch {
      // another command pruned at the same time
    }
  }

  /** The documents of `text`: from the cache, else by `parse` (then kept). */
  documents(text: string, parse: (text: string) => unknown[]): unknown[] {
    const hit = this.get(text);
    if (hit) return hit;
    const documents = parse(text);
    this.put(text, documents);
    return documents;
  }
}
