/**
 * Discovery: which resource serves a kind, through the object API (src/kube/object-api.ts) and
 * kubectl's cache on disk (src/kube/discovery-cache.ts), so a command after the first asks the
 * server nothing about its kinds. A kind read from disk that a 404 contradicts is asked again.
 */
import type { V1APIResource } from '@kubernetes/client-node';
import { ObjectApi } from './object-api';
import type { DiscoveryCache } from './discovery-cache';

export class DiscoveringApi extends ObjectApi {
  /** src/kube/discovery-cache.ts; unset: every process asks the server. */
  disk?: DiscoveryCache;
  /** Group versions read from disk that the server has not confirmed in this process. */
  private readonly fromDisk = new Set<string>();

  async discover(apiVersion: string, kind: string): Promise<V1APIResource | undefined> {
    const read = this.apiVersionResourceCache[apiVersion] ? undefined : this.disk?.read(apiVersion);
    if (read) {
      this.apiVersionResourceCache[apiVersion] = read;
      this.fromDisk.add(apiVersion);
    }
    const before = this.apiVersionResourceCache[apiVersion];
    const r = await this.resource(apiVersion, kind); // asks the server when the kind is not listed
    const answer = this.apiVersionResourceCache[apiVersion];
    if (answer && answer !== before) {
      this.fromDisk.delete(apiVersion);
      this.disk?.write(apiVersion, answer);
    }
    return r;
  }

  /** A 404 for a kind read from disk: forget the group version (true), so discovery asks the server. */
  forgetFromDisk(apiVersion: string): boolean {
    if (!this.fromDisk.delete(apiVersion)) return false;
    delete this.apiVersionResourceCache[apiVersion];
    this.disk?.forget(apiVersion);
    return true;
  }

  /** The resources discovery listed for a group/version, when it answered: what a missing kind's message names. */
  served(apiVersion: string): string[] | undefined {
    return this.apiVersionResourceCache[apiVersion]?.resources.map((r) => r.name).filter((n) => !n.includes('/'));
  }

  /** GET /apis/<group>: its preferred version (an ApplySet parent names its kinds by group only). */
  async preferredVersion(group: string): Promise<string | undefined> {
    const g = await this.client.request<{ preferredVersion?: { groupVersion?: string } }>('GET', `/apis/${group}`);
    return g?.preferredVersion?.groupVersion;
  }
}
