/**
 * Safe to run twice (docs/runtime.md, "Safety"), on the simulator with the synthesized plans:
 * a finished upgrade's re-run is a true no-op that `plan --detailed-exitcode` predicts; a finished
 * migration never runs again (edited configuration, the committed plan, its Jobs deleted), only
 * `--rerun STEP`, asked first; the pre-sync stops nothing; the server's recorded identity (fqdn,
 * image generation) is kept unless its flag is given.
 */
import { spawn } from 'child_process';
import * as path from 'path';
import { startSimulator, Simulator } from '../../sim';
import { runCommand } from '../../../src/runtime/verbs/commands';
import { changes, BIN, cli, tmpDir, until, writesTo } from './harness';
import { inspectJobs, lines, SERVER_FACTS, putClaims } from './inspect-facts';
import { deleteJobs as deleteJobsOf, dist, finishedMigration as finishedMigrationOn, migrationFacts, migrationInputs, synthExample } from './migration';
import { deployment, job, namespace, NS, service, writePlan } from '../plans';

/** Requests that change something: creates, deletes, merge patches (scale); not server-side applies (`force=true`), which converge. */
const disruptive = (requests: ReadonlyArray<{ method: string; path: string; query: string }>) =>
  changes(requests).filter((r) => r.method === 'POST' || r.method === 'DELETE' || (r.method === 'PATCH' && !/(^|&)force=true/.test(r.query)))
    .map((r) => `${r.method} ${r.path}`);

let sim: Simulator;
afterEach(async () => {
  await sim?.stop();
});

async function finishedMigration(): Promise<void> {
  sim = await finishedMigrationOn();
}

const deleteJobs = () => deleteJobsOf(sim);

describe('a finished upgrade', () => {
  it('plan --detailed-exitcode exits 0, and run then sends no create, delete or scale: a true no-op', async () => {
    sim = await startSimulator({ jobs: inspectJobs() });
    putClaims(sim);
    expect((await cli('run', dist('install'), { kubeconfig: sim.kubeconfigPath })).code).toBe(0);
    // A finished install's re-run: nothing to change, nothing disruptive sent.
    expect((await cli('plan', dist('install'), { kubeconfig: sim.kubeconfigPath, detailedExitcode: true })).code).toBe(0);
    const installed = sim.requests.length;
    expect((await cli('run', dist('install'), { kubeconfig: sim.kubeconfigPath })).code).toBe(0);
    expect(disruptive(sim.requests.slice(installed))).toEqual([]);
    // The first upgrade stops the server: a destructive change that asks (here: --yes).
    const before = await cli('plan', dist('upgrade'), { kubeconfig: sim.kubeconfigPath, detailedExitcode: true });
    expect(before.code).toBe(2);
    expect(before.out).toMatch(/action {4}stop {5}scale to 0 Deployment\/uyuni \(uyuni\) {2}\(1 replica now\)/);
    // the install's objects get the upgrade's bookkeeping labels: relabelled, counted apart
    expect(before.out).toMatch(/^Plan: \d+ to create, 0 to update, 0 to delete, 2 to stop, \d+ to relabel \(bookkeeping labels only\), \d+ unchanged\.$/m);
    expect((await cli('run', dist('upgrade'), { kubeconfig: sim.kubeconfigPath, yes: true })).code).toBe(0);

    const again = await cli('plan', dist('upgrade'), { kubeconfig: sim.kubeconfigPath, detailedExitcode: true });
    expect(again.out).toMatch(/\[3\/13\] stop-server: [^\n]*\n {2}skipped {3}the upgrade of namespace uyuni to 2026\.08 finished at \S+ \(run upgrade-\d{8}T\d{6}\.\d{3}Z\): a data step never runs twice/);
    expect(again.out).toMatch(/^Plan: 0 to create, 0 to update, 0 to delete, 0 to stop, \d+ unchanged\.$/m);
    expect(again.code).toBe(0);
    const mark = sim.requests.length;
    const r = await cli('run', dist('upgrade'), { kubeconfig: sim.kubeconfigPath });
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(disruptive(sim.requests.slice(mark))).toEqual([]);
    expect(r.out).not.toContain('destructive changes');
    expect(sim.get('apps/v1', 'Deployment', 'uyuni', 'uyuni').spec.replicas).toBe(1);

    // Its Jobs deleted (a TTL, kubectl delete jobs): the record decides, nothing runs again.
    await deleteJobs();
    const gone = await cli('plan', dist('upgrade'), { kubeconfig: sim.kubeconfigPath, detailedExitcode: true });
    expect(gone.code).toBe(0);
    const mark2 = sim.requests.length;
    expect((await cli('run', dist('upgrade'), { kubeconfig: sim.kubeconfigPath })).code).toBe(0);
    expect(disruptive(sim.requests.slice(mark2))).toEqual([]);

    // An upgrade to the next image generation is another flow: it runs (and asks).
    const next = synthExample('upgrade.yaml', (c) => { c.images.tag = '2026.09'; c.upgrade.postgresql.from = 18; }).upgrade;
    sim.setJob('uyuni-inspect-db', { logs: lines({ current_pg_version: '18', image_pg_version: '18' }) });
    sim.setJob('uyuni-inspect', { logs: lines({ ...SERVER_FACTS, uyuni_release: '2026.09', current_release: '2026.08' }) });
    const planned = await cli('plan', next, { kubeconfig: sim.kubeconfigPath, detailedExitcode: true });
    expect(planned.code).toBe(2);
    expect(planned.out).toMatch(/^Plan: \d+ to create, \d+ to update, 0 to delete, 2 to stop(, \d+ to relabel \(bookkeeping labels only\))?, \d+ unchanged\.$/m);
    const upgraded = await cli('run', next, { kubeconfig: sim.kubeconfigPath, yes: true });
    expect(upgraded.err).toBe('');
    expect(upgraded.code).toBe(0);
    expect(sim.get('apps/v1', 'Deployment', 'uyuni', 'uyuni').spec.template.spec.containers[0].image).toMatch(/:2026\.09$/);
    expect(JSON.parse(sim.get('v1', 'ConfigMap', 'uyuni-cdk-history', 'uyuni').data['flow.upgrade'])).toMatchObject({ imageGeneration: '2026.09', finishedAt: expect.any(String) });
  });
});

