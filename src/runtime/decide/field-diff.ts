/**
 * What `plan` compares and shows for an object that exists: the live object against the
 * server-side apply dry run, both without what the server or the runtime sets (status, uid,
 * resourceVersion, generation, managedFields, timestamps, the run label), as YAML with sorted
 * keys, and their unified diff. Secret values never appear, only whether each key changed.
 * Our own bookkeeping labels and annotations (`uyuni-cdk.io/…`, the ApplySet's, Argo CD's sync
 * wave: see `isBookkeeping`) are compared but not shown: a count of those that change ends the
 * diff (after a migration they were 340 of its 863 lines).
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import { stringify } from 'yaml';
import { ANNOTATIONS, APPLYSET, LABELS } from '../../plan/types';
import { unifiedDiff } from './line-diff';

/** Prefixes of the keys the runtime and synth keep for themselves (src/plan/types.ts LABELS, ANNOTATIONS, APPLYSET). */
const BOOKKEEPING_PREFIXES = [LABELS.plan.slice(0, LABELS.plan.indexOf('/') + 1), APPLYSET.partOf.slice(0, APPLYSET.partOf.indexOf('/') + 1)];

/** A label or annotation of ours, not the user's: `uyuni-cdk.io/…`, `applyset.kubernetes.io/…`, the sync wave. */
export function isBookkeeping(key: string): boolean {
  return key === ANNOTATIONS.syncWave || BOOKKEEPING_PREFIXES.some((p) => key.startsWith(p));
}

/** What every Secret value is shown as; a changed one says so (on the planned side). */
export const SENSITIVE = '(sensitive value)';
export const SENSITIVE_CHANGED = '(sensitive value changed)';

const SECRET_FIELDS = ['data', 'stringData'] as const;

type Loose = Record<string, unknown>;

/** The object as a user wrote it: server-set metadata, status and the run label left out. */
function userFields(o: KubernetesObject): Loose {
  const { status: _status, metadata, ...rest } = o as KubernetesObject & { status?: unknown };
  const labels = { ...(metadata?.labels ?? {}) };
  delete labels[LABELS.run];
  const meta: Loose = { name: metadata?.name, namespace: metadata?.namespace };
  if (Object.keys(labels).length) meta.labels = labels;
  if (Object.keys(metadata?.annotations ?? {}).length) meta.annotations = metadata?.annotations;
  return { ...rest, metadata: meta };
}

/** Deep copy with every map's keys sorted: the same object always prints the same. */
function sorted(x: unknown): unknown {
  if (Array.isArray(x)) return x.map(sorted);
  if (x && typeof x === 'object') return Object.fromEntries(Object.keys(x).sort().map((k) => [k, sorted((x as Loose)[k])]));
  return x;
}

/** A Secret's values masked: unchanged ones alike on both sides, changed ones marked on the planned side. */
function masked(live: Loose, planned: Loose): [Loose, Loose] {
  const l = { ...live };
  const p = { ...planned };
  for (const f of SECRET_FIELDS) {
    const lv = (live[f] ?? {}) as Record<string, string>;
    const pv = (planned[f] ?? {}) as Record<string, string>;
    if (live[f] !== undefined) l[f] = Object.fromEntries(Object.keys(lv).map((k) => [k, SENSITIVE]));
    if (planned[f] !== undefined) p[f] = Object.fromEntries(Object.keys(pv).map((k) => [k, k in lv && lv[k] !== pv[k] ? SENSITIVE_CHANGED : SENSITIVE]));
  }
  return [l, p];
}

type Kept = Map<string, string>;

/**
 * A copy without the bookkeeping labels and annotations of every `metadata` in the object (its
 * own, a pod template's, a claim template's); those go into `kept` as `<path> labels|annotations <key>` → value.
 */
function withoutBookkeeping(x: unknown, kept: Kept, at = ''): unknown {
  if (Array.isArray(x)) return x.map((v, i) => withoutBookkeeping(v, kept, `${at}[${i}]`));
  if (!x || typeof x !== 'object') return x;
  const out: Loose = {};
  for (const [k, v] of Object.entries(x as Loose)) {
    if (k === 'metadata' && v && typeof v === 'object') {
      const meta: Loose = { ...(v as Loose) };
      for (const field of ['labels', 'annotations'] as const) {
        const m = meta[field] as Record<string, string> | undefined;
        if (!m) continue;
        const rest = Object.fromEntries(Object.entries(m).filter(([key, value]) => !(isBookkeeping(key) && kept.set(`${at} ${field} ${key}`, value))));
        if (Object.keys(rest).length) meta[field] = rest;
        else delete meta[field];
      }
      out[k] = withoutBookkeeping(meta, kept, `${at}.metadata`);
    } else {
      out[k] = withoutBookkeeping(v, kept, `${at}.${k}`);
    }
  }
  return out;
}

/** How many bookkeeping labels and annotations differ between the two sides (added, removed or changed). */
function changedBookkeeping(l: Kept, p: Kept): { labels: number; annotations: number } {
  const n = { labels: 0, annotations: 0 };
  for (const k of new Set([...l.keys(), ...p.keys()])) {
    if (l.get(k) !== p.get(k)) n[k.split(' ')[1] as 'labels' | 'annotations']++;
  }
  return n;
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** `(+ 4 bookkeeping labels)`, `(+ 1 bookkeeping label, 2 annotations)`; '' when none changes. */
export function bookkeepingNote(n: { labels: number; annotations: number }): string {
  const parts = [n.labels ? plural(n.labels, 'bookkeeping label') : '', n.annotations ? plural(n.annotations, n.labels ? 'annotation' : 'bookkeeping annotation') : ''].filter(Boolean);
  return parts.length ? `(+ ${parts.join(' and ')})` : '';
}

export interface ComparedSides {
  /** The live object as YAML (without bookkeeping). */
  readonly live: string;
  /** What applying would make of it. */
  readonly planned: string;
  /** Bookkeeping labels and annotations that differ between the two. */
  readonly bookkeeping: { readonly labels: number; readonly annotations: number };
}

/** The two sides as `plan` compares and prints them. */
export function comparableSides(live: KubernetesObject, planned: KubernetesObject): ComparedSides {
  let l = userFields(live);
  let p = userFields(planned);
  if (live.kind === 'Secret') [l, p] = masked(l, p);
  const kl: Kept = new Map();
  const kp: Kept = new Map();
  l = withoutBookkeeping(l, kl) as Loose;
  p = withoutBookkeeping(p, kp) as Loose;
  return { live: stringify(sorted(l)), planned: stringify(sorted(p)), bookkeeping: changedBookkeeping(kl, kp) };
}

/**
 * The unified YAML diff from the live object to what applying would make of it, ended by the
 * count of bookkeeping labels and annotations that change; '' when applying changes nothing.
 */
export function fieldDiff(live: KubernetesObject, planned: KubernetesObject): string {
  const c = comparableSides(live, planned);
  const note = bookkeepingNote(c.bookkeeping);
  return unifiedDiff('live', 'planned', c.live, c.planned) + (note ? `${note}\n` : '');
}

/**
 * How two states of an object differ, beyond what the server sets and the run label: `changed`
 * (what `plan` shows as an `update`), `relabel` (only our bookkeeping labels and annotations: a
 * real write, not drift), or `none`.
 */
export function changeOf(before: KubernetesObject, after: KubernetesObject): 'changed' | 'relabel' | 'none' {
  const c = comparableSides(before, after);
  if (c.live !== c.planned) return 'changed';
  return c.bookkeeping.labels + c.bookkeeping.annotations > 0 ? 'relabel' : 'none';
}
