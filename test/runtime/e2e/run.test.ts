import * as fs from 'fs';
import * as path from 'path';
import { readPlan } from '../../../src/plan/reader';
import { startSimulator, Simulator, SimOptions } from '../../sim';
import { changes, cli, filesUnder, installPlanDir, spawnCli, tmpDir, until, writesTo } from './harness';
import { certificate, deployment, job, namespace, NS, pvc, service, writePlan } from '../plans';

let sim: Simulator;
async function start(opts: SimOptions = {}): Promise<Simulator> {
  sim = await startSimulator(opts);
  return sim;
}
afterEach(async () => {
  await sim?.stop();
});

describe('uyuni-cdk run against the API simulator', () => {
  it('runs the install plan to the end and leaves every object in the cluster', async () => {
    await start();
    const dir = installPlanDir();
    const plan = readPlan(dir);
    const runDir = tmpDir();
    const r = await cli('run', dir, { kubeconfig: sim.kubeconfigPath, runDir });
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    for (const s of plan.steps) {
      for (const o of s.objects) expect(sim.get(o.apiVersion, o.kind, o.name, o.namespace)).toBeDefined();
    }
    // every Job's log saved as <runDir>/<step>/<pod>.<container>.log
    for (const s of plan.steps) {
      for (const o of s.objects.filter((x) => x.kind === 'Job')) {
        const logs = fs.readdirSync(path.join(runDir, s.name));
        expect(logs.some((f) => f.startsWith(`${o.name}-`) && f.endsWith('.log'))).toBe(true);
      }
    }
    const events = fs.readFileSync(path.join(runDir, 'events.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(events.filter((e) => e.type === 'step-done').map((e) => e.step)).toEqual(plan.steps.map((s) => s.name));
    expect(events[events.length - 1]).toMatchObject({ type: 'run-done', status: 'done', exitCode: 0 });
    const first = plan.steps[plan.steps.length - 1].objects[0];
    expect(sim.get(first.apiVersion, first.kind, first.name, first.namespace).metadata.labels['uyuni-cdk.io/run']).toMatch(/^install-/);
  });

  it('stops at a failing step Job: its last log lines, exit code and reason shown, later steps not applied', async () => {
    const lines = Array.from({ length: 40 }, (_, i) => `migrating table ${i}`).concat(['ERROR: relation "rhnserver" does not exist']);
    await start({ jobs: { 'db-migrate': { outcome: 'fail', exitCode: 3, logs: lines } } });
    const dir = writePlan([
      { name: 'namespace', objects: [namespace()] },
      { name: 'migrate', objects: [job('db-migrate')] },
      { name: 'server', objects: [deployment('uyuni')] },
    ], { name: 'migrate' });
    const r = await cli('run', dir, { kubeconfig: sim.kubeconfigPath });
    expect(r.code).toBe(1);
    expect(r.out).toContain('migrate: FAILED');
    expect(r.out).toContain('exit code 3');
    expect(r.out).toContain('ERROR: relation "rhnserver" does not exist');
    expect(r.out).toMatch(/last 20 lines:\n(\s+migrating table \d+\n)+\s+ERROR/);
    expect(r.out).toContain('migrating table 21');
    // every line streamed live, prefixed by step and pod; only the last 20 in the failure report
    expect(r.out).toMatch(/\n  migrate\/db-migrate-\w+\/main \| migrating table 0\n/);
    expect(r.out.split('\n').filter((l) => /^\s+migrating table 0$/.test(l))).toHaveLength(0);
    expect(r.err).toContain('run failed (exit 1)');
    expect(sim.get('apps/v1', 'Deployment', 'uyuni', NS)).toBeUndefined();
    expect(writesTo(sim.requests, '/deployments')).toEqual([]);
  });

  it('fails a step whose pod is stuck in ImagePullBackOff after the grace window, naming the reason', async () => {
    await start({ jobs: { setup: { outcome: 'image-pull-backoff' } } });
    const dir = writePlan([{ name: 'namespace', objects: [namespace()] }, { name: 'setup', objects: [job('setup')] }]);
    const t0 = Date.now();
    const r = await cli('run', dir, { kubeconfig: sim.kubeconfigPath, stuckGrace: 1 });
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/setup: FAILED .*stuck: (ImagePullBackOff|ErrImagePull)/);
    expect(r.out).toContain('ImagePullBackOff');
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1000);
  });

  it('fails a step that outlives its timeout, naming what it waited for', async () => {
    await start({ jobs: { setup: { outcome: 'hang' } } });
    const dir = writePlan([{ name: 'namespace', objects: [namespace()] }, { name: 'setup', objects: [job('setup')], timeoutSeconds: 1 }, { name: 'server', objects: [deployment('uyuni')] }]);
    const r = await cli('run', dir, { kubeconfig: sim.kubeconfigPath });
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/setup: FAILED after \d+\.\ds: timed out after 1s \(the step's timeout\), still waiting for: Job\/setup \(uyuni-test\) complete: Job running/);
    expect(sim.get('apps/v1', 'Deployment', 'uyuni', NS)).toBeUndefined();
  });

  it('applies into another namespace with --namespace', async () => {
    await start();
    const r = await cli('run', writePlan([{ name: 'namespace', objects: [namespace()] }, { name: 'setup', objects: [job('setup')] }]), { kubeconfig: sim.kubeconfigPath, namespace: 'elsewhere' });
    expect(r.code).toBe(0);
    expect(sim.get('v1', 'Namespace', 'elsewhere')).toBeDefined();
    expect(sim.get('batch/v1', 'Job', 'setup', 'elsewhere')?.status?.succeeded).toBe(1);
    expect(sim.get('v1', 'Namespace', NS)).toBeUndefined();
  });

  it('does not block on a WaitForFirstConsumer PVC whose consumer comes in a later step', async () => {
    await start({ volumeBindingMode: 'WaitForFirstConsumer' });
    const dir = writePlan([
      { name: 'namespace', objects: [namespace()] },
      { name: 'volumes', objects: [pvc('var-pgsql')], timeoutSeconds: 5 },
      { name: 'setup', objects: [job('setup', 'echo ok', { volumes: ['var-pgsql'] })] },
    ]);
    const r = await cli('run', dir, { kubeconfig: sim.kubeconfigPath, output: 'json' });
    expect(r.code).toBe(0);
    const events = r.out.trim().split('\n').map((l) => JSON.parse(l));
    const volumesDone = events.findIndex((e) => e.type === 'step-done' && e.step === 'volumes');
    expect(volumesDone).toBeGreaterThan(0);
    expect(sim.get('v1', 'PersistentVolumeClaim', 'var-pgsql', NS).status.phase).toBe('Bound'); // bound once the Job's pod came
  });

  it('retries 429 (Retry-After), 5xx and dropped or expired watches', async () => {
    await start({ clockSpeed: 10 });
    const dir = writePlan([
      { name: 'namespace', objects: [namespace()] },
      { name: 'setup', objects: [job('setup', 'x')] },
      { name: 'server', objects: [deployment('uyuni')] },
    ]);
    sim.failNext(2, 503, 'PATCH');
    sim.throttleNext(2, 1, 'GET /apis/batch/v1/namespaces');
    const running = cli('run', dir, { kubeconfig: sim.kubeconfigPath });
    await until('a watch on the Job', () => sim.requests.some((q) => q.path.includes('/jobs') && q.query.includes('watch')));
    sim.dropWatches();
    await new Promise((r) => setTimeout(r, 50));
    sim.compact();
    sim.dropWatches();
    const r = await running;
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(sim.requests.filter((q) => q.status === 503).length).toBe(2);
    expect(sim.requests.filter((q) => q.status === 429).length).toBe(2);
    expect(sim.get('apps/v1', 'Deployment', 'uyuni', NS)).toBeDefined();
  });

  it('keeps every log line when the log request fails transiently', async () => {
    await start({ jobs: { setup: { logs: ['line one', 'line two'] } } });
    const dir = writePlan([{ name: 'namespace', objects: [namespace()] }, { name: 'setup', objects: [job('setup')] }]);
    sim.failNext(2, 503, '/log');
    const runDir = tmpDir();
    const r = await cli('run', dir, { kubeconfig: sim.kubeconfigPath, runDir });
    expect(r.code).toBe(0);
    expect(sim.requests.filter((q) => q.path.endsWith('/log') && q.status === 503)).toHaveLength(2);
    const [file] = fs.readdirSync(path.join(runDir, 'setup'));
    expect(file).toMatch(/^setup-\w+\.main\.log$/);
    expect(fs.readFileSync(path.join(runDir, 'setup', file), 'utf8')).toBe('line one\nline two\n');
    expect(r.out).toMatch(/setup\/setup-\w+\/main \| line two/);
  });

  it('stops with the requirement\'s message when a required ConfigMap is missing, applying nothing of the step', async () => {
    await start();
    const dir = writePlan([
      { name: 'namespace', objects: [namespace()] },
      {
        name: 'migrate', objects: [job('migrate')],
        requires: [{ kind: 'ConfigMap', name: 'source-host', namespace: NS, keys: ['fqdn'], ifMissing: 'fail', message: 'create it: kubectl create configmap source-host --from-literal=fqdn=old.example.com' }],
      },
    ]);
    const r = await cli('run', dir, { kubeconfig: sim.kubeconfigPath });
    expect(r.code).toBe(1);
    expect(r.out + r.err).toContain('kubectl create configmap source-host');
    expect(sim.get('batch/v1', 'Job', 'migrate', NS)).toBeUndefined();
  });

  it('creates a required Secret with random values that never appear in the output or the run directory', async () => {
    await start();
    const dir = writePlan([
      { name: 'namespace', objects: [namespace()] },
      {
        name: 'credentials', objects: [service('db')],
        requires: [
          { kind: 'Secret', name: 'db-credentials', namespace: NS, keys: ['username', 'password'], ifMissing: 'generate', generate: { username: { literal: 'spacewalk' }, password: { random: { length: 32 } } } },
          { kind: 'Secret', name: 'reportdb-credentials', namespace: NS, keys: ['password'], ifMissing: 'generate' },
        ],
      },
    ]);
    const runDir = tmpDir();
    sim.setLatency(40);
    const r = await cli('run', dir, { kubeconfig: sim.kubeconfigPath, runDir });
    sim.setLatency(0);
    expect(r.code).toBe(0);
    // both read, then both created together (issue 36), said in the step's order
    const secretWrites = sim.requests.filter((q) => q.method === 'POST' && q.path === `/api/v1/namespaces/${NS}/secrets`);
    expect(secretWrites).toHaveLength(2);
    expect(secretWrites[1].at).toBeLessThan(secretWrites[0].done!);
    expect(r.out.indexOf('reportdb-credentials')).toBeGreaterThan(r.out.indexOf('db-credentials'));
    expect(Buffer.from(sim.get('v1', 'Secret', 'reportdb-credentials', NS).data.password, 'base64').toString()).toMatch(/^[A-Za-z0-9]{24}$/);
    const secret = sim.get('v1', 'Secret', 'db-credentials', NS);
    const password = Buffer.from(secret.data.password, 'base64').toString();
    expect(password).toMatch(/^[A-Za-z0-9]{32}$/);
    expect(Buffer.from(secret.data.username, 'base64').toString()).toBe('spacewalk');
    expect(r.out).toContain('db-credentials');
    for (const text of [r.out, r.err, ...filesUnder(runDir).map((f) => f.text)]) {
      expect(text).not.toContain(password);
      expect(text).not.toContain(secret.data.password);
    }
    // A second run keeps the values.
    expect((await cli('run', dir, { kubeconfig: sim.kubeconfigPath })).code).toBe(0);
    expect(sim.get('v1', 'Secret', 'db-credentials', NS).data.password).toBe(secret.data.password);
  });

  describe('gates from facts an inspect Job printed', () => {
    const plan = (targetPg: string) => writePlan([
      { name: 'namespace', objects: [namespace()] },
      { name: 'inspect', objects: [job('inspect')], factsFrom: { apiVersion: 'batch/v1', kind: 'Job', name: 'inspect', namespace: NS } },
      {
        name: 'upgrade-db', objects: [job('pg-upgrade')],
        gates: [{ type: 'compare-versions', left: { value: targetPg }, op: '>=', right: { fact: 'pg_version' }, message: 'PostgreSQL cannot be downgraded' }],
      },
    ], { name: 'upgrade' });
    const sims = () => start({ jobs: { inspect: { logs: ['inspecting /var/lib/pgsql', 'pg_version=16', 'uyuni_version=2025.10'] } } });

    it('refuses a PostgreSQL downgrade before applying the gated step', async () => {
      await sims();
      const r = await cli('run', plan('14'), { kubeconfig: sim.kubeconfigPath });
      expect(r.code).toBe(1);
      expect(r.out).toContain('gate REFUSED: PostgreSQL cannot be downgraded (pg_version is 16, expected 14 or older)');
      expect(sim.get('batch/v1', 'Job', 'pg-upgrade', NS)).toBeUndefined();
    });

    it('accepts an upgrade', async () => {
      await sims();
      const r = await cli('run', plan('17'), { kubeconfig: sim.kubeconfigPath });
      expect(r.code).toBe(0);
      expect(r.out).toContain('facts: pg_version=16 uyuni_version=2025.10');
      expect(sim.get('batch/v1', 'Job', 'pg-upgrade', NS)).toBeDefined();
    });
  });

  it('runs scale and delete actions before applying the step', async () => {
    await start();
    const first = writePlan([{ name: 'namespace', objects: [namespace()] }, { name: 'server', objects: [deployment('old-server', 2), job('old-job')] }]);
    expect((await cli('run', first, { kubeconfig: sim.kubeconfigPath })).code).toBe(0);
    const dep = { apiVersion: 'apps/v1', kind: 'Deployment', name: 'old-server', namespace: NS };
    const oldJob = { apiVersion: 'batch/v1', kind: 'Job', name: 'old-job', namespace: NS };
    const second = writePlan([{
      name: 'stop', objects: [job('migrate')],
      actions: [{ type: 'scale', object: dep, replicas: 0 }, { type: 'delete', object: oldJob }],
      waits: [{ object: dep, for: 'scaled-down' }, { object: oldJob, for: 'deleted' }, { object: { ...oldJob, name: 'migrate' }, for: 'complete' }],
    }], { name: 'migrate' });
    // Both are destructive: listed, and without a terminal or --yes nothing is written.
    const before = sim.requests.length;
    const refused = await cli('run', second, { kubeconfig: sim.kubeconfigPath });
    expect(refused.code).toBe(2);
    expect(refused.out).toMatch(/scale-down\s+Deployment\/old-server \(uyuni-test\)\s+\[stop\]\s+scale to 0 \(2 replicas now\)/);
    expect(refused.out).toMatch(/delete\s+Job\/old-job \(uyuni-test\)\s+\[stop\]/);
    expect(changes(sim.requests.slice(before))).toEqual([]);
    const r = await cli('run', second, { kubeconfig: sim.kubeconfigPath, yes: true });
    expect(r.code).toBe(0);
    expect(sim.get('apps/v1', 'Deployment', 'old-server', NS).spec.replicas).toBe(0);
    expect(sim.get('batch/v1', 'Job', 'old-job', NS)).toBeUndefined();
    const writes = sim.requests.filter((q) => q.method !== 'GET');
    const scaleAt = writes.findIndex((q) => q.method === 'PATCH' && q.path.endsWith('/deployments/old-server'));
    const applyAt = writes.findIndex((q) => q.method === 'PATCH' && q.path.endsWith('/jobs/migrate'));
    expect(scaleAt).toBeGreaterThanOrEqual(0);
    expect(scaleAt).toBeLessThan(applyAt);
  });

  it('names the missing CRD when cert-manager is not installed', async () => {
    await start({ certManager: false });
    const dir = writePlan([{ name: 'namespace', objects: [namespace()] }, { name: 'tls', objects: [certificate('uyuni-cert')] }]);
    const r = await cli('run', dir, { kubeconfig: sim.kubeconfigPath });
    expect(r.code).toBe(1);
    expect(r.out + r.err).toContain('certificates.cert-manager.io');
  });

  it('exits 3 when nothing listens at the cluster address', async () => {
    await start();
    const kc = path.join(tmpDir(), 'kubeconfig');
    fs.copyFileSync(sim.kubeconfigPath, kc);
    await sim.stop();
    const r = await cli('run', installPlanDir(), { kubeconfig: kc });
    expect(r.code).toBe(3);
    expect(r.err).toMatch(/cannot reach the cluster at http:\/\/127\.0\.0\.1:\d+: ECONNREFUSED/);
  });

  it('exits 3 when the TLS handshake fails (https:// to a plain HTTP port)', async () => {
    await start();
    const kc = path.join(tmpDir(), 'kubeconfig');
    fs.writeFileSync(kc, fs.readFileSync(sim.kubeconfigPath, 'utf8').replace('http://', 'https://'));
    const r = await cli('run', installPlanDir(), { kubeconfig: kc });
    expect(r.code).toBe(3);
    expect(r.err).toMatch(/cannot reach the cluster at https:\/\/127\.0\.0\.1:\d+/);
  });

  it('exits 2 on a broken plan directory and an unknown --rerun step', async () => {
    await start();
    const dir = tmpDir();
    fs.writeFileSync(path.join(dir, 'uyuni.plan'), '{"formatVersion": 1, "steps": [');
    expect((await cli('run', dir, { kubeconfig: sim.kubeconfigPath })).code).toBe(2);
    expect((await cli('run', installPlanDir(), { kubeconfig: sim.kubeconfigPath, rerun: ['nope'] })).code).toBe(2);
    expect(changes(sim.requests)).toEqual([]);
  });

  it.each([
    ['null', () => null, /uyuni\.plan: must hold a JSON object \(the plan index\), not null/],
    ['steps: [null]', (p: any) => ({ ...p, steps: [null] }), /uyuni\.plan: steps\[0\] must be an object, not null/],
    ['an unknown action type', (p: any) => { p.steps[1].actions = [{ type: 'restart', object: p.steps[1].objects[0] }]; return p; },
      /steps\[1\] \(setup\)\.actions\[0\]\.type must be one of "scale", "delete", not "restart"/],
    ['an unknown gate type', (p: any) => { p.steps[1].gates = [{ type: 'greater', fact: 'x', message: 'm' }]; return p; },
      /steps\[1\] \(setup\)\.gates\[0\]\.type must be one of "compare-versions", "equals", "not-equals", "present", not "greater"/],
    ['a requirement without a name', (p: any) => { p.steps[1].requires = [{ kind: 'Secret', namespace: NS, keys: ['a'], ifMissing: 'generate' }]; return p; },
      /steps\[1\] \(setup\)\.requires\[0\]\.name is required/],
  ])('exits 2 on a uyuni.plan with %s, naming the field, before anything is sent to the cluster', async (_what, edit, message) => {
    await start();
    const dir = writePlan([{ name: 'namespace', objects: [namespace()] }, { name: 'setup', objects: [job('setup')] }]);
    const file = path.join(dir, 'uyuni.plan');
    fs.writeFileSync(file, JSON.stringify(edit(JSON.parse(fs.readFileSync(file, 'utf8')))));
    const r = await cli('run', dir, { kubeconfig: sim.kubeconfigPath });
    expect(r.code).toBe(2);
    expect(r.err).toMatch(message);
    expect(sim.requests).toEqual([]);
  });
});

describe('resume', () => {
  const plan = () => writePlan([
    { name: 'namespace', objects: [namespace()] },
    { name: 'inspect', objects: [job('inspect')] },
    { name: 'setup', objects: [job('setup')], timeoutSeconds: 120 },
    { name: 'server', objects: [deployment('uyuni')] },
  ]);

  it('after the runtime was killed mid-step: skips completed Jobs, attaches to the running one', async () => {
    await start({ jobs: { setup: { durationMs: 150_000, logs: ['step 1', 'step 2', 'step 3'] } } }); // 3 s real at 50x
    const dir = plan();
    const first = spawnCli(['run', dir, '--kubeconfig', sim.kubeconfigPath, '--run-dir', tmpDir()]);
    await until('the setup pod running', () => sim.list('v1', 'Pod', NS).some((p) => p.metadata.name.startsWith('setup-') && p.status?.phase === 'Running'));
    first.child.kill('SIGKILL');
    await first.done;
    const inspectUid = sim.get('batch/v1', 'Job', 'inspect', NS).metadata.uid;
    const setupUid = sim.get('batch/v1', 'Job', 'setup', NS).metadata.uid;
    const mark = sim.requests.length;

    const r = await cli('run', dir, { kubeconfig: sim.kubeconfigPath });
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/inspect: skipped, Job inspect already Complete/);
    expect(r.out).toContain('Job/setup (uyuni-test): already running with the same spec: attached');
    const after = sim.requests.slice(mark);
    expect(writesTo(after, '/jobs/inspect')).toEqual([]);
    expect(writesTo(after, '/jobs/setup')).toEqual([]);
    expect(writesTo(after, '/jobs').filter((q) => q.method === 'POST')).toEqual([]);
    expect(sim.get('batch/v1', 'Job', 'inspect', NS).metadata.uid).toBe(inspectUid);
    expect(sim.get('batch/v1', 'Job', 'setup', NS).metadata.uid).toBe(setupUid);
    expect(sim.get('apps/v1', 'Deployment', 'uyuni', NS)).toBeDefined();
  });

  it('on Ctrl-C says how to resume and exits 130', async () => {
    await start({ jobs: { setup: { outcome: 'hang' } } });
    const run = spawnCli(['run', plan(), '--kubeconfig', sim.kubeconfigPath, '--run-dir', tmpDir()]);
    await until('the setup pod running', () => sim.list('v1', 'Pod', NS).some((p) => p.metadata.name.startsWith('setup-') && p.status?.phase === 'Running'));
    run.child.kill('SIGINT');
    const r = await run.done;
    expect(r.code).toBe(130);
    expect(r.err).toContain('interrupted (SIGINT) after');
    expect(r.err).toContain('Run the same command again to resume');
  });

  it('refuses a changed Job of an unfinished run, then --rerun deletes it (propagationPolicy Background) and re-creates it', async () => {
    // The first run stops at `finish`: the run is unfinished, so its Jobs are not history.
    await start({ jobs: { finish: { outcome: 'fail', exitCode: 1 } } });
    const steps = (setupScript?: string) => [
      { name: 'namespace', objects: [namespace()] },
      { name: 'inspect', objects: [job('inspect')] },
      { name: 'setup', objects: [job('setup', setupScript)] },
      { name: 'finish', objects: [job('finish')] },
    ];
    const dir = writePlan(steps());
    expect((await cli('run', dir, { kubeconfig: sim.kubeconfigPath })).code).toBe(1);
    const oldUid = sim.get('batch/v1', 'Job', 'setup', NS).metadata.uid;
    writePlan(steps('echo changed'), { dir });

    const refused = await cli('run', dir, { kubeconfig: sim.kubeconfigPath });
    expect(refused.code).toBe(1);
    expect(refused.out).toContain('--rerun setup');
    expect(refused.out).toContain('immutable');
    expect(sim.get('batch/v1', 'Job', 'setup', NS).metadata.uid).toBe(oldUid);

    sim.setJob('finish', { outcome: 'succeed' });
    const mark = sim.requests.length;
    const r = await cli('run', dir, { kubeconfig: sim.kubeconfigPath, rerun: ['setup', 'finish'], yes: true });
    expect(r.code).toBe(0);
    const del = sim.requests.slice(mark).filter((q) => q.method === 'DELETE' && q.path.endsWith('/jobs/setup'));
    expect(del).toHaveLength(1);
    expect(del[0].query).toContain('propagationPolicy=Background');
    const now = sim.get('batch/v1', 'Job', 'setup', NS);
    expect(now.metadata.uid).not.toBe(oldUid);
    expect(now.spec.template.spec.containers[0].command).toContain('echo changed');
    expect(writesTo(sim.requests.slice(mark), '/jobs/inspect')).toEqual([]);
  });

  it('re-creates a changed Job left by a run that finished (the next upgrade), without --rerun (a destructive change: --yes)', async () => {
    await start();
    const dir = plan();
    expect((await cli('run', dir, { kubeconfig: sim.kubeconfigPath })).code).toBe(0);
    const history = sim.get('v1', 'ConfigMap', 'uyuni-cdk-history', NS);
    const oldSetup = sim.get('batch/v1', 'Job', 'setup', NS).metadata.uid;
    const oldInspect = sim.get('batch/v1', 'Job', 'inspect', NS).metadata.uid;
    expect(JSON.parse(history.data.install).jobs).toEqual({ inspect: oldInspect, setup: oldSetup });
    writePlan([
      { name: 'namespace', objects: [namespace()] },
      { name: 'inspect', objects: [job('inspect')] },
      { name: 'setup', objects: [job('setup', 'echo the next upgrade')] },
      { name: 'server', objects: [deployment('uyuni')] },
    ], { dir });

    const mark = sim.requests.length;
    const r = await cli('run', dir, { kubeconfig: sim.kubeconfigPath, yes: true });
    expect(r.code).toBe(0);
    expect(r.out).toContain('is from a run that finished');
    const del = sim.requests.slice(mark).filter((q) => q.method === 'DELETE' && q.path.endsWith('/jobs/setup'));
    expect(del).toHaveLength(1);
    expect(del[0].query).toContain('propagationPolicy=Background');
    expect(sim.get('batch/v1', 'Job', 'setup', NS).spec.template.spec.containers[0].command).toContain('echo the next upgrade');
    // The unchanged Job of the finished run is still skipped, and the history now names the new Job.
    expect(sim.get('batch/v1', 'Job', 'inspect', NS).metadata.uid).toBe(oldInspect);
    const newSetup = sim.get('batch/v1', 'Job', 'setup', NS).metadata.uid;
    expect(JSON.parse(sim.get('v1', 'ConfigMap', 'uyuni-cdk-history', NS).data.install).jobs.setup).toBe(newSetup);
  });

  it('stops on a Job that failed in an earlier run, showing its logs', async () => {
    await start({ jobs: { setup: { outcome: 'fail', exitCode: 2, logs: ['cannot connect to the database'] } } });
    const dir = plan();
    expect((await cli('run', dir, { kubeconfig: sim.kubeconfigPath })).code).toBe(1);
    const mark = sim.requests.length;
    const r = await cli('run', dir, { kubeconfig: sim.kubeconfigPath });
    expect(r.code).toBe(1);
    expect(r.out).toContain('failed in an earlier run');
    expect(r.out).toContain('cannot connect to the database');
    expect(r.out).toContain('exit code 2');
    expect(writesTo(sim.requests.slice(mark), '/jobs')).toEqual([]);
  });

  it('shows the logs an earlier run saved when the failed Job\'s pods are gone', async () => {
    await start({ jobs: { setup: { outcome: 'fail', exitCode: 2, logs: ['disk full on /var/lib/pgsql'] } } });
    const dir = plan();
    const runs = tmpDir('uyuni-runs-');
    expect((await cli('run', dir, { kubeconfig: sim.kubeconfigPath, runDir: path.join(runs, 'install-1') })).code).toBe(1);
    for (const p of sim.list('v1', 'Pod', NS).filter((x) => x.metadata.name.startsWith('setup-'))) {
      const res = await fetch(`${sim.url}/api/v1/namespaces/${NS}/pods/${p.metadata.name}`, { method: 'DELETE' });
      expect(res.status).toBe(200);
    }
    await until('the pods gone', () => !sim.list('v1', 'Pod', NS).some((x) => x.metadata.name.startsWith('setup-')));
    const r = await cli('run', dir, { kubeconfig: sim.kubeconfigPath, runDir: path.join(runs, 'install-2') });
    expect(r.code).toBe(1);
    expect(r.out).toContain('failed in an earlier run');
    expect(r.out).toMatch(/pod gone; log saved in .*install-1\/setup\/setup-\w+\.main\.log/);
    expect(r.out).toContain('    disk full on /var/lib/pgsql');
  });
});