describe('an upgrade under way', () => {
  it('a resumed upgrade stops the server again (its stop is recorded only when the upgrade finishes), and the done data steps stay done', async () => {
    sim = await startSimulator({ jobs: { ...inspectJobs(), 'uyuni-db-migrate': { outcome: 'fail', exitCode: 1 } } });
    putClaims(sim);
    expect((await cli('run', dist('install'), { kubeconfig: sim.kubeconfigPath })).code).toBe(0);
    expect((await cli('run', dist('upgrade'), { kubeconfig: sim.kubeconfigPath, yes: true })).code).toBe(1);
    const record = JSON.parse(sim.get('v1', 'ConfigMap', 'uyuni-cdk-history', 'uyuni').data['flow.upgrade']);
    expect(Object.keys(record.steps).sort()).toEqual(['inspect', 'inspect-db', 'setup-marker']);
    expect(record.finishedAt).toBeUndefined();
    // Someone starts the server while the upgrade is stuck.
    const live = sim.get('apps/v1', 'Deployment', 'db', 'uyuni');
    sim.put({ ...live, spec: { ...live.spec, replicas: 1 } });
    await deleteJobs();
    sim.setJob('uyuni-db-migrate', { outcome: 'succeed' });
    const plan = await cli('plan', dist('upgrade'), { kubeconfig: sim.kubeconfigPath });
    expect(plan.out).toMatch(/action {4}stop {5}scale to 0 Deployment\/db \(uyuni\) {2}\(1 replica now\)/);
    expect(plan.out).toMatch(/\[1\/13\] inspect: [^\n]*\n {2}skipped {3}done in this upgrade by run upgrade-/);
    const r = await cli('run', dist('upgrade'), { kubeconfig: sim.kubeconfigPath, yes: true });
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/scale to 0 Deployment\/db \(uyuni\): done/);
    expect(sim.get('batch/v1', 'Job', 'uyuni-inspect', 'uyuni')).toBeUndefined();
    const finished = JSON.parse(sim.get('v1', 'ConfigMap', 'uyuni-cdk-history', 'uyuni').data['flow.upgrade']);
    expect(Object.keys(finished.steps).sort()).toEqual(['db-finalize', 'db-upgrade', 'inspect', 'inspect-db', 'setup-marker', 'stop-db', 'stop-server']);
  });
});

