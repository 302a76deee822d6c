/**
 * Recorded facts on resume (issue 25): an upgrade stopped after its inspect steps, resumed once
 * the inspect pods are gone (a TTL, a node drained, `kubectl delete pod`), takes the facts from
 * the run's record in the cluster (ConfigMap uyuni-cdk-history); only when neither exists does it
 * say so, naming the step to re-run, never "no data".
 */
import * as path from 'path';
import { startSimulator, Simulator } from '../../sim';
import { cli, ROOT } from './harness';
import { inspectJobs, putClaims } from './inspect-facts';
import { job, namespace, NS, writePlan } from '../plans';

const dist = (p: string) => path.join(ROOT, 'dist', p);

let sim: Simulator;
afterEach(async () => {
  await sim?.stop();
});

/** Deletes the pods of the inspect Jobs, as a TTL or a drained node would; the Jobs stay Complete. */
async function deleteInspectPods(): Promise<void> {
  for (const p of sim.list('v1', 'Pod', 'uyuni').filter((x) => /^uyuni-inspect/.test(x.metadata.name))) {
    const res = await fetch(`${sim.url}/api/v1/namespaces/uyuni/pods/${p.metadata.name}?gracePeriodSeconds=0`, { method: 'DELETE' });
    expect(res.ok).toBe(true);
  }
  await new Promise((r) => setTimeout(r, 200));
  expect(sim.list('v1', 'Pod', 'uyuni').filter((x) => /^uyuni-inspect/.test(x.metadata.name))).toEqual([]);
  expect(sim.get('batch/v1', 'Job', 'uyuni-inspect-db', 'uyuni')?.status?.succeeded).toBe(1);
}

/** An upgrade stopped at its database upgrade: inspected, server scaled to 0. */
async function stoppedUpgrade(): Promise<void> {
  sim = await startSimulator({ jobs: { ...inspectJobs(), 'uyuni-db-migrate': { outcome: 'fail', exitCode: 1 } } });
  putClaims(sim);
  expect((await cli('run', dist('install'), { kubeconfig: sim.kubeconfigPath })).code).toBe(0);
  expect((await cli('run', dist('upgrade'), { kubeconfig: sim.kubeconfigPath, yes: true })).code).toBe(1);
  expect(sim.get('apps/v1', 'Deployment', 'uyuni', 'uyuni')?.spec?.replicas).toBe(0);
  sim.setJob('uyuni-db-migrate', { outcome: 'succeed' });
}

const history = () => sim.get('v1', 'ConfigMap', 'uyuni-cdk-history', 'uyuni').data as Record<string, string>;

describe('a resumed upgrade whose inspect pods are gone', () => {
  it('takes the facts from the record: the gates pass, plan decides them, the upgrade finishes', async () => {
    await stoppedUpgrade();
    expect(JSON.parse(history()['flow.upgrade']).steps['inspect-db'].facts).toMatchObject({ current_pg_version: '16', image_pg_version: '18' });
    await deleteInspectPods();
    const plan = await cli('plan', dist('upgrade'), { kubeconfig: sim.kubeconfigPath });
    expect(plan.out).not.toContain('decided at run time');
    expect(plan.out).toMatch(/gate {6}no database data: var-pgsql holds no PG_VERSION, there is nothing to upgrade \(would pass: current_pg_version is 16\)/);
    const r = await cli('run', dist('upgrade'), { kubeconfig: sim.kubeconfigPath, yes: true, rerun: ['db-upgrade'] });
    expect(r.out).not.toContain('holds no PG_VERSION');
    expect(r.out).toMatch(/read facts of Job\/uyuni-inspect-db \(uyuni\): its pods are gone: the facts recorded by run upgrade-/);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/inspect-db: skipped[^\n]*\n[^\n]*\n {2}facts: current_pg_version=16 image_pg_version=18/);
    expect(sim.get('batch/v1', 'Job', 'uyuni-db-migrate', 'uyuni')?.status?.succeeded).toBe(1);
  });

  it('with no facts recorded either: says the facts are gone and names the step to re-run, not "no data"', async () => {
    await stoppedUpgrade();
    // A record without facts (an earlier version of the runtime wrote none: nor a seal, nor a copy on the namespace).
    const data = history();
    const flow = JSON.parse(data['flow.upgrade']);
    for (const s of Object.values(flow.steps) as any[]) delete s.facts;
    for (const k of ['v', 'sum', 'writtenAt']) delete flow[k];
    const cm = sim.get('v1', 'ConfigMap', 'uyuni-cdk-history', 'uyuni');
    const { facts: _, ...rest } = data;
    sim.put({ ...cm, data: { ...rest, ['flow.upgrade']: JSON.stringify(flow) } });
    const ns = sim.get('v1', 'Namespace', 'uyuni');
    const { 'uyuni-cdk.io/records': _copy, ...annotations } = ns.metadata.annotations;
    sim.put({ ...ns, metadata: { ...ns.metadata, annotations } });
    await deleteInspectPods();
    const plan = await cli('plan', dist('upgrade'), { kubeconfig: sim.kubeconfigPath });
    expect(plan.out).toMatch(/gate {6}would REFUSE: cannot be decided: fact current_pg_version is unknown: the facts of steps inspect, inspect-db are gone/);
    expect(plan.out).not.toContain('would REFUSE: no database data');
    const r = await cli('run', dist('upgrade'), { kubeconfig: sim.kubeconfigPath, yes: true, rerun: ['db-upgrade'] });
    expect(r.code).toBe(1);
    const text = r.out + r.err;
    expect(text).not.toContain('holds no PG_VERSION');
    // Refused before any write, the lost facts said once (not once per gate that needs them).
    const lost = 'the facts of steps inspect, inspect-db are gone (the pods of Job uyuni-inspect were deleted; the pods of Job uyuni-inspect-db were deleted) '
      + 'and the run\'s record (ConfigMap uyuni-cdk-history) holds none of them; run again with --rerun inspect --rerun inspect-db to print them again';
    expect(text).toContain('refused before any write (nothing was changed): facts the gates need are gone:');
    expect(text).toContain(`  - step stop-server: its gates cannot be decided: ${lost}`);
    expect(text.split(lost).length - 1).toBe(1);
    expect(text).toContain('  then run the same command again with --rerun inspect --rerun inspect-db');
    expect(text).not.toContain('gate refused: no database data');
    // Nothing ran past the gate.
    expect(sim.get('batch/v1', 'Job', 'uyuni-db-migrate', 'uyuni')?.status?.succeeded ?? 0).toBe(0);
    // The command it names prints them again, and the upgrade goes on.
    const again = await cli('run', dist('upgrade'), { kubeconfig: sim.kubeconfigPath, yes: true, rerun: ['inspect', 'inspect-db', 'db-upgrade'] });
    expect(again.err).toBe('');
    expect(again.code).toBe(0);
    expect(again.out).toMatch(/\n {2}facts: [^\n]*current_pg_version=16/);
  });
});

