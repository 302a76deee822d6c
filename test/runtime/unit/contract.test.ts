import { EXIT } from '../../../src/plan/exit-codes';
import { canonicalJson, hashSpec, sameSpecHash } from '../../../src/plan/spec-hash';
import { defaultWait, isWaitCondition, WAIT_CONDITIONS } from '../../../src/plan/waits';
import { BadInput, MissingKind, Unreachable } from '../../../src/kube/api-errors';
import { StepFailed } from '../../../src/runtime/core/errors';
import { specHash } from '../../../src/runtime/core/manifests';
import { RULES } from '../../../src/runtime/readiness';
import { decideJob } from '../../../src/runtime/decide/job-decision';

describe('the wait conditions: one list in src/plan, a rule for each in the runtime', () => {
  it('files every rule under its own condition, and every condition has one', () => {
    expect(Object.keys(RULES).sort()).toEqual([...WAIT_CONDITIONS].sort());
    for (const c of WAIT_CONDITIONS) expect(RULES[c].wait.for).toBe(c);
  });

  it.each([
    [{ apiVersion: 'batch/v1', kind: 'Job' }, 'complete'],
    [{ apiVersion: 'apps/v1', kind: 'Deployment' }, 'rollout'],
    [{ apiVersion: 'v1', kind: 'PersistentVolumeClaim' }, 'bound'],
    [{ apiVersion: 'cert-manager.io/v1', kind: 'Certificate' }, 'ready'],
    [{ apiVersion: 'cert-manager.io/v1', kind: 'ClusterIssuer' }, 'ready'],
    [{ apiVersion: 'example.org/v1', kind: 'Certificate' }, 'exists'],
    [{ apiVersion: 'v1', kind: 'Service' }, 'exists'],
  ])('picks the default wait of %j: %s', (ref, want) => {
    expect(defaultWait(ref)).toBe(want);
  });

  it('never picks deleted or scaled-down by default (they follow actions)', () => {
    expect(isWaitCondition('deleted') && isWaitCondition('scaled-down')).toBe(true);
    expect(isWaitCondition('finished')).toBe(false);
  });
});

describe('the spec hash: one format on both sides', () => {
  it('is sha256: and the digest of the canonical JSON (keys sorted, undefined dropped)', () => {
    expect(canonicalJson({ b: [1, { d: 1, c: undefined }], a: 'x' })).toBe('{"a":"x","b":[1,{"d":1}]}');
    expect(hashSpec({ b: 1, a: 2 })).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(hashSpec({ b: 1, a: 2 })).toBe(hashSpec({ a: 2, b: 1 }));
  });

  it('hashes a hand-written Job without the annotation as synth would', () => {
    const spec = { template: { spec: { containers: [{ name: 'c', image: 'i' }] } } };
    expect(specHash({ apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'j' }, spec } as never)).toBe(hashSpec(spec));
  });

  it('takes a bare digest (stamped before the prefix) for the same hash: such a Job is still skipped', () => {
    const h = hashSpec({ a: 1 });
    expect(sameSpecHash(h.slice('sha256:'.length), h)).toBe(true);
    expect(sameSpecHash(undefined, h)).toBe(false);
    const old = { metadata: { name: 'j', annotations: { 'uyuni-cdk.io/spec-hash': h.slice('sha256:'.length) } }, status: { conditions: [{ type: 'Complete', status: 'True' }] } };
    expect(decideJob(old, h, false, 'setup').action).toBe('skip');
  });
});

describe('the exit codes: one table', () => {
  it('is what the runtime errors carry', () => {
    expect(new StepFailed('s', 'm').exitCode).toBe(EXIT.stepFailed);
    expect(new BadInput('m').exitCode).toBe(EXIT.badInput);
    expect(new Unreachable('m').exitCode).toBe(EXIT.unreachable);
    expect(new MissingKind('cert-manager.io/v1', 'Certificate').exitCode).toBe(EXIT.stepFailed);
    expect(EXIT).toEqual({ ok: 0, stepFailed: 1, badInput: 2, unreachable: 3, incomplete: 4, planChanges: 2, interrupted: 130, hangup: 129, terminated: 143 });
  });
});
