/**
 * Stage 3, actions: the step's imperative operations, in order, before its objects are applied.
 * One decision per action for `plan` and `run` (decide/action-effect.ts): an action whose effect already
 * holds (the Deployment is at that many replicas, the object is gone) is not done at all.
 */
import type { Action, Gate } from '../../../plan/types';
import { evaluateGate } from '../../decide/gates';
import { refString } from '../../../kube/cluster';
import { actionEffect } from '../../decide/action-effect';
import { objectId } from '../../core/events';
import type { StepRun } from './context';

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

/** The facts a gate needs. */
const factsOf = (g: Gate): string[] => (g.type === 'present' ? [g.fact] : [g.left, g.right].flatMap((o) => ('fact' in o ? [o.fact] : [])));

/**
 * Gates before stops: the gates of later steps that the facts gathered so far decide already
 * (every fact they need is known, and no step between here and theirs prints facts that could
 * change it), each as `step: detail` when it refuses.
 */
export function laterRefusals(s: StepRun): string[] {
  const steps = s.c.plan.steps;
  const out: string[] = [];
  for (let i = steps.findIndex((x) => x.name === s.step.name) + 1; i < steps.length; i++) {
    const later = steps[i];
    for (const g of later.gates) {
      if (!factsOf(g).every((f) => f in s.c.facts)) continue;
      const r = evaluateGate(g, s.c.facts, s.c.lostFacts);
      if (!r.ok) out.push(`step ${later.name}: ${r.detail}`);
    }
    // from here on its facts may change what the gates after it see: decided at their step
    if (later.factsFrom) break;
  }
  return out;
}

export async function actionsStage(s: StepRun): Promise<void> {
  const lives = await Promise.all(s.step.actions.map((a) => s.cluster.get(a.object)));
  if (s.step.actions.some((a, i) => actionEffect(a, lives[i]).effect === 'stop')) {
    // nothing is stopped for a run that a later gate refuses already
    const refused = laterRefusals(s);
    if (refused.length) await s.fail(`gate refused before anything is stopped: ${refused.join('; ')}`);
  }
  for (const [i, a] of s.step.actions.entries()) {
    const live = lives[i];
    const e = actionEffect(a, live);
    const result = e.effect === 'none' ? `${e.why}: not done` : await handlerOf(a)(s, a);
    if (e.effect === 'stop') s.c.stopped?.push({ ref: a.object, replicas: (live as { spec?: { replicas?: number } }).spec?.replicas ?? 1, step: s.step.name });
    s.emit({ type: 'action', step: s.step.name, action: e.action, object: objectId(a.object), result });
  }
}

/**
 * A refusal decided only after the run stopped workloads (a gate on facts gathered once nothing
 * runs, a requirement): each is scaled back to the replicas it had, in reverse order (the
 * database before the server), and said. Returns what the refusal adds: what was started again,
 * or what could not be. Nothing when the run stopped nothing.
 */
export async function startAgain(s: StepRun): Promise<string> {
  const stopped = s.c.stopped?.splice(0) ?? [];
  if (stopped.length === 0) return '';
  const done: string[] = [];
  const failed: string[] = [];
  for (const x of [...stopped].reverse()) {
    const what = `${refString(x.ref)} to ${x.replicas}`;
    let result = `done (stopped by step ${x.step}; the refusal starts it again)`;
    try {
      // started again since (a later step applied or scaled it): nothing to undo
      const now = await s.cluster.get(x.ref);
      if (!now || ((now as { spec?: { replicas?: number } }).spec?.replicas ?? 1) !== 0) continue;
      await s.cluster.mergePatch(x.ref, { spec: { replicas: x.replicas } });
      done.push(what);
    } catch (e) {
      result = `failed: ${(e as Error).message}`;
      failed.push(what);
    }
    s.emit({ type: 'action', step: s.step.name, action: `scale back to ${x.replicas}`, object: objectId(x.ref), result });
  }
  return [
    done.length ? `; started again what this run stopped: ${done.join(', ')}` : '',
    failed.length ? `; could not start again (scale them by hand): ${failed.join(', ')}` : '',
  ].join('');
}
