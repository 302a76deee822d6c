import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { startSimulator, Simulator } from '../../sim';
import { BIN, cli, ROOT, spawnCli } from './harness';
import { deployment, job, namespace, NS, pvc, service, writePlan } from '../plans';

let sim: Simulator;
afterEach(async () => {
  await sim?.stop();
});

const steps = (replicas = 1, script = 'echo setup') => [
  { name: 'namespace', objects: [namespace()] },
  { name: 'volumes', objects: [pvc('var-pgsql'), pvc('var-cache')] },
  { name: 'setup', objects: [job('setup', script)] },
  { name: 'server', objects: [service('uyuni'), deployment('uyuni', replicas)] },
];

function actions(out: string): Record<string, string> {
  const r: Record<string, string> = {};
  for (const s of JSON.parse(out).steps) for (const o of s.objects) r[o.object.split(' ')[0]] = o.action;
  return r;
}

describe('uyuni-cdk plan', () => {
  it('shows create, unchanged, update, skip-complete and recreate, with waits and timeouts', async () => {
    sim = await startSimulator();
    const dir = writePlan(steps());
    const fresh = await cli('plan', dir, { kubeconfig: sim.kubeconfigPath, output: 'json' });
    expect(fresh.code).toBe(0);
    expect(Object.values(actions(fresh.out))).toEqual(Array(6).fill('create'));
    const text = await cli('plan', dir, { kubeconfig: sim.kubeconfigPath });
    expect(text.out).toContain('[3/4] setup: the setup step (timeout 1m)');
    expect(text.out).toContain('waits for Job/setup (uyuni-test) complete');
    expect(sim.requests.filter((q) => q.method !== 'GET' && !q.query.includes('dryRun'))).toEqual([]);

    expect((await cli('run', dir, { kubeconfig: sim.kubeconfigPath })).code).toBe(0);
    const after = actions((await cli('plan', dir, { kubeconfig: sim.kubeconfigPath, output: 'json' })).out);
    expect(after).toEqual({
      'Namespace/uyuni-test': 'unchanged', 'PersistentVolumeClaim/var-pgsql': 'unchanged', 'PersistentVolumeClaim/var-cache': 'unchanged',
      'Job/setup': 'skip-complete', 'Service/uyuni': 'unchanged', 'Deployment/uyuni': 'unchanged',
    });

    writePlan(steps(3, 'echo other'), { dir });
    const changed = actions((await cli('plan', dir, { kubeconfig: sim.kubeconfigPath, output: 'json' })).out);
    expect(changed['Deployment/uyuni']).toBe('update');
    // The Job is from a run that finished: run re-creates it without --rerun, and plan says so.
    expect(changed['Job/setup']).toBe('recreate');
    expect(changed['Service/uyuni']).toBe('unchanged');
    expect(sim.get('apps/v1', 'Deployment', 'uyuni', NS).spec.replicas).toBe(1);
  });
});

describe('uyuni-cdk status', () => {
  it('shows each step from the cluster: not-applied before, done after a run', async () => {
    sim = await startSimulator();
    const dir = writePlan(steps());
    const before = await cli('status', dir, { kubeconfig: sim.kubeconfigPath, output: 'json' });
    expect(JSON.parse(before.out).steps.map((s: any) => s.state)).toEqual(['not-applied', 'not-applied', 'not-applied', 'not-applied']);
    expect((await cli('run', dir, { kubeconfig: sim.kubeconfigPath })).code).toBe(0);
    const after = await cli('status', dir, { kubeconfig: sim.kubeconfigPath });
    expect(after.code).toBe(0);
    expect(after.out).toMatch(/setup\s+done\s+Job setup complete/);
    expect(after.out.split('\n').filter((l) => /\sdone\s/.test(l))).toHaveLength(4);
  });

  it('says the same from the index\'s step summaries as from parsing the step files, and parses a file edited since', async () => {
    sim = await startSimulator();
    const summarized = writePlan(steps(), { summaries: true });
    const handWritten = writePlan(steps());
    expect((await cli('run', summarized, { kubeconfig: sim.kubeconfigPath })).code).toBe(0);
    const status = async (dir: string) => JSON.parse((await cli('status', dir, { kubeconfig: sim.kubeconfigPath, output: 'json' })).out).steps;
    expect(await status(summarized)).toEqual(await status(handWritten));
    expect((await status(summarized)).map((s: any) => s.state)).toEqual(['done', 'done', 'done', 'done']);
    // The Job's script edited in the step file, the index left as synth wrote it: the file's spec hash counts.
    const index = fs.readFileSync(path.join(summarized, 'uyuni.plan'), 'utf8');
    writePlan(steps(1, 'echo other'), { dir: summarized });
    fs.writeFileSync(path.join(summarized, 'uyuni.plan'), index);
    const setup = (await status(summarized))[2];
    expect(setup).toMatchObject({ name: 'setup', state: 'changed' });
    expect(setup.detail).toBe('Job setup complete (spec changed since)');
  });
});

