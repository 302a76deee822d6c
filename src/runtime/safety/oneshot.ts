/**
 * One-shot flows never repeat. A migration's and an upgrade's data steps (stop the old host and
 * copy its data, import its secrets, upgrade the database, finalize it) run once per flow: what
 * decides is the flow's record in the cluster (src/runtime/safety/record.ts), not the step's Jobs. One
 * decision for `plan` (which shows it) and `run` (which acts on it before its first write).
 */
import type { Plan, Step } from '../../plan/types';
import { currentFlow, damagedFlowRefusal, FlowRecord, Records } from './record';

export type OneShotDecision =
  /** Not a one-shot step, or its flow has not done it: the Jobs decide, as for any step (src/runtime/decide/job-decision.ts). */
  | { readonly action: 'normal' }
  /** Done in this flow with the same spec: skipped, whatever the Jobs in the cluster (gone, changed); `facts`: what its Job printed. */
  | { readonly action: 'done'; readonly why: string; readonly facts?: Readonly<Record<string, string>> }
  /** `--rerun` of a step its flow did already: run again (a destructive change: it asks first). */
  | { readonly action: 'rerun'; readonly why: string }
  /**
   * The flow finished and this step would run differently (or was never part of it): the run
   * refuses before any write. `change`: why it would run again; `record`: the finished flow
   * (`finishedFlowRefusal` says it once for all such steps).
   */
  | { readonly action: 'refuse'; readonly why: string; readonly change?: string; readonly record?: FlowRecord };

const WHAT = { migration: 'migration', upgrade: 'upgrade' } as const;

/** `the migration into namespace uyuni finished at 2026-… from old.example.com (run migrate-…)`. */
export function finishedLine(r: FlowRecord, namespace: string): string {
  if (r.evidence) return r.evidence;
  const what = r.flow === 'migration' ? `the migration into namespace ${namespace}` : `the upgrade of namespace ${namespace} to ${r.imageGeneration ?? 'its images'}`;
  return `${what} finished at ${r.finishedAt} ${r.source ? `from ${r.source} ` : ''}(run ${r.run})`;
}

/** What to use after a finished flow. */
export function useNow(r: FlowRecord): string {
  if (r.evidence) {
    return 'a migration never runs over a set-up server: use the install plan of the same configuration without `migration`, or an upgrade plan; '
      + 'if no migration ran here and the server is to be replaced, --rerun each data step (asked first)';
  }
  return r.flow === 'migration'
    ? 'the server is migrated: use the install plan of the same configuration without `migration` (synthesize it, then run dist/install), '
      + 'or an upgrade plan (`upgrade:` in the configuration) for new images'
    : 'to upgrade again, synthesize an upgrade to a newer image generation (images.tag); for the server as it is, the install plan';
}

export function decideOneShot(step: Step, hash: string, plan: Plan, records: Records, rerun: readonly string[]): OneShotDecision {
  if (!step.oneShot) return { action: 'normal' };
  // a record that cannot be read decides nothing: the step refuses (record.ts damageRefusals)
  const damaged = damagedFlowRefusal(plan, records, step.oneShot);
  if (damaged) return { action: 'refuse', why: damaged };
  const r = currentFlow(records, step.oneShot, plan);
  if (!r) return { action: 'normal' };
  const done = r.steps[step.name];
  if (!r.finishedAt) {
    // A flow under way: a done step with the same spec stays done even if its Jobs went.
    return done && done.hash === hash && !rerun.includes(step.name)
      ? { action: 'done', why: `done in this ${WHAT[r.flow]} by run ${done.run} at ${done.at} (recorded in the cluster)`, ...(done.facts ? { facts: done.facts } : {}) }
      : { action: 'normal' };
  }
  const finished = finishedLine(r, plan.namespace);
  if (rerun.includes(step.name)) return { action: 'rerun', why: `--rerun ${step.name}: ${finished}; its data step ${step.name} runs again` };
  if (done && done.hash === hash) return { action: 'done', why: `${finished}: a data step never runs twice`, ...(done.facts ? { facts: done.facts } : {}) };
  const change = done ? CHANGED : r.evidence ? OVER_DATA : NOT_PART;
  return {
    action: 'refuse', change, record: r,
    why: `${finished}; its data step ${step.name} would run again (${change}): a finished ${WHAT[r.flow]} never repeats (--rerun ${step.name} repeats it; it asks first)`,
  };
}

