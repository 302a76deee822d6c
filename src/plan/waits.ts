/**
 * The wait conditions of the plan format, in one list that both sides read: synth takes an
 * object's default wait from it (`defaultWait`), the plan reader accepts exactly its names, and
 * the runtime keys its readiness rules by them (src/runtime/readiness/: a rule for every entry,
 * or the runtime does not compile). A new condition is an entry here and a rule there.
 */

/** What a kind matcher looks at. */
export interface KindOf {
  readonly apiVersion: string;
  readonly kind: string;
}

export interface WaitType {
  /** The value of a wait's `for`. */
  readonly for: string;
  /** The objects synth waits on this way unless a step says otherwise; without it, never a default. */
  readonly defaultFor?: (ref: KindOf) => boolean;
}

const CERT_MANAGER_READY = new Set(['Certificate', 'Issuer', 'ClusterIssuer']);

/** In the order defaults are tried: the first match wins, and `exists` takes whatever is left. */
export const WAIT_TYPES = [
  /** A Job reached Complete (failed on Failed, or on a pod stuck pulling its image). */
  { for: 'complete', defaultFor: (r) => r.kind === 'Job' },
  /** A Deployment's rollout finished (observedGeneration, updated = ready = available). */
  { for: 'rollout', defaultFor: (r) => r.kind === 'Deployment' },
  /** Condition Ready=True: cert-manager Certificate, Issuer, ClusterIssuer. */
  { for: 'ready', defaultFor: (r) => CERT_MANAGER_READY.has(r.kind) && r.apiVersion.startsWith('cert-manager.io/') },
  /** A PVC is Bound; a WaitForFirstConsumer claim never blocks its step. */
  { for: 'bound', defaultFor: (r) => r.kind === 'PersistentVolumeClaim' },
  /** The object can be read back (Namespaces, Services, ...). */
  { for: 'exists', defaultFor: () => true },
  /** The object is gone (after a `delete` action). */
  { for: 'deleted' },
  /** A Deployment reports no replicas (after a `scale` action to 0). */
  { for: 'scaled-down' },
] as const satisfies readonly WaitType[];

/** What "done" means for one object: `complete`, `rollout`, `ready`, `bound`, `exists`, `deleted`, `scaled-down`. */
export type WaitCondition = (typeof WAIT_TYPES)[number]['for'];

/** The entry of one condition. */
export type WaitTypeOf<C extends WaitCondition> = Extract<(typeof WAIT_TYPES)[number], { readonly for: C }>;

export const WAIT_CONDITIONS: readonly WaitCondition[] = WAIT_TYPES.map((w) => w.for);

export function isWaitCondition(value: unknown): value is WaitCondition {
  return (WAIT_CONDITIONS as readonly unknown[]).includes(value);
}

export function waitType<C extends WaitCondition>(condition: C): WaitTypeOf<C> {
  return WAIT_TYPES.find((w) => w.for === condition) as WaitTypeOf<C>;
}

/** The default wait of an object, by its kind. */
export function defaultWait(ref: KindOf): WaitCondition {
  return WAIT_TYPES.find((w) => 'defaultFor' in w && w.defaultFor(ref))!.for;
}
