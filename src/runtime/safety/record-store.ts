/**
 * The guarded records (`flow.migration`, `flow.upgrade`, `identity`: src/runtime/safety/record.ts) are
 * what keeps a finished flow's data steps from running twice and the server's identity from
 * changing unasked. They fail closed:
 *
 * - each value is written sealed: a format version (`v`), when it was written (`writtenAt`) and
 *   a checksum (`sum`, sha256 of the rest, canonical JSON);
 * - twice: in ConfigMap uyuni-cdk-history and, as a copy, in the annotation
 *   `uyuni-cdk.io/records` of the plan's namespace (the copy first, then the ConfigMap), so that
 *   one `kubectl delete configmap` (or an edit of one of them) does not remove the memory;
 * - read from both: a value missing from one is read from the other; two intact values that
 *   differ (a run ended between the two writes) give the one written last; a value that exists
 *   but cannot be read (not JSON, a wrong checksum, fields missing, a finished flow without its
 *   steps, an unknown version) is DAMAGED: every run it could protect refuses before any write,
 *   naming it and `uyuni-cdk repair-record`, and no write overwrites it.
 *
 * Values written before the seal existed (no `v`, no `sum`) are read when they are complete.
 */
import type { V1Namespace } from '@kubernetes/client-node';
import { hashSpec } from '../../plan/spec-hash';
import type { Plan } from '../../plan/types';
import type { Cluster } from '../../kube/cluster';
import { HISTORY_CONFIGMAP, readHistory, writeHistory } from './history';

/** The format version of a sealed record. */
export const RECORD_VERSION = 1;
/** The namespace annotation holding the copy: a JSON object, guarded key → sealed value. */
export const RECORDS_ANNOTATION = 'uyuni-cdk.io/records';
/** The field manager of the copy (not the plan's own: its apply of the Namespace leaves the annotation alone). */
export const RECORDS_FIELD_MANAGER = 'uyuni-cdk-records';
/** The keys of the guarded records. */
export const GUARDED_KEYS = ['flow.migration', 'flow.upgrade', 'identity'] as const;
export type GuardedKey = typeof GUARDED_KEYS[number];
/** Where `repair-record` keeps a damaged value it replaced: `damaged.<key>` in the ConfigMap. */
export const damagedKey = (key: GuardedKey) => `damaged.${key}`;

/** A damaged guarded record: where, and what is wrong with it. */
export interface Damage {
  readonly key: GuardedKey;
  /** `ConfigMap uyuni/uyuni-cdk-history key flow.migration` or `namespace uyuni annotation uyuni-cdk.io/records`. */
  readonly where: string;
  readonly why: string;
  /** The text as found (for repair-record to keep). */
  readonly text?: string;
}

/** One guarded record as read from both places. */
export type GuardedRead =
  | { readonly state: 'absent' }
  | { readonly state: 'ok'; readonly value: Record<string, unknown>; readonly text: string; readonly note?: string }
  | { readonly state: 'damaged'; readonly damage: readonly Damage[] };

/** Both places as read: the ConfigMap's entries and the namespace's copy (undefined: none). */
export interface RecordSources {
  readonly namespace: string;
  readonly history: Readonly<Record<string, string>>;
  readonly copy?: string;
}

const cmWhere = (ns: string, key: string) => `ConfigMap ${ns}/${HISTORY_CONFIGMAP} key ${key}`;
const copyWhere = (ns: string) => `namespace ${ns} annotation ${RECORDS_ANNOTATION}`;

/** The checksum of a record without its `sum`. */
function checksum(body: Record<string, unknown>): string {
  const { sum: _, ...rest } = body;
  return hashSpec(rest);
}

/** A record as written: with `v`, `writtenAt` and `sum`. */
export function seal(record: object, at = new Date().toISOString()): string {
  const body: Record<string, unknown> = { ...record, v: RECORD_VERSION, writtenAt: at };
  delete body.sum;
  return JSON.stringify({ ...body, sum: checksum(body) });
}