describe('uyuni-cdk plan with gates', () => {
  it('decides gates whose facts are already in the cluster, and says when they wait for the run', async () => {
    sim = await startSimulator({ jobs: { inspect: { logs: ['pg_version=16'] } } });
    const gate = { type: 'compare-versions' as const, left: { value: '14' }, op: '>=' as const, right: { fact: 'pg_version' }, message: 'PostgreSQL cannot be downgraded' };
    const steps = [
      { name: 'namespace', objects: [namespace()] },
      { name: 'inspect', objects: [job('inspect')], factsFrom: { apiVersion: 'batch/v1', kind: 'Job', name: 'inspect', namespace: NS } },
      { name: 'upgrade', objects: [job('upgrade')], gates: [gate] },
    ];
    const dir = writePlan(steps);
    expect((await cli('plan', dir, { kubeconfig: sim.kubeconfigPath })).out).toContain('gate      PostgreSQL cannot be downgraded (decided at run time from pg_version)');
    expect((await cli('run', dir, { kubeconfig: sim.kubeconfigPath })).code).toBe(1);
    expect((await cli('plan', dir, { kubeconfig: sim.kubeconfigPath })).out).toContain('gate      would REFUSE: PostgreSQL cannot be downgraded (pg_version is 16, expected 14 or older)');
  });
});

describe('uyuni-cdk status with facts', () => {
  it('shows the facts a step\'s Job printed', async () => {
    sim = await startSimulator({ jobs: { inspect: { logs: ['checking', 'pg_version=16', 'uyuni_release=2025.10'] } } });
    const dir = writePlan([
      { name: 'namespace', objects: [namespace()] },
      { name: 'inspect', objects: [job('inspect')], factsFrom: { apiVersion: 'batch/v1', kind: 'Job', name: 'inspect', namespace: NS } },
    ]);
    expect((await cli('run', dir, { kubeconfig: sim.kubeconfigPath })).code).toBe(0);
    const text = await cli('status', dir, { kubeconfig: sim.kubeconfigPath });
    expect(text.out).toMatch(/inspect\s+done\s+Job inspect complete\n\s+facts: pg_version=16 uyuni_release=2025.10/);
    const json = JSON.parse((await cli('status', dir, { kubeconfig: sim.kubeconfigPath, output: 'json' })).out);
    expect(json.steps[1].facts).toEqual({ pg_version: '16', uyuni_release: '2025.10' });
  });
});

