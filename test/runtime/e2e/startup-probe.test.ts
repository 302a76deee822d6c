/**
 * The server sets itself up at its first start, for hours, behind a startup probe: the last step
 * of the install waits for its rollout (timeout 10 h), shows where the pod is meanwhile, and is
 * neither stuck nor failed by it; a container that crash-loops still fails the step.
 */
import * as fs from 'fs';
import { EXIT } from '../../../src/plan/exit-codes';
import * as path from 'path';
import type { V1DeploymentCondition } from '@kubernetes/client-node';
import type { RunEvent, WaitingPod } from '../../../src/runtime/core/events';
import { startSimulator, Simulator, SimOptions } from '../../sim';
import { cli, tmpDir, until } from './harness';
import { namespace, NS, writePlan } from '../plans';

let sim: Simulator;
async function start(opts: SimOptions): Promise<Simulator> {
  sim = await startSimulator(opts);
  return sim;
}
afterEach(async () => {
  await sim?.stop();
});

/** Deployment `uyuni` as the server runs now: no setup Job, a startup probe of up to 10 h, then readiness. */
const uyuniServer = () => ({
  apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'uyuni', namespace: NS },
  spec: {
    replicas: 1,
    strategy: { type: 'Recreate' },
    selector: { matchLabels: { app: 'uyuni' } },
    template: {
      metadata: { labels: { app: 'uyuni' } },
      spec: {
        containers: [{
          name: 'uyuni', image: 'registry.opensuse.org/uyuni/server:latest',
          startupProbe: { exec: { command: ['/usr/bin/startup-check.sh'] }, periodSeconds: 10, failureThreshold: 3600 },
          readinessProbe: { httpGet: { path: '/rhn/manager/api/api/getVersion', port: 80 }, initialDelaySeconds: 120 },
        }],
      },
    },
  },
});

const installPlan = () => writePlan([
  { name: 'namespace', objects: [namespace()] },
  { name: 'server', objects: [uyuniServer()], timeoutSeconds: 36000 },
], { deadlineSeconds: 40000 });

type Waiting = Extract<RunEvent, { type: 'waiting' }>;
const events = (runDir: string): RunEvent[] => {
  const f = path.join(runDir, 'events.jsonl');
  return fs.existsSync(f) ? fs.readFileSync(f, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l)) : [];
};
const progressing = (): V1DeploymentCondition | undefined => (sim.get('apps/v1', 'Deployment', 'uyuni', NS)?.status?.conditions ?? []).find((c: V1DeploymentCondition) => c.type === 'Progressing');

