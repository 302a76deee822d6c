/**
 * SIGTERM and SIGHUP end a run as Ctrl-C does (issue 28: an ssh session dropped during a
 * 24-hour sync): run-done `interrupted` in events.jsonl, the lock released, the resume command,
 * and what still runs in the cluster with the command that stops it. Sent to the real CLI.
 */
import * as fs from 'fs';
import * as path from 'path';
import { LOCK_NAME } from '../../../src/runtime/safety/lock';
import { startSimulator, Simulator } from '../../sim';
import { spawnCli, tmpDir, until } from './harness';
import { job, namespace, NS, writePlan } from '../plans';

let sim: Simulator;
afterEach(async () => {
  await sim?.stop();
});

const events = (runDir: string) => fs.readFileSync(path.join(runDir, 'events.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));

describe.each([['SIGTERM', 143], ['SIGHUP', 129], ['SIGINT', 130]] as const)('run ended by %s', (signal, code) => {
  it(`records run-done interrupted, releases the lock, names the Job that goes on and how to stop it, exits ${code}`, async () => {
    sim = await startSimulator({ jobs: { sync: { outcome: 'hang' } } });
    const dir = writePlan([
      { name: 'namespace', objects: [namespace()] },
      { name: 'data-sync', objects: [job('sync')] },
      { name: 'after', objects: [job('after')] },
    ]);
    const runDir = tmpDir();
    const run = spawnCli(['run', dir, '--kubeconfig', sim.kubeconfigPath, '--run-dir', runDir]);
    await until('the sync pod running', () => sim.list('v1', 'Pod', NS).some((p) => p.metadata.name.startsWith('sync-') && p.status?.phase === 'Running'));
    await until('the lock taken', () => sim.get('coordination.k8s.io/v1', 'Lease', LOCK_NAME, NS) !== undefined);
    run.child.kill(signal);
    const r = await run.done;
    expect(r.code).toBe(code);
    expect(r.err).toContain(`uyuni-cdk: interrupted (${signal}) after`);
    expect(r.err).toContain('Run the same command again to resume');
    expect(r.err).toContain(`still running in the cluster: Job/sync (${NS}) (it goes on without the run; to stop it: kubectl -n ${NS} delete job sync)`);
    expect(r.err).toMatch(new RegExp(`next: uyuni-cdk run \\S+ -n ${NS} --kubeconfig \\S+\\n`));
    expect(r.err).not.toContain('--rerun');
    const last = events(runDir).pop();
    expect(last).toMatchObject({ type: 'run-done', status: 'interrupted', signal, exitCode: code, stillRunning: [{ object: { kind: 'Job', name: 'sync', namespace: NS } }] });
    expect(sim.get('coordination.k8s.io/v1', 'Lease', LOCK_NAME, NS)).toBeUndefined();
    // the Job goes on in the cluster, as said
    expect(sim.get('batch/v1', 'Job', 'sync', NS)?.status?.succeeded ?? 0).toBe(0);
    expect(sim.get('batch/v1', 'Job', 'after', NS)).toBeUndefined();
  });
});
