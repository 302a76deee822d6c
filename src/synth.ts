import * as fs from 'fs';
import * as path from 'path';
import { plansOf } from './config/load';
import type { UyuniConfig } from './config/schema';
import { PLANS } from './plans';

export const GENERATOR = `uyuni-cdk ${require('../package.json').version}`;

/**
 * Synthesizes every plan of a configuration into `staging` (which must be empty or absent)
 * and returns the top-level directories written there.
 */
export function synthesize(config: UyuniConfig, staging: string): string[] {
  fs.rmSync(staging, { recursive: true, force: true });
  fs.mkdirSync(staging, { recursive: true });
  return plansOf(config).flatMap((name) => PLANS[name](config).synth(staging, GENERATOR));
}

/**
 * Moves each staged directory into `dist`, replacing the one there. Each directory is copied
 * (or, with `move`, renamed: a staging directory of our own beside dist/) beside its target first
 * and then renamed over it, so a reader of dist/ sees the old plan or the new one, never a
 * half-written one. Directories of other plans are left as they are.
 */
export function publish(staging: string, dirs: readonly string[], dist: string, opts: { move?: boolean } = {}): void {
  fs.mkdirSync(dist, { recursive: true });
  const suffix = `${process.pid}-${Date.now()}`;
  for (const dir of dirs) {
    const target = path.join(dist, dir);
    const incoming = path.join(dist, `.${dir}.new-${suffix}`);
    const outgoing = path.join(dist, `.${dir}.old-${suffix}`);
    if (opts.move) moveOrCopy(path.join(staging, dir), incoming);
    else fs.cpSync(path.join(staging, dir), incoming, { recursive: true });
    const had = fs.existsSync(target);
    if (had) fs.renameSync(target, outgoing);
    fs.renameSync(incoming, target);
    if (had) fs.rmSync(outgoing, { recursive: true, force: true });
  }
}

/** A rename when staging and dist share a file system (the default), else a copy. */
function moveOrCopy(from: string, to: string): void {
  try {
    fs.renameSync(from, to);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EXDEV') throw e;
    fs.cpSync(from, to, { recursive: true });
  }
}