/** What is missing or wrong in a guarded record's fields (undefined: it is complete). */
export function incomplete(key: GuardedKey, v: Record<string, unknown>): string | undefined {
  const str = (f: string) => (typeof v[f] === 'string' && v[f] !== '' ? undefined : f);
  if (key === 'identity') {
    const missing = ['fqdn', 'product', 'imageGeneration', 'tlsMode', 'run'].map(str).filter(Boolean);
    return missing.length ? `field${missing.length > 1 ? 's' : ''} ${missing.join(', ')} missing or not text` : undefined;
  }
  const flow = key.slice('flow.'.length);
  if (v.flow !== flow) return `field flow is ${JSON.stringify(v.flow) ?? 'missing'}, not "${flow}"`;
  if (str('run')) return 'field run missing or not text';
  const steps = v.steps;
  if (!steps || typeof steps !== 'object' || Array.isArray(steps)) return 'field steps missing or not an object';
  for (const [name, s] of Object.entries(steps as Record<string, unknown>)) {
    const d = s as Record<string, unknown> | null;
    if (!d || typeof d !== 'object' || typeof d.hash !== 'string' || typeof d.run !== 'string') return `step ${name}: its hash or run is missing`;
  }
  if (v.finishedAt !== undefined && typeof v.finishedAt !== 'string') return 'field finishedAt is not text';
  // a flow is recorded when its first data step is done: one without any was emptied
  if (Object.keys(steps).length === 0) return `a ${v.finishedAt ? 'finished ' : ''}flow with no data step recorded (steps: {})`;
  return undefined;
}

/** One value as found in one place. */
function readOne(key: GuardedKey, text: string | undefined, where: string): GuardedRead {
  if (text === undefined) return { state: 'absent' };
  const damaged = (why: string): GuardedRead => ({ state: 'damaged', damage: [{ key, where, why, text }] });
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return damaged(text.trim() === '' ? 'empty' : `not JSON (${text.length} characters, cut short or edited?)`);
  }
  if (!v || typeof v !== 'object' || Array.isArray(v)) return damaged('not a JSON object');
  const o = v as Record<string, unknown>;
  if ('v' in o || 'sum' in o) {
    if (o.v !== RECORD_VERSION) return damaged(`format version ${JSON.stringify(o.v)}, not ${RECORD_VERSION} (written by another uyuni-cdk?)`);
    if (typeof o.sum !== 'string' || checksum(o) !== o.sum) return damaged('its checksum does not match its content (edited or cut)');
  }
  const wrong = incomplete(key, o);
  if (wrong) return damaged(`incomplete: ${wrong}`);
  return { state: 'ok', value: o, text };
}

/** The copy's entries, or why it cannot be read. */
function copyEntries(copy: string | undefined): { entries: Record<string, string> } | { why: string } {
  if (copy === undefined) return { entries: {} };
  try {
    const v = JSON.parse(copy) as unknown;
    if (!v || typeof v !== 'object' || Array.isArray(v)) return { why: 'not a JSON object' };
    if (Object.values(v).some((x) => typeof x !== 'string')) return { why: 'a value is not text' };
    return { entries: v as Record<string, string> };
  } catch {
    return { why: `not JSON (${copy.length} characters, cut short or edited?)` };
  }
}

/** One guarded record, from the ConfigMap and the copy (see the head of this file). */
export function readGuarded(s: RecordSources, key: GuardedKey): GuardedRead {
  const primary = readOne(key, s.history[key], cmWhere(s.namespace, key));
  const entries = copyEntries(s.copy);
  const copy: GuardedRead = 'why' in entries
    ? { state: 'damaged', damage: [{ key, where: copyWhere(s.namespace), why: entries.why, text: s.copy }] }
    : readOne(key, entries.entries[key], `${copyWhere(s.namespace)} (its ${key})`);
  const damage = [primary, copy].flatMap((r) => (r.state === 'damaged' ? r.damage : []));
  if (damage.length) return { state: 'damaged', damage };
  if (primary.state === 'absent' && copy.state === 'absent') return { state: 'absent' };
  if (primary.state === 'absent' && copy.state === 'ok') {
    return { ...copy, note: `${cmWhere(s.namespace, key)} is missing: read from its copy (${copyWhere(s.namespace)})` };
  }
  if (primary.state === 'ok' && copy.state === 'ok' && primary.value.sum !== copy.value.sum) {
    // the copy is written first: a run that ended between the two writes left the newer one there
    const later = String(copy.value.writtenAt ?? '') > String(primary.value.writtenAt ?? '') ? copy : primary;
    return { ...later, note: `${cmWhere(s.namespace, key)} and its copy differ: the one written last (${String(later.value.writtenAt ?? 'unknown')}) is used` };
  }
  return primary.state === 'ok' ? primary : copy;
}

