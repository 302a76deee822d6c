import type { WaitCondition } from '../../plan/waits';
import { rolloutRule, scaledDownRule } from './apps_v1_deployment';
import { completeRule } from './batch_v1_job';
import { readyRule } from './cert_manager_ready';
import { deletedRule, existsRule } from './object';
import type { Observed, ReadinessRule } from './rule';
import { boundRule } from './v1_persistentvolumeclaim';
import { Verdict, waiting } from './verdict';

export * from './verdict';
export type { Observed, ReadinessRule, StorageClassLike } from './rule';
export { blockerKind, comingUp, describePod, podBlocker, podProgress, podReady, podSummary, stuckTooLong, terminations, startedContainers } from './v1_pod';
export type { ContainerProgress, PodProgress } from './v1_pod';
export { newestReplicaSet, rolloutPods } from './apps_v1_deployment';
export { selectorMatches, selectorString } from './selector';
export { storageClassOf } from './v1_persistentvolumeclaim';

/**
 * The readiness rule of each wait condition, keyed by the plan's list (src/plan/waits.ts): one
 * missing, or one filed under another condition, does not compile. The walker knows nothing of
 * kinds: it asks here. A Job's pods are judged separately (v1_pod.ts), since a stuck pod never
 * fails its Job; a rollout's pods also decide whether its ProgressDeadlineExceeded is a failure
 * or a slow start.
 */
export const RULES: { readonly [C in WaitCondition]: ReadinessRule<C> } = {
  complete: completeRule,
  rollout: rolloutRule,
  ready: readyRule,
  bound: boundRule,
  exists: existsRule,
  deleted: deletedRule,
  'scaled-down': scaledDownRule,
};

export function verdictFor(condition: WaitCondition, o: Observed): Verdict {
  const r: ReadinessRule | undefined = RULES[condition];
  if (!r) return waiting(`unknown wait condition ${condition}`);
  return r.verdict(o);
}
