// The one object store: every write gets the next resourceVersion and lands in a bounded
// history that watches replay from. Controllers and the watch hub subscribe to its events.
import { randomUUID } from 'node:crypto';
import type { VirtualClock } from './clock';
import { BUILTIN_TYPES, ResourceType, apiVersionOf, typeKey, typesFromCrd } from './resources';

export type EventType = 'ADDED' | 'MODIFIED' | 'DELETED';
export interface StoreEvent {
  readonly type: EventType;
  readonly rv: number;
  readonly rt: ResourceType;
  /** The object after the write (for DELETED: as it was, with the deletion's resourceVersion). */
  readonly object: any;
  /** The object before the write (MODIFIED/DELETED). */
  readonly old?: any;
}

export const clone = <T>(o: T): T => (o === undefined ? o : structuredClone(o));

export function deepEqual(a: any, b: any): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a).filter((k) => a[k] !== undefined);
  const kb = Object.keys(b).filter((k) => b[k] !== undefined);
  if (ka.length !== kb.length) return false;
  return ka.every((k) => deepEqual(a[k], b[k]));
}

/** Everything but metadata and status: a change here bumps metadata.generation. */
function specOf(o: any): any {
  const { metadata: _m, status: _s, ...rest } = o ?? {};
  return rest;
}

const objKey = (ns: string | undefined, name: string) => `${ns ?? ''}/${name}`;

/** An admission webhook stand-in: `deny` refuses with its message, `fail` answers 500 as a webhook that cannot be called. */
export interface WebhookRule {
  readonly name: string;
  /** Kinds it intercepts on create (e.g. 'Pod'). */
  readonly kinds: readonly string[];
  readonly action: 'deny' | 'fail';
  readonly message?: string;
}

export class Store {
  /** Admission webhooks (SimOptions.webhooks / setWebhooks). */
  webhooks: WebhookRule[] = [];

  private rv = 0;
  private readonly data = new Map<string, Map<string, any>>();
  private history: StoreEvent[] = [];
  /** Events with rv <= compactedRv are no longer in history. */
  compactedRv = 0;
  private readonly listeners = new Set<(e: StoreEvent) => void>();
  private typesCache?: ResourceType[];

  constructor(private readonly clock: VirtualClock, private readonly historyLimit = 20000) {}

  get resourceVersion(): number {
    return this.rv;
  }

  // --- the kinds served (built-in + CRD-registered) ---

  types(): ResourceType[] {
    if (!this.typesCache) {
      const crdType = BUILTIN_TYPES.find((x) => x.kind === 'CustomResourceDefinition')!;
      const fromCrds = [...(this.data.get(typeKey(crdType))?.values() ?? [])].flatMap(typesFromCrd);
      this.typesCache = [...BUILTIN_TYPES, ...fromCrds];
    }
    return this.typesCache;
  }

  typeByResource(group: string, version: string, plural: string): ResourceType | undefined {
    return this.types().find((x) => x.group === group && x.version === version && x.plural === plural);
  }

  typeByKind(apiVersion: string, kind: string): ResourceType | undefined {
    return this.types().find((x) => apiVersionOf(x) === apiVersion && x.kind === kind);
  }

  // --- reads (always copies) ---

  get(rt: ResourceType, ns: string | undefined, name: string): any | undefined {
    return clone(this.data.get(typeKey(rt))?.get(objKey(rt.namespaced ? ns : undefined, name)));
  }

