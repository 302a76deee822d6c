import * as fs from 'fs';
import * as path from 'path';
import { PlanError, readPlan } from '../../../src/plan/reader';
import { job, namespace, writePlan } from '../plans';

function mutate(fn: (plan: any) => void): string {
  const dir = writePlan([{ name: 'namespace', objects: [namespace()] }, { name: 'setup', objects: [job('setup')] }]);
  const file = path.join(dir, 'plan.json');
  const plan = JSON.parse(fs.readFileSync(file, 'utf8'));
  fn(plan);
  fs.writeFileSync(file, JSON.stringify(plan));
  return dir;
}

describe('reading plan.json (bad input is exit 2)', () => {
  it('accepts a well-formed plan', () => {
    expect(readPlan(mutate(() => {})).steps.map((s) => s.name)).toEqual(['namespace', 'setup']);
  });

  it.each([
    ['an unknown wait condition', (p: any) => { p.steps[1].waits[0].for = 'finished'; }, /waits\[0\] needs an object and a "for"/],
    ['a missing timeout', (p: any) => { delete p.steps[1].timeoutSeconds; }, /timeoutSeconds must be a positive number/],
    ['gates that are not a list', (p: any) => { p.steps[0].gates = {}; }, /gates must be a list/],
    ['a step name used twice', (p: any) => { p.steps[1].name = 'namespace'; }, /used twice/],
    ['no namespace', (p: any) => { delete p.namespace; }, /namespace and selector are required/],
    ['another format version', (p: any) => { p.formatVersion = 2; }, /formatVersion 2 is not supported/],
    ['a step file that is not there', (p: any) => { p.steps[0].file = 'nope.yaml'; }, /does not exist/],
  ])('refuses %s', (_what, fn, message) => {
    expect(() => readPlan(mutate(fn))).toThrow(PlanError);
    expect(() => readPlan(mutate(fn))).toThrow(message);
  });
});
