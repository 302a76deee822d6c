import { createHash } from 'crypto';
import * as fs from 'fs';
import * as path from 'path';
import { parseAllDocuments } from 'yaml';
import { ANNOTATIONS, LABELS, ObjectRef, Plan, Step } from '../plan/types';
import { BadInput } from './errors';

/** The objects of a step's manifest file, in file order. */
export function loadStepObjects(planDir: string, step: Step): any[] {
  const file = path.join(planDir, step.file);
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    throw new BadInput(`${file}: ${(e as Error).message}`);
  }
  const objects: any[] = [];
  for (const doc of parseAllDocuments(text)) {
    if (doc.errors.length) throw new BadInput(`${file}: ${doc.errors[0].message}`);
    const o = doc.toJS();
    if (o == null) continue;
    if (typeof o !== 'object' || !o.apiVersion || !o.kind || !o.metadata?.name) {
      throw new BadInput(`${file}: every document needs apiVersion, kind and metadata.name`);
    }
    objects.push(o);
  }
  return objects;
}

export function sameRef(a: ObjectRef, b: ObjectRef): boolean {
  return a.apiVersion === b.apiVersion && a.kind === b.kind && a.name === b.name && (a.namespace ?? '') === (b.namespace ?? '');
}

export function refOf(obj: any): ObjectRef {
  return { apiVersion: obj.apiVersion, kind: obj.kind, name: obj.metadata.name, namespace: obj.metadata.namespace };
}

/** Stable JSON (sorted keys) for hashing. */
function stable(x: unknown): string {
  if (Array.isArray(x)) return `[${x.map(stable).join(',')}]`;
  if (x && typeof x === 'object') {
    return `{${Object.keys(x as object).sort().map((k) => `${JSON.stringify(k)}:${stable((x as any)[k])}`).join(',')}}`;
  }
  return JSON.stringify(x);
}

/** A Job's spec hash: synth's annotation, or (for hand-written plans) sha256 of its spec. */
export function specHash(job: any): string {
  return job.metadata?.annotations?.[ANNOTATIONS.specHash] ?? createHash('sha256').update(stable(job.spec ?? {})).digest('hex');
}

/**
 * `--namespace` override: the plan's namespace is replaced everywhere it names the plan's home
 * (objects' namespaces, the Namespace object itself, refs of waits, actions, requirements).
 */
export function relocatePlan(plan: Plan, ns: string | undefined): Plan {
  if (!ns || ns === plan.namespace) return plan;
  const from = plan.namespace;
  const mapNs = (n: string | undefined) => (n === from ? ns : n);
  const mapRef = (r: ObjectRef): ObjectRef => ({
    ...r,
    namespace: mapNs(r.namespace),
    name: r.kind === 'Namespace' && r.name === from ? ns : r.name,
  });
  return {
    ...plan,
    namespace: ns,
    steps: plan.steps.map((s) => ({
      ...s,
      objects: s.objects.map(mapRef),
      waits: s.waits.map((w) => ({ ...w, object: mapRef(w.object) })),
      actions: s.actions.map((a) => ({ ...a, object: mapRef(a.object) })),
      requires: s.requires.map((r) => ({ ...r, namespace: mapNs(r.namespace)! })),
      factsFrom: s.factsFrom ? mapRef(s.factsFrom) : undefined,
    })),
  };
}

export function relocateObject(obj: any, from: string, to: string | undefined): any {
  if (!to || to === from) return obj;
  const o = structuredClone(obj);
  if (o.metadata.namespace === from) o.metadata.namespace = to;
  if (o.kind === 'Namespace' && o.metadata.name === from) o.metadata.name = to;
  return o;
}

/** What the runtime adds at apply time: the run label, and a spec hash on Jobs that lack one. */
export function stampForApply(obj: any, runId: string): any {
  const o = structuredClone(obj);
  o.metadata.labels = { ...(o.metadata.labels ?? {}), [LABELS.run]: runId };
  if (o.kind === 'Job' && !o.metadata.annotations?.[ANNOTATIONS.specHash]) {
    o.metadata.annotations = { ...(o.metadata.annotations ?? {}), [ANNOTATIONS.specHash]: specHash(o) };
  }
  return o;
}

/** The plan's selector as a label selector string. */
export function selectorString(sel: Readonly<Record<string, string>>): string {
  return Object.entries(sel).map(([k, v]) => `${k}=${v}`).join(',');
}
