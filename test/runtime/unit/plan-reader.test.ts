import * as fs from 'fs';
import * as path from 'path';
import { LEGACY_PLAN_INDEX, PLAN_INDEX, PlanError, planDirOf, readPlan } from '../../../src/plan/reader';
import { job, namespace, writePlan } from '../plans';

function mutate(fn: (plan: any) => void): string {
  const dir = writePlan([{ name: 'namespace', objects: [namespace()] }, { name: 'setup', objects: [job('setup')] }]);
  const file = path.join(dir, 'uyuni.plan');
  const plan = JSON.parse(fs.readFileSync(file, 'utf8'));
  fn(plan);
  fs.writeFileSync(file, JSON.stringify(plan));
  return dir;
}

describe('reading uyuni.plan (bad input is exit 2)', () => {
  it('accepts a well-formed plan', () => {
    expect(readPlan(mutate(() => {})).steps.map((s) => s.name)).toEqual(['namespace', 'setup']);
  });

  it('accepts a requirement made by an earlier step (madeBy)', () => {
    const dir = mutate((p) => { p.steps[1].requires = [{ kind: 'Secret', name: 's', namespace: p.namespace, keys: ['a'], ifMissing: 'fail', madeBy: 'namespace' }]; });
    expect(readPlan(dir).steps[1].requires[0].madeBy).toBe('namespace');
  });

  it.each([
    ['an unknown wait condition', (p: any) => { p.steps[1].waits[0].for = 'finished'; }, /waits\[0\] needs an object and a "for"/],
    ['a missing timeout', (p: any) => { delete p.steps[1].timeoutSeconds; }, /timeoutSeconds must be a positive number/],
    ['gates that are not a list', (p: any) => { p.steps[0].gates = {}; }, /gates must be a list/],
    ['a step name used twice', (p: any) => { p.steps[1].name = 'namespace'; }, /used twice/],
    ['no namespace', (p: any) => { delete p.namespace; }, /namespace and selector are required/],
    ['another format version', (p: any) => { p.formatVersion = 2; }, /formatVersion 2 is not supported/],
    ['a step file that is not there', (p: any) => { p.steps[0].file = 'nope.yaml'; }, /does not exist/],
    ['a step requiring one Secret twice', (p: any) => {
      p.steps[1].requires = [{ kind: 'Secret', name: 's', namespace: p.namespace, keys: ['a'], ifMissing: 'generate' }, { kind: 'Secret', name: 's', namespace: p.namespace, keys: ['b'], ifMissing: 'generate' }];
    }, /steps\[1\] \(setup\)\.requires\[1\] names Secret s again \(requires\[0\]\): list its keys in one entry/],
    ['a madeBy naming no earlier step', (p: any) => { p.steps[1].requires = [{ kind: 'Secret', name: 's', namespace: p.namespace, keys: ['a'], ifMissing: 'fail', madeBy: 'setup' }]; },
      /steps\[1\] \(setup\)\.requires\[0\]\.madeBy "setup" is not an earlier step of the plan/],
  ])('refuses %s', (_what, fn, message) => {
    expect(() => readPlan(mutate(fn))).toThrow(PlanError);
    expect(() => readPlan(mutate(fn))).toThrow(message);
  });

  // Malformed uyuni.plan: refused with the field named, never a TypeError further on.
  const whole = (value: unknown) => () => value;
  it.each([
    ['null', whole(null), /uyuni\.plan: must hold a JSON object \(the plan index\), not null$/],
    ['a list', whole([]), /must hold a JSON object \(the plan index\), not a list$/],
    ['a step that is null', (p: any) => { p.steps = [null]; }, /uyuni\.plan: steps\[0\] must be an object, not null$/],
    ['no steps', (p: any) => { p.steps = []; }, /uyuni\.plan: steps must be a non-empty list$/],
    ['an unknown action type', (p: any) => { p.steps[1].actions = [{ type: 'restart', object: p.steps[1].objects[0] }]; },
      /steps\[1\] \(setup\)\.actions\[0\]\.type must be one of "scale", "delete", not "restart"/],
    ['a scale action without replicas', (p: any) => { p.steps[1].actions = [{ type: 'scale', object: p.steps[1].objects[0] }]; },
      /steps\[1\] \(setup\)\.actions\[0\]\.replicas is required/],
    ['an unknown gate type', (p: any) => { p.steps[1].gates = [{ type: 'greater', fact: 'x', message: 'm' }]; },
      /steps\[1\] \(setup\)\.gates\[0\]\.type must be one of "compare-versions", "equals", "not-equals", "present", not "greater"/],
    ['a gate with an unknown operator', (p: any) => { p.steps[1].gates = [{ type: 'compare-versions', left: { fact: 'a' }, op: '=>', right: { value: '1' }, message: 'm' }]; },
      /steps\[1\] \(setup\)\.gates\[0\]\.op must be one of/],
    ['a requirement without a name', (p: any) => { p.steps[0].requires = [{ kind: 'Secret', namespace: 'x', keys: ['a'], ifMissing: 'fail' }]; },
      /steps\[0\] \(namespace\)\.requires\[0\]\.name is required/],
    ['a requirement of another kind', (p: any) => { p.steps[0].requires = [{ kind: 'Pod', name: 'p', namespace: 'x', keys: [], ifMissing: 'fail' }]; },
      /steps\[0\] \(namespace\)\.requires\[0\]\.kind must be one of "Secret", "ConfigMap", not "Pod"/],
    ['a wait without an object name', (p: any) => { delete p.steps[1].waits[0].object.name; },
      /steps\[1\] \(setup\)\.waits\[0\] needs an object and a "for" of .* \(object\.name is required\)/],
    ['an object ref without a kind', (p: any) => { delete p.steps[0].objects[0].kind; }, /steps\[0\] \(namespace\)\.objects\[0\]\.kind is required/],
  ])('refuses %s, naming the field', (_what, fn, message) => {
    const dir = mutateWhole(fn);
    expect(() => readPlan(dir)).toThrow(PlanError);
    expect(() => readPlan(dir)).toThrow(message);
  });

  it('lists the first problems of a plan with many, and how many more', () => {
    const dir = mutate((p) => { for (const s of p.steps) { delete s.timeoutSeconds; delete s.description; } });
    expect(() => readPlan(dir)).toThrow(/steps\[0\] \(namespace\)\.description is required; steps\[0\] \(namespace\)\.timeoutSeconds must be a positive number; steps\[1\] \(setup\)\.description is required; and 1 more$/);
  });

  it('ignores fields it does not know (docs/plan-format.md, Compatibility)', () => {
    expect(readPlan(mutate((p) => { p.future = { x: 1 }; p.steps[0].hint = 'y'; p.steps[0].waits[0].extra = true; })).steps).toHaveLength(2);
  });
});

