/**
 * Smaller items of issue 38 (point 8) around plan and run output.
 */
import * as fs from 'fs';
import * as path from 'path';
import { startSimulator, Simulator } from '../../sim';
import { cli, ROOT, spawnCli, tmpDir } from './harness';
import { job, namespace, NS, service, writePlan } from '../plans';

const dist = (p: string) => path.join(ROOT, 'dist', p);
const count = (text: string, s: string) => text.split(s).length - 1;

let sim: Simulator;
afterEach(async () => {
  await sim?.stop();
});

describe('plan', () => {
  it('an action on an object an earlier step makes says so, once: `delete  PersistentVolumeClaim/…  (made by step volumes of this run)`', async () => {
    sim = await startSimulator();
    const p = await cli('plan', dist('migrate'), { kubeconfig: sim.kubeconfigPath });
    expect(p.out).toContain('  action    delete   PersistentVolumeClaim/migration-data (uyuni)  (made by step volumes of this run)\n');
    expect(p.out).not.toContain('delete delete');
    expect(p.out).toMatch(/action {4}not done scale to 0 Deployment\/uyuni \(uyuni\) {2}\(not present, nothing to scale\)/);
  });

  it('a missing object several steps need is listed once, naming the steps (dist/proxy on an empty cluster)', async () => {
    sim = await startSimulator();
    const p = await cli('plan', dist('proxy'), { kubeconfig: sim.kubeconfigPath });
    const refusal = p.out.slice(p.out.indexOf('run would refuse before any write:'));
    expect(count(refusal, '- ConfigMap uyuni-proxy/proxy-configmap ')).toBe(1);
    expect(refusal).toContain('- ConfigMap uyuni-proxy/proxy-configmap (steps certs, proxy, tftp) is missing');
    expect(refusal).toContain('- Secret uyuni-proxy/httpd (steps certs, proxy) is missing');
    expect(refusal).toContain('- Secret uyuni-proxy/ssh (step proxy) is missing');
    const r = await cli('run', dist('proxy'), { kubeconfig: sim.kubeconfigPath, yes: true });
    expect(r.code).toBe(1);
    expect(r.err).toContain('3 requirements are not met');
    expect(count(r.err, 'ConfigMap uyuni-proxy/proxy-configmap')).toBe(1);
  });
});

describe('plan --output json', () => {
  it("names each object, action, requirement and unmet one as run's JSON events do: {kind, name, namespace}", async () => {
    sim = await startSimulator();
    const json = JSON.parse((await cli('plan', dist('migrate'), { kubeconfig: sim.kubeconfigPath, output: 'json' })).out);
    const step = (name: string) => json.steps.find((x: any) => x.name === name);
    expect(step('namespace').objects[0]).toMatchObject({ object: 'Namespace/uyuni', id: { kind: 'Namespace', name: 'uyuni' } });
    expect(step('volumes').objects[0].id).toEqual({ kind: 'PersistentVolumeClaim', name: 'var-cobbler', namespace: 'uyuni' });
    expect(step('cleanup').actions.find((a: { id: { kind: string } }) => a.id.kind === 'PersistentVolumeClaim').id).toEqual({ kind: 'PersistentVolumeClaim', name: 'migration-data', namespace: 'uyuni' });
    expect(step('data-sync').requires[0].id).toEqual({ kind: 'Secret', name: 'uyuni-migration-key', namespace: 'uyuni' });
    expect(json.unmet[0].id).toEqual({ kind: 'Secret', name: 'uyuni-migration-key', namespace: 'uyuni' });
    // the same shape as a run's events
    const dir = writePlan([{ name: 'namespace', objects: [namespace()] }, { name: 'server', objects: [service('uyuni')] }]);
    const planned = JSON.parse((await cli('plan', dir, { kubeconfig: sim.kubeconfigPath, output: 'json' })).out);
    const run = (await cli('run', dir, { kubeconfig: sim.kubeconfigPath, output: 'json' })).out.trim().split('\n').map((l) => JSON.parse(l));
    expect(run.find((e) => e.type === 'apply' && e.object.kind === 'Service').object).toEqual(planned.steps[1].objects[0].id);
  });
});

describe('status of a folder of many plans (a temp folder)', () => {
  it('counts them and names three, not every one in one line', async () => {
    sim = await startSimulator();
    const folder = tmpDir('uyuni-many-');
    for (let i = 0; i < 12; i++) writePlan([{ name: 'namespace', objects: [namespace()] }], { dir: path.join(folder, `uyuni-plan-${String(i).padStart(2, '0')}`) });
    const r = await cli('status', folder, { kubeconfig: sim.kubeconfigPath });
    expect(r.code).toBe(2);
    const p = (i: string) => path.join(folder, `uyuni-plan-${i}`);
    expect(r.err).toBe(`uyuni-cdk: ${folder}: not a plan directory but holds 12 plans, e.g. ${p('00')}, ${p('01')}, ${p('02')}: pass one of them\n`);
  });
});