describe('the server step waits through a long first start', () => {
  it('waits while the pod is Running but not started, showing it, past the progress deadline and the stuck grace; done once started and ready', async () => {
    // 2000 virtual ms per real ms: the Deployment's progress deadline (600 s) passes in 0.3 s.
    await start({ clockSpeed: 2000, deployments: { uyuni: { startupMs: 'hold' } } });
    const dir = installPlan();
    const runDir = tmpDir();
    let finished = false;
    const running = cli('run', dir, { kubeconfig: sim.kubeconfigPath, runDir, stuckGrace: 1, progressInterval: 1 }).finally(() => { finished = true; });

    const startingPod = (e: RunEvent): e is Waiting => e.type === 'waiting' && e.step === 'server'
      && (e.pods ?? []).some((p: WaitingPod) => p.owner.kind === 'Deployment' && p.owner.name === 'uyuni' && p.owner.namespace === NS && p.phase === 'Running'
        && p.containers.some((c) => c.name === 'uyuni' && c.state === 'running' && !c.started && !c.ready && c.restartCount === 0));
    await until('the pod shown Running, not started', () => events(runDir).some(startingPod));
    await until('the Deployment past its progress deadline', () => progressing()?.reason === 'ProgressDeadlineExceeded');
    // Longer than --stuck-grace, past the deadline: still waiting.
    await new Promise((r) => setTimeout(r, 1500));
    expect(finished).toBe(false);
    const st = await cli('status', dir, { kubeconfig: sim.kubeconfigPath });
    expect(st.out).toMatch(/server\s+waiting\s+Deployment\/uyuni \(uyuni-test\) rollout: 0\/1 ready; past its progress deadline, but its pods are still coming up; pod uyuni-\w+-\w+: Running, uyuni starting \(startup probe\), 0 restarts/);

    sim.passStartupProbe('uyuni');
    const r = await running;
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    // the plain output named the pod and where its start is, while it waited
    expect(r.out).toMatch(/\[2\/2\] server: waiting \d+\.\ds for Deployment\/uyuni \(uyuni-test\) rollout: 0\/1 ready; (past its progress deadline, but its pods are still coming up; )?pod uyuni-\w+-\w+: Running, uyuni starting \(startup probe\), 0 restarts/);
    expect(r.out).toMatch(/\[2\/2\] server: done in /);
    const ev = events(runDir);
    const said = ev.filter(startingPod).flatMap((e) => e.blockers);
    expect(said).toContainEqual(expect.stringMatching(/^Deployment\/uyuni \(uyuni-test\) rollout: 0\/1 ready; past its progress deadline, but its pods are still coming up; pod uyuni-\w+-\w+: Running, uyuni starting \(startup probe\), 0 restarts$/));
    // changes and a line a second, not four a second: counted against the time it waited (a
    // loaded machine waits longer, and a fixed count then failed a correct run)
    const waits = ev.filter((e) => e.type === 'waiting' && e.step === 'server') as Array<RunEvent & { at: string }>;
    const waited = (Date.parse(waits[waits.length - 1].at) - Date.parse(waits[0].at)) / 1000;
    expect(waits.length).toBeLessThan(10 + 2 * waited);
    expect(ev[ev.length - 1]).toMatchObject({ type: 'run-done', status: 'done', exitCode: 0 });
    expect(progressing()?.reason).toBe('NewReplicaSetAvailable');
  });

  it('names the command that follows the server\'s logs, once, as its first start begins', async () => {
    await start({ clockSpeed: 2000, deployments: { uyuni: { startupMs: 'hold' } } });
    const dir = installPlan();
    const runDir = tmpDir();
    const running = cli('run', dir, { kubeconfig: sim.kubeconfigPath, runDir, stuckGrace: 1, progressInterval: 1 });
    await until('the pod shown Running, not started', () => events(runDir).some((e) => e.type === 'starting'));
    await new Promise((r) => setTimeout(r, 1500));
    sim.passStartupProbe('uyuni');
    const r = await running;
    expect(r.code).toBe(0);
    const logs = `uyuni-cdk logs ${dir} server -f -n ${NS} --kubeconfig ${sim.kubeconfigPath}`;
    expect(r.out).toMatch(new RegExp(`\\n  pod uyuni-\\w+-\\w+ of Deployment/uyuni \\(uyuni-test\\) is starting \\(startup probe; a first start sets the server up, which can take hours\\)\\n  logs: ${logs.replace(/[/.()]/g, '\\$&')}\\n`));
    expect(r.out.split(logs).length - 1).toBe(1);
    expect(events(runDir).filter((e) => e.type === 'starting')).toEqual([expect.objectContaining({ step: 'server', logs })]);
  });

  it('a timeout in the startup probe says the server is still starting, what goes on, nothing broken; the same command waits on', async () => {
    await start({ clockSpeed: 2000, deployments: { uyuni: { startupMs: 'hold' } } });
    const dir = installPlan();
    const first = await cli('run', dir, { kubeconfig: sim.kubeconfigPath, stuckGrace: 1, timeout: 2 });
    // not a failure: exit 4 (not finished, nothing failed), not 1; no FAILED
    expect(first.code).toBe(EXIT.incomplete);
    expect(first.err).toMatch(/^run not finished \(exit 4\) after /m);
    expect(first.out + first.err).not.toMatch(/FAILED|run failed/);
    expect(first.out).toMatch(/\[2\/2\] server: STILL STARTING after [\d.]+s: the run's overall deadline passed while the server is still starting: pod uyuni-\w+-\w+ of Deployment\/uyuni \(uyuni-test\) is Running, in the startup probe \(a first start sets the server up, which can take hours\)\. Nothing is broken: it goes on setting itself up in the cluster; follow it with uyuni-cdk logs \S+ server -f/);
    const next = `uyuni-cdk run ${dir} -n ${NS} --kubeconfig ${sim.kubeconfigPath}`;
    expect(first.err).toContain(`  next: nothing to fix; the same command waits on: ${next}\n`);
    expect(first.err).not.toContain('fix the cause');
    // it did go on: the same pod, not restarted, still starting
    const pods = sim.list('v1', 'Pod', NS).filter((p: any) => p.metadata.labels?.app === 'uyuni');
    expect(pods.map((p: any) => [p.status.phase, p.status.containerStatuses[0].started, p.status.containerStatuses[0].restartCount])).toEqual([['Running', false, 0]]);

    // the same command waits on, and ends when the server is up
    let finished = false;
    const again = cli('run', dir, { kubeconfig: sim.kubeconfigPath, stuckGrace: 1 }).finally(() => { finished = true; });
    await new Promise((r) => setTimeout(r, 1500));
    expect(finished).toBe(false);
    sim.passStartupProbe('uyuni');
    const r = await again;
    expect(r.code).toBe(0);
    expect(sim.list('v1', 'Pod', NS).filter((p: any) => p.metadata.labels?.app === 'uyuni').map((p: any) => p.metadata.name)).toEqual(pods.map((p: any) => p.metadata.name));
  });

  it('a timeout of a crash-looping server is a failure: fix the cause', async () => {
    await start({ deployments: { uyuni: { outcome: 'crash-loop', exitCode: 1, runMs: 200 } } });
    const r = await cli('run', installPlan(), { kubeconfig: sim.kubeconfigPath, stuckGrace: 600, timeout: 2 });
    expect(r.code).toBe(1);
    expect(r.out).not.toContain('still starting');
    expect(r.err).toContain('next: fix the cause, then uyuni-cdk run');
  });

  it('fails the step when the server container crash-loops, with the pod\'s reason, exit code and last lines', async () => {
    await start({ deployments: { uyuni: { outcome: 'crash-loop', exitCode: 1, logs: ['starting Uyuni setup', 'FATAL: could not connect to the database'] } } });
    const runDir = tmpDir();
    const r = await cli('run', installPlan(), { kubeconfig: sim.kubeconfigPath, runDir, stuckGrace: 1 });
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/\[2\/2\] server: FAILED after [\d.]+s: pod uyuni-\w+-\w+ of Deployment\/uyuni \(uyuni-test\) is stuck: CrashLoopBackOff: back-off \d+s restarting failed container=uyuni .*\(container uyuni\), for 1s/);
    expect(r.out).toMatch(/pod uyuni-\w+-\w+ container uyuni: exit code 1, reason CrashLoopBackOff \(back-off \d+s restarting failed container=uyuni/);
    expect(r.out).toMatch(/last 2 lines:\n\s+starting Uyuni setup\n\s+FATAL: could not connect to the database\n/);
    expect(r.err).toContain('run failed (exit 1)');
    const waited = events(runDir).filter((e): e is Waiting => e.type === 'waiting' && e.step === 'server');
    expect(waited.some((e) => e.pods?.some((p) => p.containers[0].reason === 'CrashLoopBackOff' && p.containers[0].restartCount >= 1 && p.containers[0].lastExit?.exitCode === 1))).toBe(true);
  });
});
