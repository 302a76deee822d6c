/**
 * Stage 3, actions: the step's imperative operations, in order, before its objects are applied.
 * One handler per action type of the plan format; an absent object is fine for each.
 */
import type { Action } from '../../plan/types';
import { refString } from '../client';
import type { StepRun } from './context';

type Handlers = { readonly [T in Action['type']]: (s: StepRun, a: Extract<Action, { type: T }>) => Promise<void> };

const HANDLERS: Handlers = {
  /** Merge patch of spec.replicas. */
  scale: async (s, a) => {
    const there = await s.cluster.get(a.object);
    if (there) await s.cluster.mergePatch(a.object, { spec: { replicas: a.replicas } });
    s.emit({ type: 'action', step: s.step.name, action: `scale to ${a.replicas}`, object: refString(a.object), result: there ? 'done' : 'not present, nothing to scale' });
  },
  /** propagationPolicy Background: dependents go too. */
  delete: async (s, a) => {
    const gone = !(await s.cluster.delete(a.object));
    s.emit({ type: 'action', step: s.step.name, action: 'delete', object: refString(a.object), result: gone ? 'not present' : 'deleting' });
  },
};

/** The handler of an action's type (each takes exactly its own type: the table above is checked). */
const handlerOf = (a: Action) => HANDLERS[a.type] as (s: StepRun, a: Action) => Promise<void>;

export async function actionsStage(s: StepRun): Promise<void> {
  for (const a of s.step.actions) await handlerOf(a)(s, a);
}
