/**
 * Scriptable runs (issue 15 item 4): `status` exit codes, `run`'s first failure naming its log
 * directory and the exact next command, `-o json` being events.jsonl, and the default run
 * directory in the user's state directory.
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { EXIT } from '../../src/plan/exit-codes';
import { defaultRunsDir } from '../../src/plan/run-defaults';
import { startSimulator, Simulator } from '../sim';
import { BIN, cli, spawnCli, tmpDir } from '../runtime/e2e/harness';
import { deployment, job, namespace, NS, pvc, writePlan } from '../runtime/plans';

let sim: Simulator | undefined;
afterEach(async () => {
  await sim?.stop();
  sim = undefined;
});

/** A Job that fails at its first failed pod (no retries to sit through). */
const setupJob = () => {
  const j = job('setup');
  return { ...j, spec: { ...j.spec, backoffLimit: 0 } };
};

const steps = () => [
  { name: 'namespace', objects: [namespace()] },
  { name: 'volumes', objects: [pvc('var-cache')] },
  { name: 'setup', objects: [setupJob()] },
  { name: 'server', objects: [deployment('uyuni', 1)] },
];

const states = (out: string) => JSON.parse(out).steps.map((s: { state: string }) => s.state);

describe('uyuni-cdk status exit codes', () => {
  it('exits 4 while steps are still to do, 0 once every step is done, 1 when a step failed', async () => {
    sim = await startSimulator({ jobs: { setup: { outcome: 'fail', exitCode: 3 } } });
    const dir = writePlan(steps());
    const before = await cli('status', dir, { kubeconfig: sim.kubeconfigPath, output: 'json' });
    expect(states(before.out)).toEqual(['not-applied', 'not-applied', 'not-applied', 'not-applied']);
    expect(before.code).toBe(EXIT.incomplete);

    expect((await cli('run', dir, { kubeconfig: sim.kubeconfigPath })).code).toBe(EXIT.stepFailed);
    const failed = await cli('status', dir, { kubeconfig: sim.kubeconfigPath, output: 'json' });
    expect(states(failed.out)).toEqual(['done', 'done', 'failed', 'not-applied']);
    expect(failed.code).toBe(EXIT.stepFailed);

    sim.setJob('setup', { outcome: 'succeed' });
    expect((await cli('run', dir, { kubeconfig: sim.kubeconfigPath, rerun: ['setup'] })).code).toBe(EXIT.ok);
    const done = await cli('status', dir, { kubeconfig: sim.kubeconfigPath });
    expect(done.out.split('\n').filter((l) => /\sdone\s/.test(l))).toHaveLength(4);
    expect(done.code).toBe(EXIT.ok);
  });

  it('documents them in --help', () => {
    const help = spawnSync(process.execPath, [BIN, 'status', '--help'], { encoding: 'utf8' }).stdout;
    expect(help).toMatch(/Exit codes:\n {2}0 {2}every step done\n {2}1 {2}a step failed\n {2}4 {2}not finished/);
  });
});

describe("run's first failure", () => {
  it('names the log directory and the exact command that continues, and that command does', async () => {
    sim = await startSimulator({ jobs: { setup: { outcome: 'fail', exitCode: 2, logs: ['ERROR: no database'] } } });
    const dir = writePlan(steps());
    const runDir = path.join(tmpDir(), 'first');
    const r = await cli('run', dir, { kubeconfig: sim.kubeconfigPath, context: 'sim', namespace: NS, runDir });
    expect(r.code).toBe(EXIT.stepFailed);
    const next = `uyuni-cdk run ${dir} -n ${NS} --kubeconfig ${sim.kubeconfigPath} --context sim --rerun setup`;
    expect(r.err).toContain(`\n  logs and events: ${runDir}\n  next: fix the cause, then ${next}\n`);
    expect(fs.readFileSync(path.join(runDir, 'setup', fs.readdirSync(path.join(runDir, 'setup'))[0]), 'utf8')).toContain('ERROR: no database');
    const done = JSON.parse(fs.readFileSync(path.join(runDir, 'events.jsonl'), 'utf8').trim().split('\n').pop()!);
    expect(done).toMatchObject({ type: 'run-done', status: 'failed', exitCode: 1, runDir, next });

    // the command, as printed, runs the plan to its end once the cause is gone
    sim.setJob('setup', { outcome: 'succeed' });
    const [, verb, planDir, ...args] = next.split(' ');
    const again = spawnCli([verb, planDir, ...args, '--run-dir', tmpDir()]);
    const out = await again.done;
    expect(out.err).toBe('');
    expect(out.code).toBe(EXIT.ok);
    expect(out.out).toContain('--rerun setup: Job setup was failed');
  });

  it('suggests the same command without --rerun when the failed step has no Job (it resumes by itself)', async () => {
    sim = await startSimulator();
    // said made by an earlier step (so not refused before the first write), which did not make it: the step fails
    const requires = [{ kind: 'Secret' as const, name: 'uyuni-ca', namespace: NS, keys: ['tls.crt'], ifMissing: 'fail' as const, message: 'create Secret uyuni-ca', madeBy: 'namespace' }];
    const dir = writePlan([{ name: 'namespace', objects: [namespace()] }, { name: 'server', objects: [deployment('uyuni', 1)], requires }]);
    const r = await cli('run', dir, { kubeconfig: sim.kubeconfigPath });
    expect(r.code).toBe(EXIT.stepFailed);
    expect(r.err).toContain(`next: fix the cause, then uyuni-cdk run ${dir} -n ${NS} --kubeconfig ${sim.kubeconfigPath}\n`);
  });
});

