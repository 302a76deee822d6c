// Label and field selectors as the API server parses them (the `?labelSelector=` and
// `?fieldSelector=` query syntax). A malformed selector or an unsupported field is a 400.
import type { ResourceType } from './resources';

export class SelectorError extends Error {}

type Requirement = (labels: Record<string, string>) => boolean;

/** Parses `a=b,c!=d,e in (x,y),f notin (z),g,!h`. */
export function parseLabelSelector(s: string | null | undefined): (labels: Record<string, string> | undefined) => boolean {
  const reqs: Requirement[] = [];
  const text = (s ?? '').trim();
  // split on commas outside parentheses
  const parts: string[] = [];
  let depth = 0;
  let cur = '';
  for (const ch of text) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (ch === ',' && depth === 0) {
      parts.push(cur);
      cur = '';
    } else cur += ch;
  }
  if (cur.trim() || parts.length) parts.push(cur);
  const key = /^[A-Za-z0-9]([-A-Za-z0-9_./]*[A-Za-z0-9])?$/;
  for (const raw of parts) {
    const p = raw.trim();
    let m: RegExpMatchArray | null;
    if ((m = p.match(/^(\S+?)\s+(in|notin)\s+\(([^)]*)\)$/))) {
      const [, k, op, vs] = m;
      if (!key.test(k)) throw new SelectorError(`unable to parse requirement: invalid label key "${k}"`);
      const values = new Set(vs.split(',').map((v) => v.trim()));
      reqs.push(op === 'in' ? (l) => k in l && values.has(l[k]) : (l) => !(k in l) || !values.has(l[k]));
    } else if ((m = p.match(/^([^=!\s]+)\s*(==|=|!=)\s*(\S*)$/))) {
      const [, k, op, v] = m;
      if (!key.test(k)) throw new SelectorError(`unable to parse requirement: invalid label key "${k}"`);
      reqs.push(op === '!=' ? (l) => l[k] !== v : (l) => l[k] === v);
    } else if ((m = p.match(/^!\s*(\S+)$/))) {
      const k = m[1];
      reqs.push((l) => !(k in l));
    } else if (key.test(p)) {
      reqs.push((l) => p in l);
    } else {
      throw new SelectorError(`unable to parse requirement: found '${p}', expected: identifier`);
    }
  }
  return (labels) => reqs.every((r) => r(labels ?? {}));
}

/** Fields each kind can be selected on, as the API server allows them. */
function allowedFields(rt: ResourceType): string[] {
  const common = ['metadata.name', 'metadata.namespace'];
  switch (rt.kind) {
    case 'Pod':
      return [...common, 'spec.nodeName', 'spec.restartPolicy', 'spec.schedulerName', 'spec.serviceAccountName', 'status.phase', 'status.podIP', 'status.nominatedNodeName'];
    case 'Event':
      return [...common, 'involvedObject.kind', 'involvedObject.namespace', 'involvedObject.name', 'involvedObject.uid', 'involvedObject.apiVersion', 'involvedObject.resourceVersion', 'involvedObject.fieldPath', 'reason', 'reportingComponent', 'source', 'type'];
    case 'Secret':
      return [...common, 'type'];
    case 'Namespace':
      return [...common, 'status.phase'];
    case 'Job':
      return [...common, 'status.successful'];
    case 'Node':
      return [...common, 'spec.unschedulable'];
    default:
      return common;
  }
}

function fieldValue(o: any, path: string): string {
  if (path === 'status.successful') return String(o.status?.succeeded ?? 0);
  let v: any = o;
  for (const p of path.split('.')) v = v?.[p];
  return v === undefined || v === null ? '' : String(v);
}

/** Parses `metadata.name=x,spec.nodeName!=y` for the given kind. */
export function parseFieldSelector(s: string | null | undefined, rt: ResourceType): (o: any) => boolean {
  const text = (s ?? '').trim();
  if (!text) return () => true;
  const allowed = allowedFields(rt);
  const reqs = text.split(',').map((raw) => {
    const m = raw.trim().match(/^([^=!]+?)\s*(==|=|!=)\s*(.*)$/);
    if (!m) throw new SelectorError(`invalid selector: '${raw}'; can't understand '${raw}'`);
    const [, field, op, value] = m;
    if (!allowed.includes(field)) throw new SelectorError(`"${field}" is not a known field selector: only "${allowed.join('", "')}"`);
    return (o: any) => (fieldValue(o, field) === value) !== (op === '!=');
  });
  return (o) => reqs.every((r) => r(o));
}
