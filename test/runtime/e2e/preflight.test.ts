/**
 * Preflight before the first write (issue 28): `run` and `plan` check every requirement of the
 * whole plan and the gates that can be decided now, list all that are unmet at once (each once,
 * with the command that fixes it), and change nothing; what an earlier step of the same run makes
 * or generates is not counted as missing. The `next:` hint names `--rerun` only for a step whose
 * Jobs ran.
 */
import * as path from 'path';
import { startSimulator, Simulator } from '../../sim';
import { changes, cli, ROOT } from './harness';
import { inspectJobs } from './inspect-facts';
import { configMap, job, namespace, NS, writePlan } from '../plans';

const MIGRATE = path.join(ROOT, 'dist', 'migrate');
const PROXY = path.join(ROOT, 'dist', 'proxy');
const count = (text: string, s: string) => text.split(s).length - 1;
const b64 = (t: string) => Buffer.from(t).toString('base64');

let sim: Simulator;
afterEach(async () => {
  await sim?.stop();
});

const migrationFacts = () => inspectJobs({
  fqdn: 'old-server.example.com', current_release: '2024.10', timezone: 'Europe/Berlin', has_hub: 'false', debug_java: 'false',
  tftp_enabled: 'true', ca_fingerprint_match: 'true',
}, { current_pg_version: '14' });

describe('dist/migrate on an empty cluster', () => {
  it('run lists the three user-made objects at once, each once with its command, and writes nothing', async () => {
    sim = await startSimulator({ jobs: migrationFacts() });
    const mark = sim.requests.length;
    const r = await cli('run', MIGRATE, { kubeconfig: sim.kubeconfigPath, yes: true });
    expect(r.code).toBe(1);
    expect(changes(sim.requests.slice(mark))).toEqual([]);
    const all = r.out + r.err;
    expect(all).toContain('refused before any write (nothing was changed): 3 requirements are not met:');
    for (const cmd of [
      'kubectl -n uyuni create secret generic uyuni-migration-key',
      'kubectl -n uyuni create configmap uyuni-migration-ssh',
      'kubectl -n uyuni create secret generic uyuni-ca-password',
    ]) expect([cmd, count(all, cmd)]).toEqual([cmd, 1]);
    // made by an earlier step of the same run (import-secrets) or generated: not missing now
    for (const later of ['uyuni-ca ', 'db-credentials', 'reportdb-credentials', 'admin-credentials', 'db-admin-credentials']) {
      expect([later, all.includes(`Secret uyuni/${later}`)]).toEqual([later, false]);
    }
    // their commands need the namespace: run takes over one made by hand
    expect(count(all, 'namespace uyuni does not exist yet: make it first with: kubectl create namespace uyuni')).toBe(1);
    // the run never began a step: no step to resume, no --rerun
    expect(all).not.toContain('--rerun');
    expect(all).not.toContain('[1/');
  });

  it('plan lists the same, and names what an earlier step makes as made-earlier', async () => {
    sim = await startSimulator({ jobs: migrationFacts() });
    const r = await cli('plan', MIGRATE, { kubeconfig: sim.kubeconfigPath });
    expect(r.code).toBe(0);
    expect(r.out).toContain('run would refuse before any write:\n  first: namespace uyuni does not exist yet: make it first with: kubectl create namespace uyuni');
    expect(r.out).toContain('  - Secret uyuni/uyuni-migration-key (step data-sync) is missing: the passwordless ssh key');
    expect(r.out).toContain('  - ConfigMap uyuni/uyuni-migration-ssh (step data-sync) is missing');
    expect(r.out).toContain('  - Secret uyuni/uyuni-ca-password (step data-sync) is missing');
    expect(r.out).toMatch(/requires {2}made-earlier Secret uyuni\/db-credentials {2}\(step import-secrets makes it; checked when the step starts\)/);
    expect(r.out).toMatch(/requires {2}made-earlier Secret uyuni\/uyuni-ca {2}\(step import-secrets makes it/);
    const json = JSON.parse((await cli('plan', MIGRATE, { kubeconfig: sim.kubeconfigPath, output: 'json' })).out);
    expect(json.unmet.map((u: any) => u.object)).toEqual(['Secret uyuni/uyuni-migration-key', 'ConfigMap uyuni/uyuni-migration-ssh', 'Secret uyuni/uyuni-ca-password']);
  });

  it('once import-secrets is done without making its Secrets, they are missing before any write: all three at once', async () => {
    sim = await startSimulator({ jobs: migrationFacts() });
    // as the refusal says: the namespace by hand first, then what goes into it
    sim.put({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'uyuni' } });
    sim.put({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'uyuni-migration-key', namespace: 'uyuni' }, data: { key: b64('k'), 'key.pub': b64('p') } });
    sim.put({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'uyuni-migration-ssh', namespace: 'uyuni' }, data: { config: 'Host *', known_hosts: 'x' } });
    sim.put({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'uyuni-ca-password', namespace: 'uyuni' }, data: { password: b64('pw') } });
    // the simulated import Job makes nothing: the tls step finds no CA (at the step: it was made-earlier before)
    const first = await cli('run', MIGRATE, { kubeconfig: sim.kubeconfigPath, yes: true });
    expect(first.code).toBe(1);
    expect(first.out).toContain('tls: FAILED');
    expect(first.err).toContain('Secret uyuni/uyuni-ca is missing');
    expect(first.err).toContain('run failed (exit 1)');
    expect(first.err).not.toContain('--rerun');
    const mark = sim.requests.length;
    const again = await cli('run', MIGRATE, { kubeconfig: sim.kubeconfigPath, yes: true });
    expect(again.code).toBe(1);
    expect(changes(sim.requests.slice(mark))).toEqual([]);
    expect(again.err).toContain('3 requirements are not met');
    expect(again.err).not.toContain('does not exist yet');
    for (const s of ['Secret uyuni/uyuni-ca (step tls) is missing', 'Secret uyuni/db-credentials (step database) is missing', 'Secret uyuni/reportdb-credentials (step database) is missing']) {
      expect([s, count(again.out + again.err, s)]).toEqual([s, 1]);
    }
  });
});

