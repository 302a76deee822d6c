/**
 * The part of a Kubernetes Pod the unit renderer reads, as plain JSON (what the API returns and
 * what a pod manifest holds). Structural, so neither the synth side nor the agent needs a
 * Kubernetes client library to use the renderer.
 */

export interface EnvVarLike {
  readonly name: string;
  readonly value?: string;
  readonly valueFrom?: unknown;
}

export interface ContainerLike {
  readonly name: string;
  readonly image?: string;
  readonly command?: readonly string[];
  readonly args?: readonly string[];
  readonly env?: readonly EnvVarLike[];
  readonly securityContext?: { readonly windowsOptions?: { readonly runAsUserName?: string } };
}

export interface PodLike {
  readonly metadata?: {
    readonly name?: string;
    readonly namespace?: string;
    readonly deletionTimestamp?: string | Date | null;
  };
  readonly spec?: {
    readonly nodeName?: string;
    readonly restartPolicy?: string;
    readonly terminationGracePeriodSeconds?: number | null;
    readonly securityContext?: { readonly windowsOptions?: { readonly runAsUserName?: string } };
    readonly containers?: readonly ContainerLike[];
    readonly initContainers?: readonly ContainerLike[];
  };
}

/** `namespace/name` of a pod, for messages and collision reports. */
export function podKey(pod: PodLike): string {
  const meta = (pod as PodLike | null)?.metadata;
  return `${(typeof meta?.namespace === 'string' && meta.namespace) || 'default'}/${typeof meta?.name === 'string' ? meta.name : '?'}`;
}

/** A pod is terminating once the API has set its deletion timestamp. */
export function podIsTerminating(pod: PodLike): boolean {
  const meta = (pod as PodLike | null)?.metadata;
  return meta?.deletionTimestamp !== undefined && meta?.deletionTimestamp !== null;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function describe(v: unknown): string {
  if (v === undefined) return 'missing';
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'string') return `the string ${JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v)}`;
  return typeof v === 'object' ? 'an object' : `a ${typeof v}`;
}

function stringList(v: unknown, field: string, out: string[]): void {
  if (v === undefined || v === null) return;
  if (!Array.isArray(v)) {
    out.push(`${field} must be a list of strings, not ${describe(v)}`);
    return;
  }
  const bad = v.findIndex((x) => typeof x !== 'string');
  if (bad >= 0) out.push(`${field}[${bad}] must be a string, not ${describe(v[bad])}`);
}

function containerProblems(c: unknown, field: string, out: string[]): void {
  if (!isObject(c)) {
    out.push(`${field} must be an object (a container), not ${describe(c)}`);
    return;
  }
  if (typeof c.name !== 'string' || c.name === '') out.push(`${field}.name must be a non-empty string, not ${describe(c.name)}`);
  if (c.image !== undefined && typeof c.image !== 'string') out.push(`${field}.image must be a string, not ${describe(c.image)}`);
  stringList(c.command, `${field}.command`, out);
  stringList(c.args, `${field}.args`, out);
  if (c.env !== undefined && c.env !== null) {
    if (!Array.isArray(c.env)) out.push(`${field}.env must be a list of {name, value}, not ${describe(c.env)}`);
    else {
      c.env.forEach((e: unknown, i) => {
        if (!isObject(e)) out.push(`${field}.env[${i}] must be an object {name, value}, not ${describe(e)}`);
        else if (typeof e.name !== 'string' || e.name === '') out.push(`${field}.env[${i}].name must be a non-empty string, not ${describe(e.name)}`);
        else if (e.value !== undefined && e.value !== null && typeof e.value !== 'string') out.push(`${field}.env[${i}] (${e.name}).value must be a string, not ${describe(e.value)}`);
      });
    }
  }
  if (c.securityContext !== undefined && c.securityContext !== null && !isObject(c.securityContext)) out.push(`${field}.securityContext must be an object, not ${describe(c.securityContext)}`);
}

/**
 * The shape the renderer relies on, checked before it reads anything: lists are lists (a
 * `command` given as a string is refused, never split into characters), strings are strings.
 * Each problem names the pod and the field.
 */
export function podShapeProblems(pod: unknown): string[] {
  if (!isObject(pod)) return [`a pod must be an object, not ${describe(pod)}`];
  const out: string[] = [];
  const meta = pod.metadata;
  if (meta !== undefined && !isObject(meta)) return [`a pod's metadata must be an object, not ${describe(meta)}`];
  if (meta?.name !== undefined && typeof meta.name !== 'string') out.push(`metadata.name must be a string, not ${describe(meta.name)}`);
  if (meta?.namespace !== undefined && meta.namespace !== null && typeof meta.namespace !== 'string') out.push(`metadata.namespace must be a string, not ${describe(meta.namespace)}`);
  const where = `pod ${typeof meta?.namespace === 'string' && meta.namespace ? meta.namespace : 'default'}/${typeof meta?.name === 'string' ? meta.name : '?'}`;
  const spec = pod.spec;
  if (spec !== undefined && spec !== null && !isObject(spec)) out.push(`spec must be an object, not ${describe(spec)}`);
  else if (isObject(spec)) {
    for (const list of ['containers', 'initContainers'] as const) {
      const v = spec[list];
      if (v === undefined || v === null) continue;
      if (!Array.isArray(v)) out.push(`spec.${list} must be a list of containers, not ${describe(v)}`);
      else v.forEach((c: unknown, i) => containerProblems(c, `spec.${list}[${i}]`, out));
    }
    if (spec.restartPolicy !== undefined && typeof spec.restartPolicy !== 'string') out.push(`spec.restartPolicy must be a string, not ${describe(spec.restartPolicy)}`);
    const grace = spec.terminationGracePeriodSeconds;
    if (grace !== undefined && grace !== null && typeof grace !== 'number') out.push(`spec.terminationGracePeriodSeconds must be a number, not ${describe(grace)}`);
    if (spec.securityContext !== undefined && spec.securityContext !== null && !isObject(spec.securityContext)) out.push(`spec.securityContext must be an object, not ${describe(spec.securityContext)}`);
  }
  return out.map((p) => `${where}: ${p}`);
}
