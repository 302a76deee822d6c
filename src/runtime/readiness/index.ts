import type { V1Pod } from '@kubernetes/client-node';
import type { WaitCondition } from '../../plan/types';
import { rolloutVerdict, scaledDownVerdict } from './apps_v1_deployment';
import { jobVerdict } from './batch_v1_job';
import { readyVerdict } from './cert_manager_ready';
import { boundVerdict } from './v1_persistentvolumeclaim';
import { done, Verdict, waiting } from './verdict';

export * from './verdict';
export { blockerKind, comingUp, describePod, podBlocker, podProgress, podReady, podSummary, stuckTooLong, terminations, startedContainers } from './v1_pod';
export type { ContainerProgress, PodProgress } from './v1_pod';
export { newestReplicaSet, rolloutPods } from './apps_v1_deployment';
export { selectorMatches, selectorString } from './selector';
export { storageClassOf } from './v1_persistentvolumeclaim';

/** What the waiter observed about one object (undefined when it does not exist). */
export interface Observed {
  readonly object: any | undefined;
  /** For `bound`: the claim's StorageClass. */
  readonly storageClass?: any;
  /** For `rollout`: the pods of the newest ReplicaSet, when they were read (undefined: not known). */
  readonly pods?: readonly V1Pod[];
}

/**
 * The readiness rule of each wait condition. The walker knows nothing of kinds: it asks here.
 * A Job's pods are judged separately (v1_pod.ts), since a stuck pod never fails its Job; a
 * rollout's pods also decide whether its ProgressDeadlineExceeded is a failure or a slow start.
 */
export const RULES: Readonly<Record<WaitCondition, (o: Observed) => Verdict>> = {
  complete: (o) => jobVerdict(o.object),
  rollout: (o) => rolloutVerdict(o.object, o.pods),
  ready: (o) => readyVerdict(o.object),
  bound: (o) => boundVerdict(o.object, o.storageClass),
  exists: (o) => (o.object ? done('exists') : waiting('not found yet')),
  deleted: (o) => (o.object ? waiting(o.object.metadata?.deletionTimestamp ? 'terminating' : 'still present') : done('gone')),
  'scaled-down': (o) => scaledDownVerdict(o.object),
};

export function verdictFor(condition: WaitCondition, o: Observed): Verdict {
  const rule = RULES[condition];
  if (!rule) return waiting(`unknown wait condition ${condition}`);
  return rule(o);
}
