/**
 * What `plan` compares and shows for an object that exists: the live object against the
 * server-side apply dry run, both without what the server or the runtime sets (status, uid,
 * resourceVersion, generation, managedFields, timestamps, the run label), as YAML with sorted
 * keys, and their unified diff. Secret values never appear, only whether each key changed.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import { stringify } from 'yaml';
import { LABELS } from '../plan/types';
import { unifiedDiff } from './diff';

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

/** The two sides as `plan` compares and prints them. */
export function comparableSides(live: KubernetesObject, planned: KubernetesObject): [string, string] {
  let l = userFields(live);
  let p = userFields(planned);
  if (live.kind === 'Secret') [l, p] = masked(l, p);
  return [stringify(sorted(l)), stringify(sorted(p))];
}

/** The unified YAML diff from the live object to what applying would make of it; '' when applying changes nothing. */
export function fieldDiff(live: KubernetesObject, planned: KubernetesObject): string {
  const [l, p] = comparableSides(live, planned);
  return unifiedDiff('live', 'planned', l, p);
}
