/**
 * What an action of a step (scale, delete) would do to its object as the cluster has it: one
 * decision for `plan`, which shows it, and `run`, whose actions stage does only what it says
 * (apply/steps/actions.ts). An action whose effect already holds is not done at all.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import type { Action } from '../../plan/types';
import { refString } from '../../kube/cluster';
import type { ActionEffect } from './plan-result';

/** What the action would do to the object as it is (`live`: undefined when there is none). */
export function actionEffect(a: Action, live: KubernetesObject | undefined): ActionEffect {
  const object = refString(a.object);
  if (a.type === 'delete') {
    return live ? { effect: 'delete', action: 'delete', object, why: 'exists' } : { effect: 'none', action: 'delete', object, why: 'not present' };
  }
  const action = `scale to ${a.replicas}`;
  if (!live) return { effect: 'none', action, object, why: 'not present, nothing to scale' };
  const replicas = (live as { spec?: { replicas?: number } }).spec?.replicas ?? 1;
  if (replicas === a.replicas) return { effect: 'none', action, object, why: `already at ${replicas} replica${replicas === 1 ? '' : 's'}` };
  return { effect: a.replicas === 0 ? 'stop' : 'scale', action, object, why: `${replicas} replica${replicas === 1 ? '' : 's'} now` };
}