describe('preflight of hand-written plans', () => {
  const facts = { apiVersion: 'batch/v1', kind: 'Job', name: 'inspect', namespace: NS };
  const steps = (requireSite: boolean, dir?: string) => writePlan([
    { name: 'namespace', objects: [namespace()] },
    { name: 'inspect', objects: [job('inspect')], factsFrom: facts },
    {
      name: 'work', objects: [job('work')],
      gates: [{ type: 'equals', left: { fact: 'mode' }, right: { value: 'ok' }, message: 'the inspected mode must be ok' }],
      requires: requireSite ? [{ kind: 'ConfigMap', name: 'site', namespace: NS, keys: ['a'], ifMissing: 'fail' }] : [],
    },
  ], { dir });

  it('a gate decided from facts of a finished step and a requirement without a command: both listed, with a command for the requirement', async () => {
    sim = await startSimulator({ jobs: { inspect: { logs: ['mode=broken'] } } });
    const dir = steps(false);
    // the first run gathers the facts; they are not known before it, so the gate refuses at its step
    const first = await cli('run', dir, { kubeconfig: sim.kubeconfigPath });
    expect(first.code).toBe(1);
    expect(first.out).toContain('gate REFUSED: the inspected mode must be ok');
    expect(first.err).not.toContain('--rerun');
    // the plan now requires a ConfigMap too; the inspect step is unchanged
    steps(true, dir);
    // now the inspect step is Complete (skipped): its facts decide the gate before any write
    const mark = sim.requests.length;
    const r = await cli('run', dir, { kubeconfig: sim.kubeconfigPath });
    expect(r.code).toBe(1);
    expect(changes(sim.requests.slice(mark))).toEqual([]);
    expect(r.err).toContain('1 requirement is not met, 1 gate refuses:');
    expect(r.err).toContain(`  - ConfigMap ${NS}/site (step work) is missing; make it with: kubectl -n ${NS} create configmap site --from-file=a=<file>`);
    expect(r.err).toContain('  - step work: gate refused: the inspected mode must be ok');
  });

  it('a requirement an earlier step applies is not missing before the run', async () => {
    sim = await startSimulator();
    const dir = writePlan([
      { name: 'namespace', objects: [namespace()] },
      { name: 'config', objects: [configMap('site', { a: '1' })] },
      { name: 'work', objects: [job('work')], requires: [{ kind: 'ConfigMap', name: 'site', namespace: NS, keys: ['a'], ifMissing: 'fail', message: 'none' }] },
    ]);
    const r = await cli('run', dir, { kubeconfig: sim.kubeconfigPath });
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
  });

  it('next: names --rerun for a step whose Job failed, not for one that failed before its Job was applied', async () => {
    sim = await startSimulator({ jobs: { work: { outcome: 'fail' } } });
    const made = writePlan([
      { name: 'namespace', objects: [namespace()] },
      { name: 'make', objects: [job('make')] },
      { name: 'work', objects: [job('work')], requires: [{ kind: 'Secret', name: 'made', namespace: NS, keys: ['k'], ifMissing: 'fail', message: 'Job make makes it', madeBy: 'make' }] },
    ]);
    // `make` makes nothing on the simulator: `work` fails at its preflight, before its Job
    const before = await cli('run', made, { kubeconfig: sim.kubeconfigPath });
    expect(before.code).toBe(1);
    expect(before.err).toMatch(/next: fix the cause, then uyuni-cdk run \S+ -n uyuni-test --kubeconfig \S+\n/);
    expect(before.err).not.toContain('--rerun');
    expect(before.err).toContain('Job make makes it');
    sim.put({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'made', namespace: NS }, data: { k: b64('v') } });
    const failed = await cli('run', made, { kubeconfig: sim.kubeconfigPath });
    expect(failed.code).toBe(1);
    expect(failed.err).toContain('--rerun work');
  });
});

