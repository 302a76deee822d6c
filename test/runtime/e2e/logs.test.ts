/**
 * `uyuni-cdk logs`: a step's pods' logs, the plan's services' logs, a followed running Job, and a
 * finished step whose pods are gone read back from the run directory `run` saved them in.
 */
import * as fs from 'fs';
import { startSimulator, Simulator } from '../../sim';
import { logsCommand } from '../../../src/runtime/verbs/commands';
import { cli, tmpDir, until } from './harness';
import { deployment, job, namespace, NS, writePlan } from '../plans';
import { EXIT } from '../../../src/plan/exit-codes';

let sim: Simulator;
afterEach(async () => {
  await sim?.stop();
});

function captured(onStop?: (stop: () => void) => void) {
  const text = { out: '', err: '' };
  return { text, io: { out: (t: string) => { text.out += t; }, err: (t: string) => { text.err += t; }, isTTY: false, onInterrupt: onStop } };
}

const plan = () => writePlan([
  { name: 'namespace', objects: [namespace()] },
  { name: 'migrate', objects: [job('db-migrate')] },
  { name: 'server', objects: [deployment('uyuni')] },
], { name: 'migrate' });

describe('uyuni-cdk logs', () => {
  it('prints a finished step\'s Job logs, each line prefixed with its pod and container', async () => {
    sim = await startSimulator({ jobs: { 'db-migrate': { logs: ['copying 1/2', 'copying 2/2', 'done'] } }, deployments: { uyuni: { logs: ['setup: starting'] } } });
    const dir = plan();
    expect((await cli('run', dir, { kubeconfig: sim.kubeconfigPath })).code).toBe(0);
    const c = captured();
    expect(await logsCommand(dir, 'migrate', { kubeconfig: sim.kubeconfigPath }, c.io)).toBe(EXIT.ok);
    expect(c.text.out).toMatch(/^\[db-migrate-\w+\/main\] copying 1\/2\n\[db-migrate-\w+\/main\] copying 2\/2\n\[db-migrate-\w+\/main\] done\n$/);
    // without a step: the plan's services (its Deployments' pods), not the Jobs
    const all = captured();
    await until('the server pod logged', () => sim.list('v1', 'Pod', NS).some((p) => p.metadata.name.startsWith('uyuni-')));
    expect(await logsCommand(dir, undefined, { kubeconfig: sim.kubeconfigPath }, all.io)).toBe(EXIT.ok);
    expect(all.text.out).toMatch(/^\[uyuni-[\w-]+\/\w+\] setup: starting\n$/);
  });

  it('reads a finished step from the run directory when its pods are gone', async () => {
    sim = await startSimulator({ jobs: { 'db-migrate': { logs: ['kept line'] } } });
    const dir = plan();
    const runsDir = tmpDir();
    const runDir = `${runsDir}/migrate-20261201T000000Z`;
    fs.mkdirSync(runDir);
    process.env.XDG_STATE_HOME = tmpDir();
    expect((await cli('run', dir, { kubeconfig: sim.kubeconfigPath, runDir })).code).toBe(0);
    for (const p of sim.list('v1', 'Pod', NS).filter((x) => x.metadata.name.startsWith('db-migrate-'))) {
      await fetch(`${sim.url}/api/v1/namespaces/${NS}/pods/${p.metadata.name}?gracePeriodSeconds=0`, { method: 'DELETE' });
    }
    await until('the Job pods are gone', () => !sim.list('v1', 'Pod', NS).some((x) => x.metadata.name.startsWith('db-migrate-')));
    const { showLogs } = await import('../../../src/runtime/verbs/logs');
    const { openPlanDir } = await import('../../../src/runtime/core/plan-dir');
    const { Cluster } = await import('../../../src/kube/cluster');
    const { loadKubeConfig } = await import('../../../src/kube/load-kubeconfig');
    const { plan: p, objectsOf } = openPlanDir(dir);
    const c = captured();
    await showLogs(new Cluster(loadKubeConfig({ kubeconfig: sim.kubeconfigPath })), p, objectsOf, { step: 'migrate', runsDir }, c.io);
    expect(c.text.err).toBe(`uyuni-cdk: the pods of step migrate are gone; its logs as run saved them in ${runDir}\n`);
    expect(c.text.out).toMatch(/^\[db-migrate-\w+\/main\] kept line\n$/);
  });

  it('follows a running Job until it ends', async () => {
    sim = await startSimulator({ clockSpeed: 5, jobs: { 'db-migrate': { durationMs: 4000, logs: ['one', 'two', 'three'] } } });
    const dir = plan();
    const run = cli('run', dir, { kubeconfig: sim.kubeconfigPath });
    await until('the Job pod runs', () => sim.list('v1', 'Pod', NS).some((p) => p.metadata.name.startsWith('db-migrate-') && p.status?.phase === 'Running'));
    const c = captured();
    expect(await logsCommand(dir, 'migrate', { kubeconfig: sim.kubeconfigPath, follow: true }, c.io)).toBe(EXIT.ok);
    expect(c.text.out.split('\n').filter(Boolean).map((l) => l.replace(/^\[[^\]]+\] /, ''))).toEqual(['one', 'two', 'three']);
    expect((await run).code).toBe(0);
  });

  it('refuses a step the plan does not have, naming its steps, and a step with nothing to show', async () => {
    sim = await startSimulator();
    const dir = plan();
    process.env.XDG_STATE_HOME = tmpDir();
    const bad = captured();
    expect(await logsCommand(dir, 'setup', { kubeconfig: sim.kubeconfigPath }, bad.io)).toBe(EXIT.badInput);
    expect(bad.text.err).toBe('uyuni-cdk: no step setup in plan migrate (steps: namespace, migrate, server)\n');
    const none = captured();
    expect(await logsCommand(dir, 'migrate', { kubeconfig: sim.kubeconfigPath }, none.io)).toBe(EXIT.badInput);
    expect(none.text.err).toMatch(/^uyuni-cdk: step migrate has no pods in namespace uyuni-test and no saved logs in /);
  });
});
