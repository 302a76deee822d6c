/**
 * `plan` predicts what `run` does: for every row of the resume table in docs/runtime.md (and
 * `--rerun`), `plan` then `run` on the same cluster state, and the Job's planned action must be
 * what the run did: created, skipped, attached to, re-created, or refused with the same reason.
 */
import { startSimulator, Simulator } from '../../sim';
import { cli } from './harness';
import { job, namespace, NS, writePlan } from '../plans';

let sim: Simulator;
afterEach(async () => {
  await sim?.stop();
});

const missingConfig = { kind: 'ConfigMap' as const, name: 'site', namespace: NS, keys: ['a'], ifMissing: 'fail' as const, message: `create it: kubectl -n ${NS} create configmap site --from-literal=a=1` };

/** A plan whose `work` step holds Job `work`; a later step (Job `later`) may require a ConfigMap that is missing. */
function plan(script: string, opts: { dir?: string; later?: boolean; laterRequires?: boolean } = {}): string {
  return writePlan([
    { name: 'namespace', objects: [namespace()] },
    { name: 'work', objects: [job('work', script)] },
    ...(opts.later ? [{ name: 'later', objects: [job('later')], requires: opts.laterRequires === false ? [] : [missingConfig] }] : []),
  ], { dir: opts.dir });
}

/** What a run did with Job `work`, named as `plan` names its actions. */
function whatRunDid(out: string): { action: string; reason?: string } {
  const events = out.trim().split('\n').map((l) => JSON.parse(l));
  const apply = events.find((e) => e.type === 'apply' && e.object.kind === 'Job' && e.object.name === 'work');
  const skip = events.find((e) => e.type === 'step-skip' && e.step === 'work');
  const failed = events.find((e) => e.type === 'step-failed' && e.step === 'work');
  if (skip) return { action: 'skip-complete' };
  if (failed && !apply) return { action: /failed in an earlier run/.test(failed.reason) ? 'failed' : 'blocked-immutable', reason: failed.reason };
  const result: Record<string, string> = { created: 'create', 're-created': 'recreate', 'already running with the same spec: attached': 'running' };
  return { action: result[apply?.result] ?? `unknown: ${JSON.stringify(apply)}` };
}

async function planThenRun(dir: string, opts: Record<string, unknown> = {}, runOpts: Record<string, unknown> = {}): Promise<{ planned: string; ran: string }> {
  const p = JSON.parse((await cli('plan', dir, { kubeconfig: sim.kubeconfigPath, output: 'json', ...opts })).out);
  const planned = p.steps[1].objects[0];
  const r = await cli('run', dir, { kubeconfig: sim.kubeconfigPath, output: 'json', ...opts, ...runOpts });
  const did = whatRunDid(r.out);
  // A refusal: plan names the step run stops at, with run's own reason.
  if (did.reason) {
    expect(r.code).toBe(1);
    expect(p.stopsAt).toEqual({ step: 'work', reason: `Job/work (${NS}): ${did.reason.replace(/^step work: /, '')}` });
  } else if (p.stopsAt) {
    expect(p.stopsAt.step).not.toBe('work');
  }
  return { planned: planned.action, ran: did.action };
}