describe('dist/proxy with the config tarball\'s objects', () => {
  it('counts proxy-cert and uyuni-ca as made by the certs step, not missing; without ssh only that one is unmet', async () => {
    sim = await startSimulator({});
    const ns = 'uyuni-proxy';
    sim.put({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    sim.put({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'proxy-configmap', namespace: ns }, data: { 'config.yaml': 'server: uyuni.example.com\n' } });
    sim.put({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'httpd', namespace: ns }, data: { 'httpd.yaml': b64('httpd: {}\n') } });
    const json = JSON.parse((await cli('plan', PROXY, { kubeconfig: sim.kubeconfigPath, output: 'json' })).out);
    expect(json.unmet.map((u: { object?: string }) => u.object)).toEqual([`Secret ${ns}/ssh`]);
    const made = json.steps.find((st: { name: string }) => st.name === 'proxy').requires
      .filter((q: { action: string }) => q.action === 'made-earlier').map((q: { object: string }) => q.object);
    expect(made).toEqual(expect.arrayContaining([`Secret ${ns}/proxy-cert`, `ConfigMap ${ns}/uyuni-ca`]));
  });
});

describe('permissions the run needs (SelfSubjectAccessReview, before the lock)', () => {
  const INSTALL = path.join(ROOT, 'dist', 'install');

  it('a user who may not patch Deployments, create Leases nor list StorageClasses is told all three, and nothing is written, not even the lock', async () => {
    sim = await startSimulator();
    sim.deny('patch apps/deployments', 'create coordination.k8s.io/leases', 'list storage.k8s.io/storageclasses');
    const mark = sim.requests.length;
    const r = await cli('run', INSTALL, { kubeconfig: sim.kubeconfigPath, yes: true });
    expect(r.code).toBe(1);
    expect(sim.requests.slice(mark).filter((q) => q.method !== 'GET' && !q.path.endsWith('/selfsubjectaccessreviews'))).toEqual([]);
    const all = r.out + r.err;
    expect(all).toContain('refused before any write (nothing was changed): the user of this kubeconfig may not do these 3 things the run needs in namespace uyuni:');
    // cluster-wide: asked, and to be checked, without the namespace
    expect(all).toContain("- list storageclasses.storage.k8s.io (the waits of step volumes: the claims' StorageClasses (cluster-wide)): kubectl auth can-i list storageclasses.storage.k8s.io");
    expect(count(all, '- patch deployments.apps (Deployment/')).toBe(1);
    expect(all).toContain('kubectl -n uyuni auth can-i patch deployments.apps');
    expect(all).toContain("- create leases.coordination.k8s.io (the run's lock): kubectl -n uyuni auth can-i create leases.coordination.k8s.io");
    expect(all).not.toContain('[1/');
  });

  it('a user who may do all of it runs as before', async () => {
    sim = await startSimulator();
    const r = await cli('run', INSTALL, { kubeconfig: sim.kubeconfigPath, yes: true });
    expect({ code: r.code, err: r.err }).toEqual({ code: 0, err: expect.any(String) });
    expect(sim.requests.filter((q) => q.path.endsWith('/selfsubjectaccessreviews')).length).toBeGreaterThan(10);
  });
});