describe('a finished migration never runs again', () => {
  it('an edited configuration: refused before any write, saying when and from where it finished and what to use now', async () => {
    await finishedMigration();
    const edited = synthExample('migration.yaml', (c) => { c.images.tag = '2026.09'; }).migrate;
    const plan = await cli('plan', edited, { kubeconfig: sim.kubeconfigPath, detailedExitcode: true });
    expect(plan.code).toBe(1);
    expect(plan.out).toContain('run would refuse before any write:');
    const mark = sim.requests.length;
    const r = await cli('run', edited, { kubeconfig: sim.kubeconfigPath, yes: true });
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/refused before any write: the migration into namespace uyuni finished at \d{4}-\d\d-\d\dT[\d:.]+Z from old-server\.example\.com \(run migrate-\d{8}T\d{6}\.\d{3}Z\)/);
    expect(r.err).toContain('use the install plan of the same configuration without `migration`');
    expect(changes(sim.requests.slice(mark))).toEqual([]);
  });

  it('the committed plan, and again with its Jobs deleted: refused, no Job made, nothing scaled', async () => {
    await finishedMigration();
    for (const jobsGone of [false, true]) {
      if (jobsGone) await deleteJobs();
      const mark = sim.requests.length;
      const r = await cli('run', dist('migrate'), { kubeconfig: sim.kubeconfigPath, yes: true });
      expect(r.code).toBe(1);
      expect(r.err).toContain('a finished migration never runs again');
      expect(changes(sim.requests.slice(mark))).toEqual([]);
    }
    expect(sim.list('batch/v1', 'Job', 'uyuni')).toEqual([]);
    // Nor its pre-sync, which would copy over the live claims.
    const prepare = await cli('run', dist('migrate-prepare'), { kubeconfig: sim.kubeconfigPath, yes: true });
    expect(prepare.code).toBe(1);
    expect(prepare.err).toMatch(/a finished migration never repeats;[^\n]*\n {2}steps that would run again \(it was not part of it\): data-presync \(--rerun STEP repeats one; it asks first\)/);
    expect(sim.list('batch/v1', 'Job', 'uyuni')).toEqual([]);
  });

  it('--rerun STEP repeats that one data step, asked first; the others stay done', async () => {
    await finishedMigration();
    await deleteJobs();
    const mark = sim.requests.length;
    const asked = await cli('run', dist('migrate'), { kubeconfig: sim.kubeconfigPath, rerun: ['db-finalize'] });
    expect(asked.code).toBe(2);
    expect(asked.out).toMatch(/data-step\s+Job\/uyuni-db-finalize \(uyuni\)\s+\[db-finalize\]\s+--rerun db-finalize: the migration into namespace uyuni finished at/);
    expect(changes(sim.requests.slice(mark))).toEqual([]);
    const ran = sim.requests.length;
    const r = await cli('run', dist('migrate'), { kubeconfig: sim.kubeconfigPath, rerun: ['db-finalize'], yes: true });
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    // Only that Job was applied (the cleanup step then deletes it with the other Jobs that mount
    // the migration-data claim: kube-controller-manager keeps a claim a finished pod still names).
    const applied = writesTo(sim.requests.slice(ran), '/jobs/').filter((q) => q.method !== 'DELETE').map((q) => q.path.split('/').pop());
    expect([...new Set(applied)]).toEqual(['uyuni-db-finalize']);
    expect(r.out).toMatch(/data-sync: skipped, the migration into namespace uyuni finished at/);
  });
});

