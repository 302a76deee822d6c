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
  return ours().version;
}

/**
 * The directory of our package.json (the repository, or the installed package), where the files
 * it ships lie (uyuni.yaml, examples/, uyuni.schema.json); undefined where none is found.
 */
export function packageRoot(): string | undefined {
  return ours().root;
}

let cached: { version: string; root?: string } | undefined;

function ours(): { version: string; root?: string } {
  cached ??= find(__dirname);
  return cached;
}

function find(from: string): { version: string; root?: string } {
  for (let dir = from; ; dir = path.dirname(dir)) {
    try {
      const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string };
      // Another package.json on the way (a user's project around a global install) is not ours.
      if (manifest.name === PACKAGE_NAME && typeof manifest.version === 'string') return { version: manifest.version, root: dir };
    } catch {
      // none here: look further up
    }
    if (path.dirname(dir) === dir) return { version: 'unknown' };
  }
}
