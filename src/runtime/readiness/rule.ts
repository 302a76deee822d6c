/**
 * A readiness rule: the verdict for one wait condition of the plan format (src/plan/waits.ts),
 * read from what the waiter (or `status`) observed. Each rule file exports the rules of its kind.
 */
import type { KubernetesObject, V1Pod, V1StorageClass } from '@kubernetes/client-node';
import { WaitCondition, WaitType, waitType } from '../../plan/waits';
import type { Verdict } from './verdict';

/** What a PVC's rule reads of its StorageClass. */
export type StorageClassLike = Pick<V1StorageClass, 'metadata' | 'volumeBindingMode'>;

/** What the waiter observed about one object (undefined when it does not exist). */
export interface Observed {
  readonly object: KubernetesObject | undefined;
  /** For `bound`: the claim's StorageClass. */
  readonly storageClass?: StorageClassLike;
  /** For `rollout`: the pods of the newest ReplicaSet, when they were read (undefined: not known). */
  readonly pods?: readonly V1Pod[];
}

export interface ReadinessRule<C extends WaitCondition = WaitCondition> {
  /** The plan's entry of the condition: its name, and the kinds it is the default wait of. */
  readonly wait: WaitType & { readonly for: C };
  readonly verdict: (o: Observed) => Verdict;
}

/** The rule of `condition`, reading the object as a `T` (the kind the condition is for). */
export function rule<C extends WaitCondition, T extends KubernetesObject>(
  condition: C, verdict: (object: T | undefined, o: Observed) => Verdict,
): ReadinessRule<C> {
  return { wait: waitType(condition), verdict: (o) => verdict(o.object as T | undefined, o) };
}