describe('the pre-sync', () => {
  it('stops nothing: the new server keeps its replicas', async () => {
    sim = await startSimulator({ jobs: migrationFacts() });
    migrationInputs(sim);
    sim.put({
      apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'uyuni', namespace: 'uyuni' },
      spec: { replicas: 1, selector: { matchLabels: { app: 'x' } }, template: { metadata: { labels: { app: 'x' } }, spec: { containers: [{ name: 'x', image: 'x' }] } } },
    });
    const plan = await cli('plan', dist('migrate-prepare'), { kubeconfig: sim.kubeconfigPath });
    expect(plan.out).not.toContain('action ');
    const mark = sim.requests.length;
    const r = await cli('run', dist('migrate-prepare'), { kubeconfig: sim.kubeconfigPath, yes: true });
    expect(r.code).toBe(0);
    // it reads them (a set-up server would refuse it: records.test.ts), and writes none
    expect(sim.requests.slice(mark).filter((x) => x.method !== 'GET' && x.path.includes('/deployments'))).toEqual([]);
    expect(sim.get('apps/v1', 'Deployment', 'uyuni', 'uyuni').spec.replicas).toBe(1);
  });
});

describe("the server's identity is kept", () => {
  it('an older image generation and another fqdn are refused naming both values; their flags allow them, asked first', async () => {
    sim = await startSimulator();
    const newer = synthExample('../uyuni.yaml', (c) => { c.images = { ...(c.images ?? {}), tag: '2099.01' }; }).install;
    expect((await cli('run', newer, { kubeconfig: sim.kubeconfigPath })).code).toBe(0);
    const mark = sim.requests.length;
    const older = await cli('run', dist('install'), { kubeconfig: sim.kubeconfigPath, yes: true });
    expect(older.code).toBe(1);
    expect(older.err).toMatch(/the server would move to an older image generation: 2099\.01 \(recorded by run install-\d{8}T\d{6}\.\d{3}Z of plan install at [^)]+\) → 2026\.08; [^:]+: refused \(--allow-downgrade allows it\)/);
    const renamed = synthExample('../uyuni.yaml', (c) => { c.fqdn = 'other.example.com'; c.images = { ...(c.images ?? {}), tag: '2099.01' }; }).install;
    const fqdn = await cli('run', renamed, { kubeconfig: sim.kubeconfigPath, yes: true });
    expect(fqdn.code).toBe(1);
    expect(fqdn.err).toContain("the server's fqdn would change from uyuni.example.com");
    expect(fqdn.err).toContain('to other.example.com');
    expect(fqdn.err).toContain('--allow-fqdn-change');
    expect(changes(sim.requests.slice(mark))).toEqual([]);
    expect(sim.get('apps/v1', 'Deployment', 'uyuni', 'uyuni').spec.template.spec.containers[0].image).toMatch(/:2099\.01$/);

    // The flag allows it, as a destructive change: without --yes and a terminal, nothing yet.
    const flagged = await cli('run', dist('install'), { kubeconfig: sim.kubeconfigPath, allowDowngrade: true });
    expect(flagged.code).toBe(2);
    expect(flagged.out).toMatch(/identity\s+downgrade\s+\[\(run\)\]\s+--allow-downgrade: the server would move to an older image generation/);
    expect((await cli('run', dist('install'), { kubeconfig: sim.kubeconfigPath, allowDowngrade: true, yes: true })).code).toBe(0);
    expect(sim.get('apps/v1', 'Deployment', 'uyuni', 'uyuni').spec.template.spec.containers[0].image).toMatch(/:2026\.08$/);
  });
});