const CHANGED = 'this plan changed it since';
const NOT_PART = 'it was not part of it';
/** No record is left, but the cluster shows the server the flow made (evidence.ts). */
const OVER_DATA = 'over the data of that server';

/** A data step a finished flow refuses to run again, and why it would. */
export interface RefusedDataStep {
  readonly step: string;
  readonly change: string;
}

/**
 * A finished flow's refusal, each fact once: one sentence (what finished, when, from where, and
 * what to use now), then the data steps as a list on the next line: those that would run again,
 * by why, or (`whole`: the plan itself is refused, nothing changed) those it did.
 */
export function finishedFlowRefusal(r: FlowRecord, plan: Plan, refused: readonly RefusedDataStep[], whole: boolean): string {
  const never = whole ? 'never runs again, whatever changed in its configuration' : 'never repeats';
  const head = r.evidence
    ? `${r.evidence}: ${useNow(r)}; if the ${WHAT[r.flow]} did finish here, rebuild its record: uyuni-cdk repair-record dist/${plan.name} (docs/runtime.md, "Safety")`
    : `${finishedLine(r, plan.namespace)}: a finished ${WHAT[r.flow]} ${never}; ${useNow(r)}`;
  const rerun = '(--rerun STEP repeats one; it asks first)';
  if (refused.length === 0) return `${head}\ndata steps it did: ${plan.steps.filter((s) => s.oneShot).map((s) => s.name).join(', ')} ${rerun}`;
  const lines = [...new Set(refused.map((x) => x.change))].map((change) => {
    const steps = refused.filter((x) => x.change === change).map((x) => x.step);
    const why = change === CHANGED ? `this plan changed ${steps.length > 1 ? 'them' : 'it'} since`
      : change === OVER_DATA ? OVER_DATA : `${steps.length > 1 ? 'they were' : 'it was'} not part of it`;
    return `steps that would run again (${why}): ${steps.join(', ')}`;
  });
  return [head, ...lines.slice(0, -1), `${lines[lines.length - 1]} ${rerun}`].join('\n');
}

/**
 * A finished migration refuses its plan: the migrate plan is for moving a server in, and it is
 * in. Only `--rerun` of one of its data steps runs it (the other data steps stay done).
 */
export function finishedPlanRefusal(plan: Plan, records: Records, rerun: readonly string[], refused: readonly RefusedDataStep[] = []): string | undefined {
  const r = finishedMigration(plan, records, rerun);
  return r ? finishedFlowRefusal(r, plan, refused, true) : undefined;
}

/** The finished migration that refuses this plan (no `--rerun` of one of its data steps), if any. */
function finishedMigration(plan: Plan, records: Records, rerun: readonly string[]): FlowRecord | undefined {
  if (plan.flow?.kind !== 'migration') return undefined;
  const r = currentFlow(records, 'migration', plan);
  if (!r?.finishedAt) return undefined;
  if (plan.steps.some((s) => s.oneShot && rerun.includes(s.name))) return undefined;
  return r;
}

/**
 * Every refusal of finished flows, as one text per flow: the plan's own (a finished migration),
 * with the data steps that would run again listed in it, not repeated step by step.
 */
export function finishedFlowRefusals(plan: Plan, records: Records, rerun: readonly string[], refused: ReadonlyArray<RefusedDataStep & { record: FlowRecord }>): string[] {
  const whole = finishedMigration(plan, records, rerun);
  const flows = [...new Set([...whole ? [whole] : [], ...refused.map((x) => x.record)])];
  return flows.map((r) => finishedFlowRefusal(r, plan, refused.filter((x) => x.record === r), r === whole));
}
