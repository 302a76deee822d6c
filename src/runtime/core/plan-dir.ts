/** A plan directory as the runtime uses it: its index read and checked, `--namespace` applied, step files parsed. */
import { PlanError, planDirOf, readPlan } from '../../plan/reader';
import { hashText } from '../../plan/spec-hash';
import type { ObjectRef, Plan } from '../../plan/types';
import { BadInput } from '../../kube/api-errors';
import { checkStepObjects, loadStepObjects, Manifest, readStepFile, refOf, relocateObject, relocatePlan, specHash } from './manifests';

export interface PlanDir {
  readonly dir: string;
  /** The plan, relocated by `--namespace`. */
  readonly plan: Plan;
  /** The objects of a step as they will be applied (namespace override included); every step file is parsed when the directory is opened. */
  readonly objectsOf: (step: string) => Manifest[];
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

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

/** What `status` needs of a step: its objects (relocated by `--namespace`) and each Job's spec hash by name. */
export interface StepView {
  readonly objects: readonly ObjectRef[];
  readonly jobSpecHashes: ReadonlyMap<string, string>;
}

export interface PlanView {
  readonly dir: string;
  /** The plan, relocated by `--namespace`. */
  readonly plan: Plan;
  readonly viewOf: (step: string) => StepView;
}

/**
 * Opens a plan directory for `status`, validating all of it before anything is sent: the index,
 * then every step file, read as every verb reads it. A step file whose text has the digest its
 * index entry's `fileSummary` records is the file synth wrote, so its objects are the index's and
 * its Jobs' spec hashes the summary's: it need not be parsed. Any other (edited, or of a
 * hand-written plan) is parsed and checked against the index as `openPlanDir` does.
 */
export function openPlanView(arg: string, namespace?: string): PlanView {
  const dir = planDirOf(arg);
  const original = readOriginal(dir, namespace);
  const plan = relocatePlan(original, namespace);
  const views = new Map<string, StepView>();
  for (const [i, step] of original.steps.entries()) {
    const text = readStepFile(dir, step);
    const summary = step.fileSummary;
    if (summary && summary.sha256 === hashText(text)) {
      views.set(step.name, { objects: plan.steps[i].objects, jobSpecHashes: new Map(Object.entries(summary.jobSpecHashes)) });
      continue;
    }
    const objects = loadStepObjects(dir, step, text);
    checkStepObjects(dir, step, i, objects);
    views.set(step.name, {
      objects: objects.map((o) => refOf(relocateObject(o, original.namespace, plan.namespace))),
      jobSpecHashes: new Map(objects.filter((o) => o.kind === 'Job').map((o) => [o.metadata.name, specHash(o)])),
    });
  }
  const viewOf = (name: string): StepView => {
    const view = views.get(name);
    if (!view) throw new BadInput(`no step ${name} in ${dir}`);
    return view;
  };
  return { dir, plan, viewOf };
}
