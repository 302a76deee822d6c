import * as fs from 'fs';
import * as path from 'path';
import { Plan, PLAN_FORMAT_VERSION, WaitCondition } from './types';

const WAIT_CONDITIONS: readonly WaitCondition[] = ['complete', 'rollout', 'ready', 'bound', 'exists', 'deleted', 'scaled-down'];

/** A plan directory that cannot be used: the runtime exits 2 on it. */
export class PlanError extends Error {}

export const PLAN_INDEX = 'plan.json';

/** Reads and checks `<dir>/plan.json`; every step file it names must exist beside it. */
export function readPlan(dir: string): Plan {
  const file = path.join(dir, PLAN_INDEX);
  let raw: string;
  try {
    raw = fs.readFileSync(file, 'utf8');
  } catch {
    throw new PlanError(`${file}: no plan index here (synthesize first: npx cdk8s synth)`);
  }
  let plan: Plan;
  try {
    plan = JSON.parse(raw) as Plan;
  } catch (e) {
    throw new PlanError(`${file}: not valid JSON (${(e as Error).message})`);
  }
  if (plan.formatVersion !== PLAN_FORMAT_VERSION) {
    throw new PlanError(`${file}: formatVersion ${JSON.stringify(plan.formatVersion)} is not supported (this runtime reads ${PLAN_FORMAT_VERSION})`);
  }
  if (!Array.isArray(plan.steps) || plan.steps.length === 0) {
    throw new PlanError(`${file}: steps must be a non-empty list`);
  }
  if (typeof plan.name !== 'string' || typeof plan.namespace !== 'string' || !plan.selector || typeof plan.selector !== 'object') {
    throw new PlanError(`${file}: name, namespace and selector are required`);
  }
  if (!(typeof plan.deadlineSeconds === 'number' && plan.deadlineSeconds > 0)) {
    throw new PlanError(`${file}: deadlineSeconds must be a positive number`);
  }
  const names = new Set<string>();
  for (const [i, step] of plan.steps.entries()) {
    if (typeof step.name !== 'string' || typeof step.file !== 'string') {
      throw new PlanError(`${file}: steps[${i}] needs a name and a file`);
    }
    if (names.has(step.name)) throw new PlanError(`${file}: steps[${i}]: step name ${step.name} is used twice`);
    names.add(step.name);
    for (const key of ['objects', 'waits', 'requires', 'actions', 'gates'] as const) {
      if (!Array.isArray(step[key])) throw new PlanError(`${file}: steps[${i}] (${step.name}).${key} must be a list`);
    }
    if (!(typeof step.timeoutSeconds === 'number' && step.timeoutSeconds > 0)) {
      throw new PlanError(`${file}: steps[${i}] (${step.name}).timeoutSeconds must be a positive number`);
    }
    for (const [j, w] of step.waits.entries()) {
      if (!WAIT_CONDITIONS.includes(w?.for) || typeof w?.object?.name !== 'string' || typeof w?.object?.kind !== 'string') {
        throw new PlanError(`${file}: steps[${i}] (${step.name}).waits[${j}] needs an object and a "for" of ${WAIT_CONDITIONS.join(', ')}`);
      }
    }
    if (!fs.existsSync(path.join(dir, step.file))) {
      throw new PlanError(`${file}: steps[${i}] (${step.name}) names ${step.file}, which does not exist`);
    }
  }
  return plan;
}