describe('destructive changes ask on a terminal', () => {
  /** A run with a terminal to ask on that answers `answer`. */
  async function runAnswering(dir: string, answer: string): Promise<{ code: number; out: string; questions: string[] }> {
    const questions: string[] = [];
    let out = '';
    const code = await runCommand(dir, { kubeconfig: sim.kubeconfigPath, runDir: tmpDir() }, {
      out: (t) => { out += t; }, err: (t) => { out += t; }, isTTY: false,
      ask: async (q) => { questions.push(q); return answer; },
    });
    return { code, out, questions };
  }

  it("asks nothing on a first install; a prune asks, and only 'yes' approves", async () => {
    sim = await startSimulator();
    const steps = (extra: boolean) => [
      { name: 'namespace', objects: [namespace()] },
      { name: 'server', objects: [service('uyuni'), deployment('uyuni'), ...(extra ? [service('extra')] : [])] },
    ];
    const dir = writePlan(steps(true));
    const first = await runAnswering(dir, 'no');
    expect(first.code).toBe(0);
    expect(first.questions).toEqual([]);
    writePlan(steps(false), { dir });
    for (const answer of ['no', 'y', 'YES']) {
      const declined = await runAnswering(dir, answer);
      expect(declined.code).toBe(1);
      expect(declined.questions).toEqual([expect.stringContaining("Only 'yes' will be accepted to approve.")]);
      expect(declined.out).toMatch(/delete\s+Service\/extra \(uyuni-test\)\s+\[\(run\)\]\s+pruned/);
      expect(declined.out).toContain('destructive changes not approved: nothing was done');
      expect(sim.get('v1', 'Service', 'extra', NS)).toBeDefined();
    }
    const approved = await runAnswering(dir, 'yes');
    expect(approved.code).toBe(0);
    expect(approved.out).toContain('going ahead: answered yes');
    expect(sim.get('v1', 'Service', 'extra', NS)).toBeUndefined();
  });
});

/** The real CLI on a pseudo-terminal (script(1)), answering the question with `answer`. */
function onTerminal(args: string[], answer: string): Promise<{ code: number; text: string }> {
  const command = [process.execPath, BIN, ...args].map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(' ');
  const child = spawn('script', ['-qec', command, '/dev/null'], { stdio: ['pipe', 'pipe', 'pipe'] });
  let text = '';
  child.stdout.on('data', (d) => { text += d; });
  child.stderr.on('data', (d) => { text += d; });
  const done = new Promise<number>((resolve) => child.on('close', (code) => resolve(code ?? -1)));
  return until('the question', () => text.includes('Enter a value:'), 30_000)
    .then(() => { child.stdin.write(`${answer}\r`); return done; })
    .then((code) => ({ code, text }));
}

describe('on a real terminal', () => {
  it("the CLI asks, and only 'yes' approves", async () => {
    sim = await startSimulator();
    const steps = (extra: boolean) => [{ name: 'namespace', objects: [namespace()] }, { name: 'server', objects: [service('uyuni'), ...(extra ? [service('extra')] : [])] }];
    const dir = writePlan(steps(true));
    expect((await cli('run', dir, { kubeconfig: sim.kubeconfigPath })).code).toBe(0);
    writePlan(steps(false), { dir });
    const args = ['run', dir, '--kubeconfig', sim.kubeconfigPath, '--run-dir', tmpDir()];
    const no = await onTerminal(args, 'no');
    expect(no.text).toMatch(/destructive changes \(1\):\r?\n\s+delete\s+Service\/extra \(uyuni-test\)/);
    expect(no.text).toContain("Only 'yes' will be accepted to approve.");
    expect(no.code).toBe(1);
    expect(sim.get('v1', 'Service', 'extra', NS)).toBeDefined();
    const yes = await onTerminal(args, 'yes');
    expect(yes.code).toBe(0);
    expect(yes.text).toContain('going ahead: answered yes');
    expect(sim.get('v1', 'Service', 'extra', NS)).toBeUndefined();
  }, 60_000);
});

describe('pruning deletes only what was shown', () => {
  it('a member that turns up during the run is kept for the next run to show', async () => {
    sim = await startSimulator({ jobs: { work: { durationMs: 100_000 } } });
    const dir = writePlan([{ name: 'namespace', objects: [namespace()] }, { name: 'server', objects: [service('uyuni')] }, { name: 'work', objects: [job('work')] }]);
    const running = cli('run', dir, { kubeconfig: sim.kubeconfigPath });
    await until('the work Job', () => sim.get('batch/v1', 'Job', 'work', NS) !== undefined);
    // A member of the set the plan does not have, made while the run waits (another run, a person).
    const live = sim.get('v1', 'Service', 'uyuni', NS);
    sim.put({ ...live, metadata: { name: 'late', namespace: NS, labels: live.metadata.labels } });
    const r = await running;
    expect(r.code).toBe(0);
    expect(r.out).toContain('prune Service/late (uyuni-test): kept (not shown before the run: the next run lists it)');
    expect(sim.get('v1', 'Service', 'late', NS)).toBeDefined();
  });
});

