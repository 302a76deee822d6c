/** A plan directory as the runtime uses it: plan.json read and checked, `--namespace` applied, step files parsed. */
import { PlanError, readPlan } from '../plan/reader';
import type { Plan } from '../plan/types';
import { BadInput } from './errors';
import { loadStepObjects, Manifest, relocateObject, relocatePlan } from './manifests';

export interface PlanDir {
  readonly dir: string;
  /** The plan, relocated by `--namespace`. */
  readonly plan: Plan;
  /** The objects of a step as they will be applied (namespace override included); read on first use. */
  readonly objectsOf: (step: string) => Manifest[];
}

/** Reads a plan directory, with --namespace applied; bad input is exit 2. */
export function loadPlan(planDir: string, namespace?: string): Plan {
  try {
    return relocatePlan(readPlan(planDir), namespace);
  } catch (e) {
    if (e instanceof PlanError) throw new BadInput(e.message);
    throw e;
  }
}

export function openPlanDir(dir: string, namespace?: string): PlanDir {
  const original = loadPlan(dir);
  const plan = relocatePlan(original, namespace);
  const parsed = new Map<string, Manifest[]>();
  const objectsOf = (name: string): Manifest[] => {
    const step = original.steps.find((s) => s.name === name);
    if (!step) throw new BadInput(`no step ${name} in ${dir}`);
    if (!parsed.has(name)) parsed.set(name, loadStepObjects(dir, step).map((o) => relocateObject(o, original.namespace, plan.namespace)));
    return parsed.get(name)!;
  };
  return { dir, plan, objectsOf };
}
