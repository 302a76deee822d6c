/**
 * The reconcile loop's bookkeeping: the pods the API binds to the node (desired), what the agent
 * runs for each (managed: its units, why it cannot run, the status last sent) and which pod each
 * unit name belongs to. Pure state: it says which pods need work, it does none.
 */
import { ApiPod, podKeyOf } from './api-pod';
import type { Blocked } from './pod-status';
import { statusIsCurrent } from './pod-status';
import { podIsTerminating } from '../systemd/pod';
import { podUnitNames, RenderedUnit } from '../systemd/render';

export interface Managed {
  readonly key: string;
  readonly uid: string;
  pod: ApiPod;
  /** The units written for it (none while blocked). */
  units: RenderedUnit[];
  blocked?: Blocked;
  /** The status last patched, until the watch shows it. */
  sent?: Record<string, unknown>;
}

export class PodBook {
  /** The pods the API binds to the node, by key. */
  readonly pods = new Map<string, ApiPod>();
  /** What the agent runs (or refuses to run) for a pod, by key. */
  readonly managed = new Map<string, Managed>();
  private readonly unitOwner = new Map<string, string>();
  /** The unit names each pod maps to (none when it cannot be rendered). */
  private readonly names = new Map<string, readonly string[]>();

  /** A complete list: pods not in it are gone. Returns the keys that need work. */
  listed(pods: readonly ApiPod[]): string[] {
    const keys = new Set(pods.map(podKeyOf));
    const work: string[] = [];
    for (const key of new Set([...this.pods.keys(), ...this.managed.keys()])) if (!keys.has(key)) work.push(this.forget(key));
    for (const pod of pods) work.push(...this.observe(pod));
    return work;
  }

  /** One watch event. Returns the keys that need work. */
  changed(type: 'ADDED' | 'MODIFIED' | 'DELETED', pod: ApiPod): string[] {
    if (type !== 'DELETED') return this.observe(pod);
    const known = this.pods.get(podKeyOf(pod));
    return !known || known.metadata?.uid === pod.metadata?.uid ? [this.forget(podKeyOf(pod))] : [];
  }

  /** The pod whose unit `unit` is. */
  ownerOf(unit: string): string | undefined {
    return this.unitOwner.get(unit);
  }

  /** `key`'s units from now on. */
  claim(key: string, units: readonly RenderedUnit[]): void {
    for (const u of units) this.unitOwner.set(u.name, key);
  }

  /** The pod's units are gone and the agent no longer runs anything for it. */
  release(m: Managed): void {
    for (const u of m.units) this.unitOwner.delete(u.name);
    this.managed.delete(m.key);
  }

  /**
   * Which pod a unit name belongs to when several map to it (`team/web-db` and `team-web/db`), the
   * same after a restart: the pod that runs it now (nothing running is killed for a name), else
   * the pod the agent recorded as its owner (`recordedUid`), else the older pod (creation time,
   * then uid). Returns the winner's key and why it wins.
   */
  nameOwner(unit: string, recordedUid?: string): { key: string; why: string } | undefined {
    const running = this.unitOwner.get(unit);
    if (running) return { key: running, why: 'which runs it' };
    const candidates = [...this.pods.entries()].filter(([k, p]) => !podIsTerminating(p) && (this.names.get(k) ?? []).includes(unit));
    const recorded = recordedUid && candidates.find(([, p]) => p.metadata?.uid === recordedUid);
    if (recorded) return { key: recorded[0], why: 'for which the agent wrote it' };
    const age = (p: ApiPod): string => String((p.metadata as { creationTimestamp?: string } | undefined)?.creationTimestamp ?? '');
    const oldest = candidates.sort(([, a], [, b]) => {
      const ta = Date.parse(age(a)) || Infinity;
      const tb = Date.parse(age(b)) || Infinity;
      return ta !== tb ? ta - tb : String(a.metadata?.uid ?? '').localeCompare(String(b.metadata?.uid ?? ''));
    })[0];
    return oldest ? { key: oldest[0], why: 'which is older' } : undefined;
  }

  private observe(pod: ApiPod): string[] {
    const key = podKeyOf(pod);
    this.pods.set(key, pod);
    let names: string[] = [];
    try {
      names = podUnitNames(pod);
    } catch {
      // An unrenderable pod claims no name; the renderer says why when it is reconciled.
    }
    this.names.set(key, names);
    const m = this.managed.get(key);
    // Our own status patches come back as MODIFIED: only the status changed, nothing to do.
    if (m && m.uid === pod.metadata?.uid && !podIsTerminating(pod) && !m.blocked && sameSpec(m.pod, pod)) {
      m.pod = pod;
      if (m.sent && statusIsCurrent(pod.status, m.sent)) m.sent = undefined;
      return [];
    }
    return [key];
  }

  private forget(key: string): string {
    this.pods.delete(key);
    this.names.delete(key);
    return key;
  }
}

/** The parts of a pod its units are rendered from (a status change leaves them as they are). */
function sameSpec(a: ApiPod, b: ApiPod): boolean {
  return JSON.stringify(a.spec) === JSON.stringify(b.spec) && (a.metadata?.deletionTimestamp ?? null) === (b.metadata?.deletionTimestamp ?? null);
}
