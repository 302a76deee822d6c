import * as fs from 'fs';
import * as path from 'path';
import { Failure, validate } from 'superstruct';
import { planSchema, REQUIRED } from './schema';
import { Plan, PLAN_FORMAT_VERSION } from './types';
import { WAIT_CONDITIONS } from './waits';

/** A plan directory that cannot be used: the runtime exits 2 on it. */
export class PlanError extends Error {}

export const PLAN_INDEX = 'plan.json';

/** How many problems one message lists. */
const SHOWN = 3;

/** Reads and checks `<dir>/plan.json`; every step file it names must exist beside it. */
export function readPlan(dir: string): Plan {
  const file = path.join(dir, PLAN_INDEX);
  const raw = parseIndex(file);
  const fail = (problem: string) => new PlanError(`${file}: ${problem}`);
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw fail(`must hold a JSON object (the plan index), not ${describeValue(raw)}`);
  const version = (raw as { formatVersion?: unknown }).formatVersion;
  if (version !== PLAN_FORMAT_VERSION) {
    throw fail(`formatVersion ${JSON.stringify(version)} is not supported (this runtime reads ${PLAN_FORMAT_VERSION})`);
  }
  const [error, plan] = validate(raw, planSchema);
  if (error) {
    const problems = [...new Set(error.failures().map((f) => describeFailure(f, raw)))];
    const more = problems.length > SHOWN ? `; and ${problems.length - SHOWN} more` : '';
    throw fail(problems.slice(0, SHOWN).join('; ') + more);
  }
  const names = new Set<string>();
  for (const [i, step] of plan.steps.entries()) {
    if (names.has(step.name)) throw fail(`steps[${i}]: step name ${step.name} is used twice`);
    names.add(step.name);
    if (!fs.existsSync(path.join(dir, step.file))) throw fail(`steps[${i}] (${step.name}) names ${step.file}, which does not exist`);
  }
  return plan;
}

function parseIndex(file: string): unknown {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    throw new PlanError(`${file}: no plan index here (synthesize first: npx cdk8s synth)`);
  }
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new PlanError(`${file}: not valid JSON (${(e as Error).message})`);
  }
}

function describeValue(v: unknown): string {
  if (v === null) return 'null';
  return Array.isArray(v) ? 'a list' : `a ${typeof v}`;
}

/** `steps[1] (setup).waits[0].for`: the path of a field, naming each step it passes through. */
function fieldName(p: ReadonlyArray<string | number>, raw: unknown): string {
  const steps = (raw as { steps?: unknown }).steps;
  return p.map((k, i) => {
    if (typeof k !== 'number') return `${i > 0 ? '.' : ''}${k}`;
    const name = i === 1 && p[0] === 'steps' && Array.isArray(steps) ? (steps[k] as { name?: unknown } | null)?.name : undefined;
    return typeof name === 'string' ? `[${k}] (${name})` : `[${k}]`;
  }).join('');
}

/** The words after the field: ours (schema.ts) for values, superstruct's structural ones replaced. */
function problemOf(f: Failure): string {
  if (f.refinement) return f.message;
  if (f.type === 'type' || f.type === 'record') return f.value === undefined ? REQUIRED : `must be ${f.type === 'record' ? 'a map of strings' : 'an object'}, not ${describeValue(f.value)}`;
  if (f.type === 'array') return f.value === undefined ? REQUIRED : `must be a list, not ${describeValue(f.value)}`;
  return f.message;
}

/** The plan's identity: without it nothing can be selected or named. */
const IDENTITY = ['name', 'namespace', 'selector'];

function describeFailure(f: Failure, raw: unknown): string {
  const p = f.path as Array<string | number>;
  const problem = problemOf(f);
  const w = p.indexOf('waits');
  if (w === 2 && p.length > 3) {
    const inside = p.slice(w + 2).join('.');
    return `${fieldName(p.slice(0, w + 2), raw)} needs an object and a "for" of ${WAIT_CONDITIONS.join(', ')} (${inside ? `${inside} ` : ''}${problem})`;
  }
  if (p.length === 1 && IDENTITY.includes(String(p[0]))) return `${p[0]} ${problem}: name, namespace and selector are required`;
  return `${fieldName(p, raw)} ${problem}`;
}
