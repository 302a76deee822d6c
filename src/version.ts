import * as fs from 'fs';
import * as path from 'path';

/** Our package's name, as package.json and npm spell it. */
export const PACKAGE_NAME = 'uyuni-cdk';

/**
 * The version in our package.json, found upwards from this file: it is one level up in the
 * repository (src/), two in the library's build (lib/src/). Read once, on first use; `unknown`
 * where no package.json of ours is found (a single executable carries none).
 */
export function packageVersion(): string {
  if (cached === undefined) cached = findVersion(__dirname);
  return cached;
}

let cached: string | undefined;

function findVersion(from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    try {
      const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string };
      // Another package.json on the way (a user's project around a global install) is not ours.
      if (manifest.name === PACKAGE_NAME && typeof manifest.version === 'string') return manifest.version;
    } catch {
      // none here: look further up
    }
    if (path.dirname(dir) === dir) return 'unknown';
  }
}
