/**
 * Stage 3, actions: the step's imperative operations, in order, before its objects are applied.
 * One decision per action for `plan` and `run` (`actionEffect`): an action whose effect already
 * holds (the Deployment is at that many replicas, the object is gone) is not done at all.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import type { Action } from '../../plan/types';
import { refString } from '../client';
import { objectId } from '../progress';
import type { StepRun } from './context';

export interface ActionEffect {
  /** stop: a scale to 0 of a running workload; scale: to another count; delete; none: the effect holds already. */
  readonly effect: 'stop' | 'scale' | 'delete' | 'none';
  /** `scale to 0 Deployment/uyuni (uyuni)`. */
  readonly action: string;
  readonly object: string;
  readonly why: string;
}

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

type Handlers = { readonly [T in Action['type']]: (s: StepRun, a: Extract<Action, { type: T }>) => Promise<string> };

const HANDLERS: Handlers = {
  /** Merge patch of spec.replicas. */
  scale: async (s, a) => {
    await s.cluster.mergePatch(a.object, { spec: { replicas: a.replicas } });
    return 'done';
  },
  /** propagationPolicy Background: dependents go too. */
  delete: async (s, a) => ((await s.cluster.delete(a.object)) ? 'deleting' : 'not present'),
};

/** The handler of an action's type (each takes exactly its own type: the table above is checked). */
const handlerOf = (a: Action) => HANDLERS[a.type] as (s: StepRun, a: Action) => Promise<string>;

export async function actionsStage(s: StepRun): Promise<void> {
  for (const a of s.step.actions) {
    const e = actionEffect(a, await s.cluster.get(a.object));
    const result = e.effect === 'none' ? `${e.why}: not done` : await handlerOf(a)(s, a);
    s.emit({ type: 'action', step: s.step.name, action: e.action, object: objectId(a.object), result });
  }
}
