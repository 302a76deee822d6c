/** A plan directory as the runtime uses it: its index read and checked, `--namespace` applied, step files parsed. */
import { PlanError, planDirOf, readPlan } from '../plan/reader';
import type { Plan } from '../plan/types';
import { BadInput } from './errors';
import { checkStepObjects, loadStepObjects, Manifest, relocateObject, relocatePlan } from './manifests';

export interface PlanDir {
  readonly dir: string;
  /** The plan, relocated by `--namespace`. */
  readonly plan: Plan;
  /** The objects of a step as they will be applied (namespace override included); read on first use. */
  readonly objectsOf: (step: string) => Manifest[];
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** Reads a plan directory, with --namespace applied; bad input is exit 2. */
export function loadPlan(planDir: string, namespace?: string): Plan {
  return relocatePlan(readOriginal(planDir, namespace), namespace);
}

/** The plan index as written (not relocated), with `--namespace` checked too. */
function readOriginal(planDir: string, namespace?: string): Plan {
  if (namespace !== undefined && (namespace.length > 63 || !DNS_LABEL.test(namespace))) {
    throw new BadInput(`--namespace ${JSON.stringify(namespace)} must be a DNS label (lower-case letters, digits and '-', at most 63)`);
  }
  try {
    return readPlan(planDirOf(planDir));
  } catch (e) {
    if (e instanceof PlanError) throw new BadInput(e.message);
    throw e;
  }
}

/**
 * Opens a plan directory, validating all of it before anything is sent (every verb): the index
 * (src/plan/reader.ts), then every step file, whose objects must be exactly those the index lists.
 */
export function openPlanDir(arg: string, namespace?: string): PlanDir {
  const dir = planDirOf(arg);
  const original = readOriginal(dir, namespace);
  const plan = relocatePlan(original, namespace);
  const parsed = new Map<string, Manifest[]>();
  for (const [i, step] of original.steps.entries()) {
    const objects = loadStepObjects(dir, step);
    checkStepObjects(dir, step, i, objects);
    parsed.set(step.name, objects.map((o) => relocateObject(o, original.namespace, plan.namespace)));
  }
  const objectsOf = (name: string): Manifest[] => {
    const objects = parsed.get(name);
    if (!objects) throw new BadInput(`no step ${name} in ${dir}`);
    return objects;
  };
  return { dir, plan, objectsOf };
}
