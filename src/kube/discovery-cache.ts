/**
 * kubectl's discovery cache on disk, in kubectl's own layout, so that a command after the first
 * asks the server nothing about its kinds (and kubectl and uyuni-cdk fill it for each other):
 * `$KUBECACHEDIR/discovery/<host_port>/<group>/<version>/serverresources.json` (`~/.kube/cache`
 * without KUBECACHEDIR), each the APIResourceList the server sent, fresh for kubectl's six hours
 * by the file's mtime. A kind missing from a fresh file is asked for again (client-node does), and
 * the client forgets a file that a 404 contradicts (src/kube/cluster.ts).
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import type { V1APIResourceList } from '@kubernetes/client-node';

/** kubectl's (k8s.io/cli-runtime `ConfigFlags`): discovery read from disk is trusted this long. */
export const DISCOVERY_TTL_MS = 6 * 60 * 60 * 1000;

/**
 * The cache directory of one API server, as kubectl's `computeDiscoverCacheDir` names it: the
 * server URL without its scheme, every character but `\w`, `/`, `.`, `(` and `)` made `_`.
 */
export function discoveryCacheDir(server: string, env: NodeJS.ProcessEnv = process.env, home = os.homedir()): string {
  const root = env.KUBECACHEDIR || path.join(home, '.kube', 'cache');
  const host = server.replace('https://', '').replace('http://', '');
  return path.join(root, 'discovery', host.replace(/[^()\w/.]/g, '_'));
}

function isResourceList(x: unknown): x is V1APIResourceList {
  const l = x as Partial<V1APIResourceList> | null;
  return typeof l === 'object' && l !== null && Array.isArray(l.resources)
    && l.resources.every((r) => typeof r?.name === 'string' && typeof r?.kind === 'string');
}

export class DiscoveryCache {
  /** @param dir one server's directory (`discoveryCacheDir`) */
  constructor(readonly dir: string, readonly ttlMs = DISCOVERY_TTL_MS, private readonly now: () => number = Date.now) {}

  /** `v1` → `<dir>/v1/serverresources.json`, `apps/v1` → `<dir>/apps/v1/serverresources.json`. */
  file(apiVersion: string): string {
    return path.join(this.dir, ...apiVersion.split('/'), 'serverresources.json');
  }

  /** The resources of a group version, when a fresh, well-formed file holds them. */
  read(apiVersion: string): V1APIResourceList | undefined {
    try {
      const file = this.file(apiVersion);
      if (this.now() - fs.statSync(file).mtimeMs > this.ttlMs) return undefined;
      const list: unknown = JSON.parse(fs.readFileSync(file, 'utf8'));
      return isResourceList(list) ? list : undefined;
    } catch {
      return undefined; // absent or unreadable: ask the server
    }
  }

  /** Stores what the server answered; a cache that cannot be written only costs the next command a request. */
  write(apiVersion: string, list: V1APIResourceList): void {
    const file = this.file(apiVersion);
    try {
      fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o750 });
      const tmp = `${file}.${process.pid}.tmp`;
      fs.writeFileSync(tmp, JSON.stringify({ kind: 'APIResourceList', apiVersion: 'v1', ...list }), { mode: 0o660 });
      fs.renameSync(tmp, file);
    } catch {
      // read-only home, full disk: without the cache
    }
  }

  /** Drops a group version's file (the server contradicted it). */
  forget(apiVersion: string): void {
    fs.rmSync(this.file(apiVersion), { force: true });
  }
}