/** Like `mutate`, but `fn` may return a whole new document. */
function mutateWhole(fn: (plan: any) => unknown): string {
  let doc: unknown;
  const dir = mutate((p) => { doc = fn(p); });
  if (doc !== undefined) fs.writeFileSync(path.join(dir, 'uyuni.plan'), JSON.stringify(doc));
  return dir;
}

describe('the plan directory an argument names', () => {
  const tmp = () => fs.mkdtempSync(path.join(require('os').tmpdir(), 'uyuni-plandir-'));

  it('takes the path of the index for its directory, and a directory as it is', () => {
    const dir = mutate(() => {});
    expect(planDirOf(path.join(dir, PLAN_INDEX))).toBe(dir);
    expect(planDirOf(dir)).toBe(dir);
    expect(readPlan(planDirOf(path.join(dir, PLAN_INDEX))).name).toBe(readPlan(dir).name);
  });

  it('says a directory of the 0.1 format (plan.json) needs a new synth, for the directory and for its plan.json', () => {
    const dir = tmp();
    fs.writeFileSync(path.join(dir, LEGACY_PLAN_INDEX), '{}');
    for (const arg of [dir, path.join(dir, LEGACY_PLAN_INDEX)]) {
      expect(() => readPlan(planDirOf(arg))).toThrow(`${dir}: synthesized by an older uyuni-cdk (its index is plan.json, now uyuni.plan): synthesize again`);
    }
  });

  it('says the agent directory holds units, not a plan', () => {
    const dir = tmp();
    fs.writeFileSync(path.join(dir, 'uyuni-cdk-agent.service'), '[Unit]\n');
    expect(() => readPlan(dir)).toThrow(`${dir}: holds systemd unit files, not a plan`);
  });

  it('names the plans of a parent directory such as dist/', () => {
    const parent = tmp();
    const plan = writePlan([{ name: 'namespace', objects: [namespace()] }], { dir: path.join(parent, 'install') });
    fs.mkdirSync(path.join(parent, 'agent'));
    expect(() => readPlan(parent)).toThrow(`${parent}: not a plan directory but holds plans: ${plan}`);
  });

  it('asks for a synth where nothing of ours is', () => {
    const dir = tmp();
    expect(() => readPlan(dir)).toThrow(`${dir}: not a plan directory (no uyuni.plan here): synthesize first`);
  });
});