describe('-o json and events.jsonl: one stream', () => {
  it('prints exactly the lines events.jsonl records, waiting events and heartbeats included', async () => {
    sim = await startSimulator({ jobs: { setup: { durationMs: 60_000, logs: Array.from({ length: 20 }, (_, i) => `line ${i}`) } } });
    const runDir = tmpDir();
    const r = await cli('run', writePlan(steps()), { kubeconfig: sim.kubeconfigPath, output: 'json', progressInterval: 0.1, runDir });
    expect(r.code).toBe(EXIT.ok);
    const printed = r.out.split('\n').filter(Boolean);
    const recorded = fs.readFileSync(path.join(runDir, 'events.jsonl'), 'utf8').split('\n').filter(Boolean);
    expect(printed).toEqual(recorded);
    const types = new Set(recorded.map((l) => JSON.parse(l).type));
    for (const t of ['run-start', 'step-start', 'apply', 'waiting', 'log', 'step-done', 'run-done']) expect(types).toContain(t);
    expect(recorded.filter((l) => JSON.parse(l).type === 'waiting').length).toBeGreaterThan(3);
  });

  it('is one stream also for a failed run and a --rerun that waits for the old Job to go', async () => {
    sim = await startSimulator({ jobs: { setup: { outcome: 'fail', durationMs: 20_000, logs: ['one', 'two', 'ERROR'] } } });
    const dir = writePlan(steps());
    for (const rerun of [[], ['setup']]) {
      const runDir = tmpDir();
      const r = await cli('run', dir, { kubeconfig: sim.kubeconfigPath, output: 'json', progressInterval: 0.1, runDir, rerun });
      expect(r.code).toBe(EXIT.stepFailed);
      const recorded = fs.readFileSync(path.join(runDir, 'events.jsonl'), 'utf8').split('\n').filter(Boolean);
      expect(r.out.split('\n').filter(Boolean)).toEqual(recorded);
      expect(recorded.map((l) => JSON.parse(l).type)).toEqual(expect.arrayContaining(['waiting', 'log', 'step-failed', 'run-done']));
    }
  });
});

