import * as fs from 'fs';
import * as path from 'path';
import { Plan, PLAN_FORMAT_VERSION } from './types';

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
  for (const [i, step] of plan.steps.entries()) {
    if (typeof step.name !== 'string' || typeof step.file !== 'string') {
      throw new PlanError(`${file}: steps[${i}] needs a name and a file`);
    }
    if (!fs.existsSync(path.join(dir, step.file))) {
      throw new PlanError(`${file}: steps[${i}] (${step.name}) names ${step.file}, which does not exist`);
    }
  }
  return plan;
}