describe('uyuni-cdk destroy', () => {
  it('lists without deleting on a dry run; --yes deletes in reverse order and keeps the data (claims, credentials, records); --purge-volumes removes them', async () => {
    sim = await startSimulator();
    const dir = writePlan([...steps(), {
      name: 'credentials', objects: [service('db')],
      requires: [{ kind: 'Secret', name: 'db-credentials', namespace: NS, keys: ['password'], ifMissing: 'generate' }],
    }]);
    expect((await cli('run', dir, { kubeconfig: sim.kubeconfigPath })).code).toBe(0);
    sim.put({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'users-own', namespace: NS }, data: { a: 'b' } });

    let mark = sim.requests.length;
    const dry = await cli('destroy', dir, { kubeconfig: sim.kubeconfigPath });
    expect(dry.code).toBe(0);
    expect(dry.out).toContain('dry run');
    expect(dry.out).toMatch(/would delete\s+Job\/setup/);
    expect(dry.out).toMatch(/kept\s+Secret\/db-credentials \(uyuni-test\)\s+\(a credential of the kept data/);
    expect(dry.out).toMatch(/kept\s+PersistentVolumeClaim\/var-pgsql/);
    expect(sim.requests.slice(mark).filter((q) => q.method !== 'GET')).toEqual([]);

    mark = sim.requests.length;
    const yes = await cli('destroy', dir, { kubeconfig: sim.kubeconfigPath, yes: true });
    expect(yes.code).toBe(0);
    const deletes = sim.requests.slice(mark).filter((q) => q.method === 'DELETE').map((q) => q.path.split('/').slice(-2).join('/'));
    // the last: the lock destroy held (Lease uyuni-cdk-lock)
    expect(deletes).toEqual(['configmaps/uyuni-applyset', 'services/db', 'deployments/uyuni', 'services/uyuni', 'jobs/setup', 'leases/uyuni-cdk-lock']);
    expect(sim.get('v1', 'Secret', 'db-credentials', NS)).toBeDefined();
    expect(sim.get('v1', 'ConfigMap', 'uyuni-cdk-history', NS)).toBeDefined();
    expect(sim.requests.slice(mark).filter((q) => q.method === 'DELETE').every((q) => q.query.includes('propagationPolicy=Background'))).toBe(true);
    expect(sim.get('v1', 'PersistentVolumeClaim', 'var-pgsql', NS)).toBeDefined();
    expect(sim.get('v1', 'Namespace', NS)).toBeDefined();
    expect(sim.get('v1', 'ConfigMap', 'users-own', NS)).toBeDefined();
    expect(sim.get('batch/v1', 'Job', 'setup', NS)).toBeUndefined();

    // the user's ConfigMap keeps the namespace: deleting it would delete what is not ours
    const purge = await cli('destroy', dir, { kubeconfig: sim.kubeconfigPath, yes: true, purgeVolumes: true });
    expect(purge.code).toBe(0);
    expect(purge.out).toMatch(/deleted\s+PersistentVolumeClaim\/var-cache/);
    expect(purge.out).toMatch(/deleted\s+Secret\/db-credentials/);
    expect(purge.out).toMatch(/kept\s+Namespace\/uyuni-test\s+\(holds 1 object\(s\) not of this plan, which deleting it would delete: ConfigMap\/users-own/);
    expect(sim.get('v1', 'Namespace', NS)).toBeDefined();
    expect((await fetch(`${sim.url}/api/v1/namespaces/${NS}/configmaps/users-own`, { method: 'DELETE' })).status).toBe(200);
    expect((await cli('destroy', dir, { kubeconfig: sim.kubeconfigPath, yes: true, purgeVolumes: true })).out).toMatch(/deleted\s+Namespace\/uyuni-test/);
  });
});

describe('uyuni-cdk destroy -y', () => {
  it('deletes as --yes does (README: -y), and --auto-approve too, as for run', async () => {
    sim = await startSimulator();
    const dir = writePlan(steps());
    for (const flag of ['-y', '--auto-approve']) {
      expect((await cli('run', dir, { kubeconfig: sim.kubeconfigPath })).code).toBe(0);
      const r = await spawnCli(['destroy', dir, flag, '--kubeconfig', sim.kubeconfigPath]).done;
      expect(r.err).toBe('');
      expect(r.code).toBe(0);
      expect(r.out).toMatch(/deleted\s+Deployment\/uyuni/);
      expect(sim.get('apps/v1', 'Deployment', 'uyuni', NS)).toBeUndefined();
    }
  });
});

describe('the CLI', () => {
  it.each(['run', 'plan', 'status', 'destroy'])('%s --help describes the verb with examples', (verb) => {
    const r = spawnSync(process.execPath, [BIN, verb, '--help'], { encoding: 'utf8' });
    expect(r.status).toBe(0);
    expect(r.stdout).toContain(`Usage: uyuni-cdk ${verb} [options] <planDir>`);
    expect(r.stdout).toContain('Examples:');
    expect(r.stdout).toContain('--kubeconfig');
  });

  it('plan --detailed-exitcode (or --exit-code) keeps 2 for changes: every error is 1', () => {
    expect(spawnSync(process.execPath, [BIN, 'plan', '/nonexistent'], { encoding: 'utf8' }).status).toBe(2);
    for (const flag of ['--detailed-exitcode', '--exit-code']) {
      const r = spawnSync(process.execPath, [BIN, 'plan', '/nonexistent', flag], { encoding: 'utf8' });
      expect(r.status).toBe(1);
      expect(r.stderr).toContain('/nonexistent: no such plan directory');
    }
  });

  it('lists the verbs, exits 2 on a usage error, and never loads the Kubernetes client for help', () => {
    const help = spawnSync(process.execPath, [BIN, '--help'], { encoding: 'utf8' });
    for (const v of ['run', 'plan', 'status', 'destroy']) expect(help.stdout).toMatch(new RegExp(`\\n  ${v} `));
    expect(spawnSync(process.execPath, [BIN, 'run'], { encoding: 'utf8' }).status).toBe(2);
    // Numbers are parsed by the CLI: a bad one is a usage error before anything is read.
    for (const flag of ['--timeout', '--stuck-grace', '--progress-interval']) {
      const bad = spawnSync(process.execPath, [BIN, 'run', '/nonexistent', flag, 'soon'], { encoding: 'utf8' });
      expect(bad.status).toBe(2);
      expect(bad.stderr).toContain(`option '${flag} <seconds>' argument 'soon' is invalid. must be a positive number`);
    }
    expect(spawnSync(process.execPath, [BIN, 'run', '/nonexistent', '-o', 'yml'], { encoding: 'utf8' }).status).toBe(2);
    expect(spawnSync(process.execPath, [BIN, 'run', '--help'], { encoding: 'utf8' }).stdout).toMatch(/--stuck-grace <seconds>[^]*\(default: 120\)/);
    const probe = spawnSync(process.execPath, ['-r', `${ROOT}/bin/register.js`, '-e', `
      require('${ROOT}/src/cli/main.ts').buildProgram().helpInformation();
      process.stdout.write(String(Object.keys(require.cache).some((k) => k.includes('@kubernetes/client-node') || k.includes('/src/runtime/'))));`], { encoding: 'utf8' });
    expect(probe.stdout).toBe('false');
  });
});