describe('the default run directory', () => {
  it('is $XDG_STATE_HOME/uyuni-cdk/<namespace>/<plan>/<series>/<run id>/, outside the working directory and the plan', async () => {
    sim = await startSimulator();
    const state = tmpDir('uyuni-state-');
    const dir = writePlan(steps());
    const r = await spawnCli(['run', dir, '--kubeconfig', sim.kubeconfigPath, '-n', 'other-ns', '-o', 'json'], { XDG_STATE_HOME: state }).done;
    expect(r.code).toBe(EXIT.ok);
    const start = JSON.parse(r.out.split('\n')[0]);
    // a first run starts its series, named after it
    expect(start.runDir).toBe(path.join(state, 'uyuni-cdk', 'other-ns', 'install', start.runId, start.runId));
    expect(fs.existsSync(path.join(start.runDir, 'events.jsonl'))).toBe(true);
    expect(fs.readdirSync(dir).some((f) => f.startsWith('runs'))).toBe(false);
  });

  it('holds one directory per run series: the resumes of a stopped run are its attempts, the run after the finished one a new series', async () => {
    sim = await startSimulator({ jobs: { setup: { outcome: 'fail', exitCode: 3, logs: ['ERROR: first attempt'] } } });
    const state = tmpDir('uyuni-state-');
    const dir = writePlan(steps());
    const run = async (...args: string[]) => {
      const r = await spawnCli(['run', dir, '--kubeconfig', sim!.kubeconfigPath, '-o', 'json', ...args], { XDG_STATE_HOME: state }).done;
      return { code: r.code, runDir: JSON.parse(r.out.split('\n')[0]).runDir as string };
    };
    const runs = path.join(state, 'uyuni-cdk', NS, 'install');
    const failed = await run();
    expect(failed.code).toBe(EXIT.stepFailed);
    sim.setJob('setup', { outcome: 'succeed', logs: ['second attempt'] });
    const resumed = await run('--rerun', 'setup');
    expect(resumed.code).toBe(EXIT.ok);
    const again = await run();
    expect(again.code).toBe(EXIT.ok);
    // the failed run and its resume: one series; the re-run of the finished plan: the next
    expect(path.dirname(resumed.runDir)).toBe(path.dirname(failed.runDir));
    expect(path.dirname(again.runDir)).not.toBe(path.dirname(failed.runDir));
    expect(fs.readdirSync(runs).sort()).toEqual([path.basename(path.dirname(failed.runDir)), path.basename(path.dirname(again.runDir))].sort());
    expect(fs.readdirSync(path.dirname(failed.runDir)).filter((f) => f !== 'series.json')).toHaveLength(2);
    // `logs` of a step whose pods are gone: the newest attempt that saved them, in any series
    for (const p of sim.list('v1', 'Pod', NS)) await fetch(`${sim.url}/api/v1/namespaces/${NS}/pods/${p.metadata.name}?gracePeriodSeconds=0`, { method: 'DELETE' });
    const logs = await spawnCli(['logs', dir, 'setup', '--kubeconfig', sim.kubeconfigPath], { XDG_STATE_HOME: state }).done;
    expect(logs.code).toBe(EXIT.ok);
    expect(logs.out).toContain('second attempt');
    expect(logs.out).not.toContain('first attempt');
    expect(logs.err).toContain(resumed.runDir);
  });

  it('run -o json | head: the run goes on when its stdout is closed, to the end, its events in the run directory', async () => {
    sim = await startSimulator({ jobs: { setup: { durationMs: 20_000 } } });
    const dir = writePlan(steps());
    const runDir = tmpDir('uyuni-run-');
    const { child, done } = spawnCli(['run', dir, '--kubeconfig', sim.kubeconfigPath, '-o', 'json', '--run-dir', runDir]);
    // the reader reads the first event (run-start) and goes, as `head -1` does
    let first = '';
    await new Promise<void>((resolve) => child.stdout!.once('data', (d) => { first = String(d); child.stdout!.destroy(); resolve(); }));
    expect(JSON.parse(first.split('\n')[0]).type).toBe('run-start');
    const r = await done;
    expect(r.err).toContain('uyuni-cdk: stdout was closed (the reader of the pipe ended); the run goes on, its events in events.jsonl of its run directory');
    expect(r.code).toBe(EXIT.ok);
    const events = fs.readFileSync(path.join(runDir, 'events.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(events.at(-1)).toMatchObject({ type: 'run-done', status: 'done', exitCode: 0 });
    expect(sim.get('apps/v1', 'Deployment', 'uyuni', NS)).toBeDefined();
    expect(sim.get('batch/v1', 'Job', 'setup', NS)?.status?.succeeded).toBe(1);
  });

  it('plan -o json | head: a verb that only reads ends quietly at the closed stdout, 141', async () => {
    sim = await startSimulator();
    const dir = writePlan(steps());
    const { child, done } = spawnCli(['plan', dir, '--kubeconfig', sim.kubeconfigPath, '-o', 'json']);
    child.stdout!.destroy();
    const r = await done;
    expect([r.code, r.err]).toEqual([141, '']);
  });

  it('keeps the newest --keep-runs series after a run, never the current one (default 20)', async () => {
    sim = await startSimulator();
    const state = tmpDir('uyuni-state-');
    const dir = writePlan(steps());
    const runs = path.join(state, 'uyuni-cdk', NS, 'install');
    const series: string[] = [];
    for (const keep of ['20', '20', '20', '2']) {
      const r = await spawnCli(['run', dir, '--kubeconfig', sim.kubeconfigPath, '-o', 'json', '--keep-runs', keep], { XDG_STATE_HOME: state }).done;
      expect(r.code).toBe(EXIT.ok);
      // each finished run its own series, however soon the next one starts
      series.push(path.basename(path.dirname(JSON.parse(r.out.split('\n')[0]).runDir)));
    }
    expect(new Set(series).size).toBe(4);
    expect(fs.readdirSync(runs).sort()).toEqual(series.slice(2));
    const bad = spawnSync(process.execPath, [BIN, 'run', dir, '--keep-runs', '1.5'], { encoding: 'utf8' });
    expect(bad.status).toBe(EXIT.badInput);
    expect(bad.stderr).toContain("option '--keep-runs <n>' argument '1.5' is invalid. must be a whole number of run series, 1 or more");
  });

  it('falls back to ~/.local/state, also for a relative $XDG_STATE_HOME (the XDG spec ignores those); --run-dir wins', () => {
    expect(defaultRunsDir('uyuni', 'migrate', { XDG_STATE_HOME: '/s' }, '/home/a')).toBe('/s/uyuni-cdk/uyuni/migrate');
    expect(defaultRunsDir('uyuni', 'migrate', {}, '/home/a')).toBe('/home/a/.local/state/uyuni-cdk/uyuni/migrate');
    expect(defaultRunsDir('uyuni', 'migrate', { XDG_STATE_HOME: 'state' }, '/home/a')).toBe('/home/a/.local/state/uyuni-cdk/uyuni/migrate');
    expect(defaultRunsDir('uyuni', 'install', { XDG_STATE_HOME: '' }, os.homedir())).toBe(path.join(os.homedir(), '.local/state/uyuni-cdk/uyuni/install'));
  });
});