  list(rt: ResourceType, ns?: string): any[] {
    const m = this.data.get(typeKey(rt));
    if (!m) return [];
    return [...m.entries()]
      .filter(([, o]) => !rt.namespaced || ns === undefined || o.metadata.namespace === ns)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([, o]) => clone(o));
  }

  /**
   * The objects as they were at resourceVersion `rv` (for continuing a paged list consistently),
   * rebuilt by undoing the later events; undefined when history no longer reaches back that far.
   */
  listAt(rt: ResourceType, ns: string | undefined, rv: number): any[] | undefined {
    const later = this.eventsSince(rv);
    if (!later) return undefined;
    const key = (o: any) => objKey(o.metadata.namespace, o.metadata.name);
    const state = new Map(this.list(rt, ns).map((o) => [key(o), o]));
    for (const e of later.reverse()) {
      if (typeKey(e.rt) !== typeKey(rt) || (rt.namespaced && ns !== undefined && e.object.metadata.namespace !== ns)) continue;
      if (e.type === 'ADDED') state.delete(key(e.object));
      else state.set(key(e.old), clone(e.old));
    }
    return [...state.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, o]) => o);
  }

  // --- writes ---

  /** Stores a new object: uid, creationTimestamp, generation 1, the next resourceVersion. */
  create(rt: ResourceType, obj: any): any {
    const o = clone(obj);
    o.apiVersion = apiVersionOf(rt);
    o.kind = rt.kind;
    const md = (o.metadata ??= {});
    if (!rt.namespaced) delete md.namespace;
    md.uid ??= randomUUID();
    md.creationTimestamp ??= this.clock.timestamp();
    md.generation = 1;
    delete md.deletionTimestamp;
    md.resourceVersion = String(++this.rv);
    this.bucket(rt).set(objKey(md.namespace, md.name), o);
    this.emit({ type: 'ADDED', rv: this.rv, rt, object: clone(o) });
    return clone(o);
  }

  /** Replaces a stored object; bumps generation when anything outside metadata/status changed. */
  update(rt: ResourceType, obj: any): any {
    const key = objKey(rt.namespaced ? obj.metadata.namespace : undefined, obj.metadata.name);
    const old = this.bucket(rt).get(key);
    if (!old) throw new Error(`update of a missing object ${key}`);
    const o = clone(obj);
    o.apiVersion = apiVersionOf(rt);
    o.kind = rt.kind;
    o.metadata.uid = old.metadata.uid;
    o.metadata.creationTimestamp = old.metadata.creationTimestamp;
    o.metadata.generation = (old.metadata.generation ?? 1) + (deepEqual(specOf(old), specOf(o)) ? 0 : 1);
    o.metadata.resourceVersion = String(++this.rv);
    this.bucket(rt).set(key, o);
    this.emit({ type: 'MODIFIED', rv: this.rv, rt, object: clone(o), old: clone(old) });
    return clone(o);
  }

  remove(rt: ResourceType, ns: string | undefined, name: string): any | undefined {
    const key = objKey(rt.namespaced ? ns : undefined, name);
    const old = this.bucket(rt).get(key);
    if (!old) return undefined;
    this.bucket(rt).delete(key);
    const o = clone(old);
    o.metadata.resourceVersion = String(++this.rv);
    this.emit({ type: 'DELETED', rv: this.rv, rt, object: clone(o), old: clone(old) });
    return o;
  }

  // --- history and subscribers ---

  /** The events after `rv`, or undefined when some of them were compacted away. */
  eventsSince(rv: number): StoreEvent[] | undefined {
    if (rv < this.compactedRv) return undefined;
    return this.history.filter((e) => e.rv > rv);
  }

  compact(): void {
    this.history = [];
    this.compactedRv = this.rv;
  }

  subscribe(fn: (e: StoreEvent) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  private bucket(rt: ResourceType): Map<string, any> {
    const k = typeKey(rt);
    let m = this.data.get(k);
    if (!m) this.data.set(k, (m = new Map()));
    return m;
  }

  private emit(e: StoreEvent): void {
    if (e.rt.kind === 'CustomResourceDefinition') this.typesCache = undefined;
    this.history.push(e);
    if (this.history.length > this.historyLimit) {
      const dropped = this.history.splice(0, this.history.length - this.historyLimit);
      this.compactedRv = dropped[dropped.length - 1].rv;
    }
    for (const fn of [...this.listeners]) fn(e);
  }
}
