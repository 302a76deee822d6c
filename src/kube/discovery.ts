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
  /**
   * A group version being asked for: the kinds of one group discovered together (a plan's
   * objects, read in parallel) wait for that one answer instead of each sending the same GET.
   */
  private readonly asking = new Map<string, Promise<unknown>>();

  async discover(apiVersion: string, kind: string): Promise<V1APIResource | undefined> {
    // a kind known already asks nothing and waits for nothing (a step's applies keep their order)
    const known = () => this.apiVersionResourceCache[apiVersion]?.resources.some((r) => r.kind === kind) === true;
    for (let pending = this.asking.get(apiVersion); pending && !known(); pending = this.asking.get(apiVersion)) await pending;
    if (known()) return this.discoverOnce(apiVersion, kind);
    const asked = this.discoverOnce(apiVersion, kind);
    const settled = asked.then(() => undefined, () => undefined);
    this.asking.set(apiVersion, settled);
    void settled.then(() => {
      if (this.asking.get(apiVersion) === settled) this.asking.delete(apiVersion);
    });
    return asked;
  }

  private async discoverOnce(apiVersion: string, kind: string): Promise<V1APIResource | undefined> {
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