/** One guarded record in each place, apart (repair-record looks for an intact one). */
export function readOneGuarded(s: RecordSources, key: GuardedKey): Array<{ where: string; read: GuardedRead }> {
  const entries = copyEntries(s.copy);
  return [
    { where: cmWhere(s.namespace, key), read: readOne(key, s.history[key], cmWhere(s.namespace, key)) },
    {
      where: copyWhere(s.namespace),
      read: 'why' in entries ? { state: 'damaged', damage: [{ key, where: copyWhere(s.namespace), why: entries.why, text: s.copy }] } : readOne(key, entries.entries[key], copyWhere(s.namespace)),
    },
  ];
}

/** The namespace's copy of the guarded records, as text (undefined: none, or no namespace). */
export async function readCopy(cluster: Cluster, namespace: string): Promise<string | undefined> {
  const ns = await cluster.get<V1Namespace>({ apiVersion: 'v1', kind: 'Namespace', name: namespace });
  return ns?.metadata?.annotations?.[RECORDS_ANNOTATION];
}

/** Both places, read together. */
export async function readSources(cluster: Cluster, namespace: string): Promise<RecordSources> {
  const [history, copy] = await Promise.all([readHistory(cluster, namespace), readCopy(cluster, namespace)]);
  return { namespace, history, ...(copy !== undefined ? { copy } : {}) };
}

/**
 * Writes guarded records (sealed here), the copy first, then the ConfigMap; `undefined` removes a
 * key. A key that is damaged now is never overwritten: it throws, naming it (`force`: repair-record,
 * which asked first and keeps the damaged text). `read`: both places as the caller just read them
 * (nothing written to them since: the run holds the namespace's lock), else they are read here.
 */
export async function writeGuarded(
  cluster: Cluster, plan: Plan, runId: string, records: Partial<Record<GuardedKey, object | undefined>>, extra: Readonly<Record<string, string | undefined>> = {}, force = false,
  read?: RecordSources,
): Promise<void> {
  const sources = read ?? await readSources(cluster, plan.namespace);
  if (!force) {
    for (const key of Object.keys(records) as GuardedKey[]) {
      const r = readGuarded(sources, key);
      if (r.state === 'damaged') throw new Error(`${damageText(r.damage)}: not overwritten; ${REPAIR_HINT(plan.name)}`);
    }
  }
  const at = new Date().toISOString();
  const sealed: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries(records)) sealed[k] = v === undefined ? undefined : seal(v, at);
  const entries = copyEntries(sources.copy);
  const copy: Record<string, string> = 'entries' in entries ? { ...entries.entries } : {};
  for (const [k, v] of Object.entries(sealed)) {
    if (v === undefined) delete copy[k];
    else copy[k] = v;
  }
  await cluster.apply({
    apiVersion: 'v1', kind: 'Namespace', metadata: { name: plan.namespace, annotations: { [RECORDS_ANNOTATION]: JSON.stringify(copy) } },
  }, false, RECORDS_FIELD_MANAGER);
  await writeHistory(cluster, plan, runId, { ...extra, ...sealed }, sources.history);
  // a key another field manager wrote last (`kubectl edit`) outlives an apply without it: removed by name
  const removed = Object.keys(sealed).filter((k) => sealed[k] === undefined);
  if (removed.length) {
    await cluster.mergePatch({ apiVersion: 'v1', kind: 'ConfigMap', name: HISTORY_CONFIGMAP, namespace: plan.namespace }, { data: Object.fromEntries(removed.map((k) => [k, null])) });
  }
}

/** `ConfigMap uyuni/uyuni-cdk-history key flow.migration: not JSON (…)`, each damage once. */
export function damageText(damage: readonly Damage[]): string {
  return damage.map((d) => `${d.where}: ${d.why}`).join('; ');
}

/** The repair command, for a plan directory named by its plan. */
export const REPAIR_HINT = (planName: string) =>
  `repair it with: uyuni-cdk repair-record dist/${planName} (it shows what it rebuilds from the cluster and asks first; docs/runtime.md, "Safety")`;