describe('plan predicts run, for every row of the resume table', () => {
  it('none: created', async () => {
    sim = await startSimulator();
    expect(await planThenRun(plan('echo one'))).toEqual({ planned: 'create', ran: 'create' });
  });

  it('Complete, same hash: the step is skipped', async () => {
    sim = await startSimulator();
    const dir = plan('echo one');
    expect((await cli('run', dir, { kubeconfig: sim.kubeconfigPath })).code).toBe(0);
    expect(await planThenRun(dir)).toEqual({ planned: 'skip-complete', ran: 'skip-complete' });
  });

  it('running, same hash: attached to', async () => {
    sim = await startSimulator({ jobs: { work: { durationMs: 150_000 } } });
    const dir = plan('sleep 60');
    // The first run gives up while the Job still runs (its deadline), as an interrupted run leaves it.
    // 0.8 s: the lock and the ownership checks come before the first step; the Job runs 3 s
    expect((await cli('run', dir, { kubeconfig: sim.kubeconfigPath, timeout: 0.8 })).code).toBe(1);
    expect(sim.get('batch/v1', 'Job', 'work', NS).status.active).toBe(1);
    expect(await planThenRun(dir)).toEqual({ planned: 'running', ran: 'running' });
  });

  it('Failed, same hash: refused with the Job\'s failure', async () => {
    sim = await startSimulator({ jobs: { work: { outcome: 'fail', exitCode: 3 } } });
    const dir = plan('exit 3');
    expect((await cli('run', dir, { kubeconfig: sim.kubeconfigPath })).code).toBe(1);
    expect(await planThenRun(dir)).toEqual({ planned: 'failed', ran: 'failed' });
  });

  it('other hash, Complete, from a run that finished: re-created, a destructive change that asks first', async () => {
    sim = await startSimulator();
    const dir = plan('echo one');
    expect((await cli('run', dir, { kubeconfig: sim.kubeconfigPath })).code).toBe(0);
    plan('echo two', { dir });
    const uid = sim.get('batch/v1', 'Job', 'work', NS).metadata.uid;
    const refused = await cli('run', dir, { kubeconfig: sim.kubeconfigPath });
    expect(refused.code).toBe(2);
    expect(refused.out).toMatch(/recreate-job\s+Job\/work \(uyuni-test\)\s+\[work\]/);
    expect(sim.get('batch/v1', 'Job', 'work', NS).metadata.uid).toBe(uid);
    expect(await planThenRun(dir, {}, { yes: true })).toEqual({ planned: 'recreate', ran: 'recreate' });
  });

  it('other hash, otherwise (a run that did not finish): refused, --rerun re-creates', async () => {
    sim = await startSimulator({ jobs: { later: { outcome: 'fail' } } });
    const dir = plan('echo one', { later: true, laterRequires: false });
    // The work Job completes, then the run stops at the failed Job later: not a finished run.
    expect((await cli('run', dir, { kubeconfig: sim.kubeconfigPath })).code).toBe(1);
    plan('echo two', { dir, later: true, laterRequires: false });
    expect(await planThenRun(dir)).toEqual({ planned: 'blocked-immutable', ran: 'blocked-immutable' });
    expect(await planThenRun(dir, { rerun: ['work'] }, { yes: true })).toEqual({ planned: 'recreate', ran: 'recreate' });
  });
});

describe('plan checks the requirements and honours --namespace in every hint', () => {
  it('flags a missing ConfigMap as missing with the command that creates it, in the namespace given', async () => {
    sim = await startSimulator();
    const dir = plan('echo one', { later: true });
    const r = await cli('plan', dir, { kubeconfig: sim.kubeconfigPath, namespace: 'mig' });
    expect(r.out).toContain('requires  missing     ConfigMap mig/site  (is missing: create it: kubectl -n mig create configmap site --from-literal=a=1)');
    expect(r.out).toContain('run would refuse before any write:\n  first: namespace mig does not exist yet: make it first with: kubectl create namespace mig');
    expect(r.out).toContain('\n  - ConfigMap mig/site (step later) is missing: create it: kubectl -n mig create configmap site');
    expect(r.out).not.toContain(`-n ${NS}`);
    const code = await cli('plan', dir, { kubeconfig: sim.kubeconfigPath, namespace: 'mig', detailedExitcode: true });
    expect(code.code).toBe(1);
    const run = await cli('run', dir, { kubeconfig: sim.kubeconfigPath, namespace: 'mig' });
    expect(run.code).toBe(1);
    expect(run.err + run.out).toContain('kubectl -n mig create configmap site');
  });
});
