import type { V1LabelSelector } from '@kubernetes/client-node';

/**
 * A workload's label selector, as the API server reads it: matchLabels and matchExpressions
 * all hold. An empty selector matches everything (the API forbids it on Deployments).
 */
export function selectorMatches(selector: V1LabelSelector | undefined, labels: Record<string, string> | undefined): boolean {
  const l = labels ?? {};
  for (const [k, v] of Object.entries(selector?.matchLabels ?? {})) if (l[k] !== v) return false;
  for (const e of selector?.matchExpressions ?? []) {
    const has = Object.prototype.hasOwnProperty.call(l, e.key);
    const values = e.values ?? [];
    const ok = e.operator === 'In' ? has && values.includes(l[e.key])
      : e.operator === 'NotIn' ? !has || !values.includes(l[e.key])
        : e.operator === 'Exists' ? has
          : e.operator === 'DoesNotExist' ? !has
            : false;
    if (!ok) return false;
  }
  return true;
}

/** The same selector as a `labelSelector` query string, for a list or watch. */
export function selectorString(selector: V1LabelSelector): string {
  const parts = Object.entries(selector.matchLabels ?? {}).map(([k, v]) => `${k}=${v}`);
  for (const e of selector.matchExpressions ?? []) {
    const values = (e.values ?? []).join(',');
    if (e.operator === 'In') parts.push(`${e.key} in (${values})`);
    else if (e.operator === 'NotIn') parts.push(`${e.key} notin (${values})`);
    else if (e.operator === 'Exists') parts.push(e.key);
    else if (e.operator === 'DoesNotExist') parts.push(`!${e.key}`);
  }
  return parts.join(',');
}