describe('saved plans', () => {
  const steps = (extra: boolean, image = 'registry.opensuse.org/uyuni/server:latest') => [
    { name: 'namespace', objects: [namespace()] },
    { name: 'server', objects: [service('uyuni'), { ...deployment('uyuni'), spec: { ...deployment('uyuni').spec, template: { ...deployment('uyuni').spec.template, spec: { containers: [{ name: 'main', image }] } } } }, ...(extra ? [service('extra')] : [])] },
  ];
  /** Writes other than server-side apply dry runs. */
  const writes = (from: number) => changes(sim.requests.slice(from));

  it('run FILE applies exactly what plan --out showed, asking nothing (it was reviewed)', async () => {
    sim = await startSimulator();
    const dir = writePlan(steps(true));
    expect((await cli('run', dir, { kubeconfig: sim.kubeconfigPath })).code).toBe(0);
    writePlan(steps(false), { dir });
    const file = path.join(tmpDir(), 'prune.plan');
    const shown = await cli('plan', dir, { kubeconfig: sim.kubeconfigPath, out: file });
    expect(shown.code).toBe(0);
    expect(shown.out).toContain(`Saved the plan to ${file}`);
    const r = await cli('run', file, { kubeconfig: sim.kubeconfigPath });
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).toContain('going ahead: the saved plan was reviewed');
    expect(sim.get('v1', 'Service', 'extra', NS)).toBeUndefined();
    // Its options are its own.
    const flags = await cli('run', file, { kubeconfig: sim.kubeconfigPath, rerun: ['server'] });
    expect(flags.code).toBe(2);
    expect(flags.err).toContain('is a saved plan: it carries its own options; --rerun belong to `uyuni-cdk plan --out`');
  });

  it('refuses before any write when the cluster or the plan directory changed since', async () => {
    sim = await startSimulator();
    const dir = writePlan(steps(true));
    expect((await cli('run', dir, { kubeconfig: sim.kubeconfigPath })).code).toBe(0);
    writePlan(steps(false), { dir });
    const file = path.join(tmpDir(), 'prune.plan');
    expect((await cli('plan', dir, { kubeconfig: sim.kubeconfigPath, out: file })).code).toBe(0);
    // Someone changes the Deployment's image in the cluster: the saved plan said "unchanged".
    const live = sim.get('apps/v1', 'Deployment', 'uyuni', NS);
    sim.put({ ...live, spec: { ...live.spec, template: { ...live.spec.template, spec: { containers: [{ name: 'main', image: 'registry.opensuse.org/uyuni/server:other' }] } } } });
    let mark = sim.requests.length;
    const cluster = await cli('run', file, { kubeconfig: sim.kubeconfigPath });
    expect(cluster.code).toBe(1);
    expect(cluster.err).toMatch(/the cluster changed since the plan was saved \([^)]+\): step server: Deployment\/uyuni \(uyuni-test\) update/);
    expect(writes(mark)).toEqual([]);
    expect(sim.get('v1', 'Service', 'extra', NS)).toBeDefined();

    expect((await cli('plan', dir, { kubeconfig: sim.kubeconfigPath, out: file })).code).toBe(0);
    writePlan(steps(false, 'registry.opensuse.org/uyuni/server:2026.09'), { dir });
    mark = sim.requests.length;
    const changed = await cli('run', file, { kubeconfig: sim.kubeconfigPath });
    expect(changed.code).toBe(2);
    expect(changed.err).toContain(`${dir} changed since the plan was saved`);
    expect(sim.requests.slice(mark)).toEqual([]);
  });
});