describe('a step with facts that is not a data step', () => {
  const plan = () => writePlan([
    { name: 'namespace', objects: [namespace()] },
    { name: 'inspect', objects: [job('inspect')], factsFrom: { apiVersion: 'batch/v1', kind: 'Job', name: 'inspect', namespace: NS } },
    {
      name: 'upgrade-db', objects: [job('pg-upgrade')],
      gates: [{ type: 'compare-versions', left: { value: '17' }, op: '>=', right: { fact: 'pg_version' }, message: 'PostgreSQL cannot be downgraded' }],
    },
  ], { name: 'upgrade' });

  it('records what its Job printed when it completes, and a resumed run takes it from there once the pods are gone', async () => {
    sim = await startSimulator({ jobs: { inspect: { logs: ['pg_version=16'] }, 'pg-upgrade': { outcome: 'fail', exitCode: 1 } } });
    const dir = plan();
    expect((await cli('run', dir, { kubeconfig: sim.kubeconfigPath })).code).toBe(1);
    const uid = sim.get('batch/v1', 'Job', 'inspect', NS).metadata.uid;
    const recorded = JSON.parse(sim.get('v1', 'ConfigMap', 'uyuni-cdk-history', NS).data.facts);
    expect(recorded.inspect).toMatchObject({ uid, step: 'inspect', plan: 'upgrade', facts: { pg_version: '16' } });
    for (const p of sim.list('v1', 'Pod', NS).filter((x) => x.metadata.name.startsWith('inspect'))) {
      expect((await fetch(`${sim.url}/api/v1/namespaces/${NS}/pods/${p.metadata.name}?gracePeriodSeconds=0`, { method: 'DELETE' })).ok).toBe(true);
    }
    await new Promise((r) => setTimeout(r, 200));
    sim.setJob('pg-upgrade', { outcome: 'succeed' });
    const plan2 = await cli('plan', dir, { kubeconfig: sim.kubeconfigPath });
    expect(plan2.out).toContain('PostgreSQL cannot be downgraded (would pass: pg_version is 16, as expected: 17 or older)');
    const r = await cli('run', dir, { kubeconfig: sim.kubeconfigPath, rerun: ['upgrade-db'] });
    expect(r.out).toContain('read facts of Job/inspect (uyuni-test): its pods are gone: the facts recorded by run upgrade-');
    expect(r.out).toContain('facts: pg_version=16');
    expect(r.code).toBe(0);
    // status shows them too.
    const status = await cli('status', dir, { kubeconfig: sim.kubeconfigPath });
    expect(status.out).toMatch(/inspect\s+done\s+Job inspect complete\n\s+facts: pg_version=16/);
  });

  it('a re-created Job does not take the facts recorded for the one before it', async () => {
    sim = await startSimulator({ jobs: { inspect: { logs: ['pg_version=16'] }, 'pg-upgrade': { outcome: 'fail', exitCode: 1 } } });
    const dir = plan();
    expect((await cli('run', dir, { kubeconfig: sim.kubeconfigPath })).code).toBe(1);
    // The record names another Job (uid): it stands for that one only.
    const cm = sim.get('v1', 'ConfigMap', 'uyuni-cdk-history', NS);
    const facts = JSON.parse(cm.data.facts);
    facts.inspect.uid = 'another-uid';
    sim.put({ ...cm, data: { ...cm.data, facts: JSON.stringify(facts) } });
    for (const p of sim.list('v1', 'Pod', NS).filter((x) => x.metadata.name.startsWith('inspect'))) {
      expect((await fetch(`${sim.url}/api/v1/namespaces/${NS}/pods/${p.metadata.name}?gracePeriodSeconds=0`, { method: 'DELETE' })).ok).toBe(true);
    }
    await new Promise((r) => setTimeout(r, 200));
    const r = await cli('run', dir, { kubeconfig: sim.kubeconfigPath, rerun: ['upgrade-db'] });
    expect(r.code).toBe(1);
    expect(r.out + r.err).toContain('  - step upgrade-db: its gates cannot be decided: the facts of step inspect are gone (the pods of Job inspect were deleted)');
    expect(r.out + r.err).toContain('  then run the same command again with --rerun inspect (');
  });
});
