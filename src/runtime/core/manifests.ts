/** The objects of a plan's step files: loading, references, hashing, `--namespace`, apply stamps. */
import * as path from 'path';
import type { KubernetesObject, V1ObjectMeta } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { MAX_STEP_FILE_BYTES, PLAN_INDEX, PlanError, readInside } from '../../plan/reader';
import { hashSpec } from '../../plan/spec-hash';
import { ANNOTATIONS, APPLYSET, LABELS, ObjectRef, Plan, Step } from '../../plan/types';
import { isMember } from './applyset';
import { BadInput } from '../../kube/api-errors';

/** An object of a step file: every document names its apiVersion, kind and metadata.name. */
export type Manifest = KubernetesObject & {
  apiVersion: string;
  kind: string;
  metadata: V1ObjectMeta & { name: string };
};

function isManifest(o: unknown): o is Manifest {
  const m = o as Partial<Manifest> | null;
  const nonEmpty = (v: unknown) => typeof v === 'string' && v !== '';
  return typeof o === 'object' && o !== null && !Array.isArray(o) && nonEmpty(m?.apiVersion) && nonEmpty(m?.kind)
    && typeof m?.metadata === 'object' && m.metadata !== null && nonEmpty(m.metadata.name)
    && (m.metadata.namespace === undefined || nonEmpty(m.metadata.namespace));
}

const NOT_MANIFEST = 'every document needs apiVersion, kind and metadata.name (strings)';

/** The objects of a step file's YAML, in file order (empty documents left out). */
function parseObjects(file: string, text: string): Manifest[] {
  const objects: Manifest[] = [];
  for (const doc of parseAllDocuments(text)) {
    if (doc.errors.length) throw new BadInput(`${file}: ${doc.errors[0].message}`);
    let o: unknown;
    try {
      o = doc.toJS();
    } catch (e) {
      throw new BadInput(`${file}: ${(e as Error).message}`);
    }
    if (o == null) continue;
    if (!isManifest(o)) throw new BadInput(`${file}: ${NOT_MANIFEST}`);
    objects.push(o);
  }
  return objects;
}

/**
 * The text of a step's manifest file: read only from a regular file inside the plan directory,
 * at most 16 MiB (src/plan/reader.ts `readInside`).
 */
export function readStepFile(planDir: string, step: Step): string {
  try {
    return readInside(planDir, step.file, MAX_STEP_FILE_BYTES);
  } catch (e) {
    if (e instanceof PlanError) throw new BadInput(e.message);
    throw e;
  }
}

/** The objects of a step's manifest file, in file order: read (`readStepFile`), then parsed. */
export function loadStepObjects(planDir: string, step: Step, text = readStepFile(planDir, step)): Manifest[] {
  return parseObjects(path.join(planDir, step.file), text);
}

const showRef = (r: ObjectRef) => `${r.kind}/${r.name}${r.namespace ? ` (${r.namespace})` : ''}`;

/**
 * The step file holds exactly what the plan index lists for the step (kind, apiVersion, name,
 * namespace): nothing is applied that a reviewer of the index did not see.
 */
export function checkStepObjects(planDir: string, step: Step, index: number, objects: readonly Manifest[]): void {
  const at = `steps[${index}] (${step.name}).objects`;
  const listed = step.objects.map((r, i) => ({ r, i, seen: false }));
  for (const o of objects) {
    const r = refOf(o);
    const match = listed.find((l) => !l.seen && sameRef(l.r, r));
    if (!match) throw new BadInput(`${path.join(planDir, step.file)} holds ${showRef(r)} (${r.apiVersion}), which ${at} does not list`);
    match.seen = true;
  }
  const missing = listed.find((l) => !l.seen);
  if (missing) throw new BadInput(`${path.join(planDir, PLAN_INDEX)}: ${at}[${missing.i}] ${showRef(missing.r)} is not in ${step.file}`);
}

export function sameRef(a: ObjectRef, b: ObjectRef): boolean {
  return a.apiVersion === b.apiVersion && a.kind === b.kind && a.name === b.name && (a.namespace ?? '') === (b.namespace ?? '');
}

/** The reference of an object as the API or a step file gives it. */
export function refOf(obj: KubernetesObject): ObjectRef {
  return { apiVersion: obj.apiVersion ?? '', kind: obj.kind ?? '', name: obj.metadata?.name ?? '', namespace: obj.metadata?.namespace };
}

/** Whether an object (as the API answered it) is the one `ref` names. */
export function isObject(obj: KubernetesObject | undefined, ref: ObjectRef): boolean {
  return obj?.kind === ref.kind && obj.metadata?.name === ref.name && (obj.metadata.namespace ?? '') === (ref.namespace ?? '');
}

/** A Job's spec hash: synth's annotation, or (for hand-written plans) the hash of its spec (src/plan/spec-hash.ts). */
export function specHash(job: Manifest): string {
  return job.metadata.annotations?.[ANNOTATIONS.specHash] ?? hashSpec((job as { spec?: unknown }).spec ?? {});
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
  // The commands in messages (`kubectl -n uyuni create secret …`) name the plan's namespace too.
  const hint = <T extends { message?: string }>(x: T): T => (x.message === undefined ? x : { ...x, message: relocateHint(x.message, from, ns) });
  return {
    ...plan,
    namespace: ns,
    steps: plan.steps.map((s) => ({
      ...s,
      objects: s.objects.map(mapRef),
      waits: s.waits.map((w) => ({ ...w, object: mapRef(w.object) })),
      actions: s.actions.map((a) => ({ ...a, object: mapRef(a.object) })),
      requires: s.requires.map((r) => hint({ ...r, namespace: mapNs(r.namespace)! })),
      gates: s.gates.map(hint),
      factsFrom: s.factsFrom ? mapRef(s.factsFrom) : undefined,
    })),
  };
}

/** `-n <from>`, `--namespace <from>` and `--namespace=<from>` in a hint's commands, moved to `to`. */
export function relocateHint(text: string, from: string, to: string): string {
  const esc = from.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return text.replace(new RegExp(`(^|\\s)(-n |--namespace[= ])${esc}(?=[\\s;&|)'"]|$)`, 'g'), `$1$2${to}`);
}

export function relocateObject(obj: Manifest, from: string, to: string | undefined): Manifest {
  if (!to || to === from) return obj;
  const o = structuredClone(obj);
  if (o.metadata.namespace === from) o.metadata.namespace = to;
  if (o.kind === 'Namespace' && o.metadata.name === from) o.metadata.name = to;
  return o;
}

/**
 * What the runtime adds at apply time: the run label, a spec hash on Jobs that lack one, and on
 * members of the plan's ApplySet (src/runtime/core/applyset.ts) its label, as kubectl adds it.
 */
export function stampForApply(obj: Manifest, runId: string, applySetId?: string): Manifest {
  const o = structuredClone(obj);
  o.metadata.labels = { ...(o.metadata.labels ?? {}), [LABELS.run]: runId, ...(applySetId && isMember(o) ? { [APPLYSET.partOf]: applySetId } : {}) };
  if (o.kind === 'Job' && !o.metadata.annotations?.[ANNOTATIONS.specHash]) {
    o.metadata.annotations = { ...(o.metadata.annotations ?? {}), [ANNOTATIONS.specHash]: specHash(o) };
  }
  return o;
}

/** The plan's selector as a label selector string. */
export function selectorString(sel: Readonly<Record<string, string>>): string {
  return Object.entries(sel).map(([k, v]) => `${k}=${v}`).join(',');
}