describe('run series', () => {
  const state = tmpDir('uyuni-state-');
  const saved = process.env.XDG_STATE_HOME;
  beforeAll(() => { process.env.XDG_STATE_HOME = state; });
  afterAll(() => {
    if (saved === undefined) delete process.env.XDG_STATE_HOME;
    else process.env.XDG_STATE_HOME = saved;
  });
  /** The series directories of the plan and what is in each (attempts; series.json left out). */
  const series = () => {
    const runs = path.join(state, 'uyuni-cdk', NS, 'install');
    if (!fs.existsSync(runs)) return {};
    return Object.fromEntries(fs.readdirSync(runs).map((s) => [s, fs.readdirSync(path.join(runs, s)).filter((f) => f !== 'series.json').length]));
  };

  it('a run refused before its first step is no attempt of the series, and opens none; the closing line counts the series', async () => {
    sim = await startSimulator({ jobs: { work: { outcome: 'fail', exitCode: 2, logs: ['broken'] } } });
    const needs = [{ kind: 'ConfigMap' as const, name: 'site', namespace: NS, keys: ['a'], ifMissing: 'fail' as const }];
    const dir = writePlan([{ name: 'namespace', objects: [namespace()] }, { name: 'work', objects: [job('work')], requires: needs }]);
    const refused = await cli('run', dir, { kubeconfig: sim.kubeconfigPath, runDir: undefined });
    expect(refused.err).toContain('refused before any write');
    expect(series()).toEqual({});
    sim.put({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'site', namespace: NS }, data: { a: '1' } });
    // a run whose step fails: the first attempt of a series
    expect((await cli('run', dir, { kubeconfig: sim.kubeconfigPath, runDir: undefined })).code).toBe(1);
    expect(Object.values(series())).toEqual([1]);
    // refused meanwhile (the site ConfigMap gone again): still one attempt
    await fetch(`${sim.url}/api/v1/namespaces/${NS}/configmaps/site`, { method: 'DELETE' });
    expect((await cli('run', dir, { kubeconfig: sim.kubeconfigPath, runDir: undefined })).err).toContain('refused before any write');
    expect(Object.values(series())).toEqual([1]);

    // the resume that finishes it: its closing line counts this attempt, then the series (the refusal not in it)
    sim.put({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'site', namespace: NS }, data: { a: '1' } });
    sim.setJob('work', { outcome: 'succeed', logs: ['fixed'] });
    const done = await cli('run', dir, { kubeconfig: sim.kubeconfigPath, runDir: undefined, rerun: ['work'] });
    expect(done.code).toBe(0);
    expect(Object.values(series())).toEqual([2]);
    expect(done.out).toMatch(/Run complete in [\d.]+s: 0 created, 0 updated, 0 deleted, 0 stopped, 1 Job run, 1 unchanged \(this attempt\)\. Over its series of 2 attempts: 1 created, 0 updated, 0 deleted, 0 stopped, 2 Jobs run, 1 unchanged\.\n/);
  });
});

describe('saved plans', () => {
  it('record the plan directory relative to the saved file: run FILE works from another directory, the two moved together', async () => {
    sim = await startSimulator();
    const root = tmpDir('uyuni-saved-');
    const dir = writePlan([{ name: 'namespace', objects: [namespace()] }, { name: 'server', objects: [service('uyuni')] }], { dir: path.join(root, 'dist', 'install') });
    fs.mkdirSync(path.join(root, 'plans'));
    const file = path.join(root, 'plans', 'install.plan');
    expect((await cli('plan', dir, { kubeconfig: sim.kubeconfigPath, out: file })).code).toBe(0);
    expect(JSON.parse(fs.readFileSync(file, 'utf8')).planDir).toBe(path.join('..', 'dist', 'install'));
    // the checkout moved: the saved plan and its plan directory go together
    const moved = `${root}-moved`;
    fs.renameSync(root, moved);
    const r = await spawnCli(['run', path.join(moved, 'plans', 'install.plan'), '--kubeconfig', sim.kubeconfigPath, '--run-dir', tmpDir()]).done;
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(sim.get('v1', 'Service', 'uyuni', NS)).toBeDefined();
  });
});
