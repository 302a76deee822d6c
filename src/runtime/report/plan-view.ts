/**
 * `plan`'s views: the verdict (decide/plan-result.ts) as text for people (plan-text.ts, after
 * what run refuses or takes over before its first write), or as one document for machines; and
 * where `--out` saved it. Chosen once from `-o` (view.ts).
 */
import type { Plan } from '../../plan/types';
import type { Target } from '../core/target';
import { DecisionFlags, givenFlags, PlanResult } from '../decide/plan-result';
import { renderTakeovers } from '../safety/ownership';
import { renderPlan } from './plan-text';
import { forMachines, machineText, ViewOptions } from './view';

export interface PlanView {
  /** The one verdict: the steps, and what run refuses or takes over before its first write. */
  verdict(plan: Plan, r: PlanResult, target: Target): void;
  /** `--out FILE` saved the verdict of `planDir` with these decision flags. */
  saved(file: string, planDir: string, flags: DecisionFlags): void;
}

class PlanTextView implements PlanView {
  constructor(private readonly o: ViewOptions) {}

  verdict(plan: Plan, r: PlanResult, target: Target): void {
    const safety = [...renderTakeovers(r.takeovers), ...r.lostCredentials.map((l) => `Refused: ${l.message}`), ...r.locked ? [`Refused: ${r.locked}`] : []];
    this.o.out([...safety, renderPlan(plan, r, { verbose: this.o.verbose, palette: this.o.palette, target })].join('\n') + '\n');
  }

  saved(file: string, planDir: string, flags: DecisionFlags): void {
    const given = givenFlags(flags);
    this.o.out(`\nSaved the plan to ${file}: \`uyuni-cdk run ${file}\` applies exactly this, with its flags${given.length ? ` (${given.join(', ')})` : ' (none)'}, and refuses if the cluster or ${planDir} changed since.\n`);
  }
}

class PlanMachineView implements PlanView {
  constructor(private readonly o: ViewOptions) {}

  verdict(plan: Plan, r: PlanResult, target: Target): void {
    this.o.out(machineText(this.o, { plan: plan.name, namespace: plan.namespace, cluster: target, ...r }));
  }

  /** The document is the verdict; the file is where the caller asked. */
  saved(): void {}
}

export function planView(o: ViewOptions): PlanView {
  return forMachines(o) ? new PlanMachineView(o) : new PlanTextView(o);
}
