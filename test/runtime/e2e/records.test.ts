/**
 * Records fail closed (issue 33; docs/runtime.md, "Safety"): the cluster's memory of a finished
 * migration and of the server's identity, deleted, cut short or emptied, never turns a guard off.
 * A record read from its copy on the namespace still refuses; a damaged one refuses every run it
 * protects, naming it and repair-record, and is never overwritten; with no record at all, what the
 * cluster shows (a server Deployment, ConfigMap uyuni-config) refuses as a record would.
 */
import { Simulator } from '../../sim';
import { repairRecordCommand } from '../../../src/runtime/verbs/commands';
import { changes, cli } from './harness';
import { deleteJobs, dist, finishedMigration, synthExample } from './migration';
import { startSimulator } from '../../sim';
import { namespace, NS, service, writePlan } from '../plans';

let sim: Simulator;
afterEach(async () => {
  await sim?.stop();
});

const CM = '/api/v1/namespaces/uyuni/configmaps/uyuni-cdk-history';
const history = (): Record<string, string> => sim.get('v1', 'ConfigMap', 'uyuni-cdk-history', 'uyuni')?.data ?? {};
const copy = (): Record<string, string> => JSON.parse(sim.get('v1', 'Namespace', 'uyuni')?.metadata?.annotations?.['uyuni-cdk.io/records'] ?? '{}');

/** `kubectl delete configmap uyuni-cdk-history`. */
async function deleteHistory(): Promise<void> {
  expect((await fetch(`${sim.url}${CM}`, { method: 'DELETE' })).ok).toBe(true);
  expect(sim.get('v1', 'ConfigMap', 'uyuni-cdk-history', 'uyuni')).toBeUndefined();
}

/** Sets (or removes) entries of the history ConfigMap, as `kubectl edit` would. */
function editHistory(entries: Record<string, string | undefined>): void {
  const cm = sim.get('v1', 'ConfigMap', 'uyuni-cdk-history', 'uyuni');
  const data = { ...cm.data };
  for (const [k, v] of Object.entries(entries)) {
    if (v === undefined) delete data[k];
    else data[k] = v;
  }
  sim.put({ ...cm, data });
}

/** Removes (or replaces) the copy on the namespace. */
function editCopy(text?: string): void {
  const ns = sim.get('v1', 'Namespace', 'uyuni');
  const annotations = { ...ns.metadata.annotations };
  if (text === undefined) delete annotations['uyuni-cdk.io/records'];
  else annotations['uyuni-cdk.io/records'] = text;
  sim.put({ ...ns, metadata: { ...ns.metadata, annotations } });
}

/** plan and run --yes of dist/migrate: both refuse, and the run writes nothing. */
async function refusedMigration(expected: RegExp | string): Promise<{ plan: string; run: string }> {
  const plan = await cli('plan', dist('migrate'), { kubeconfig: sim.kubeconfigPath });
  expect(plan.out).toContain('run would refuse before any write:');
  expect(plan.out).not.toMatch(/create +Job\/uyuni-data-sync/);
  const mark = sim.requests.length;
  const run = await cli('run', dist('migrate'), { kubeconfig: sim.kubeconfigPath, yes: true });
  expect(run.code).toBe(1);
  expect(changes(sim.requests.slice(mark))).toEqual([]);
  expect(sim.list('batch/v1', 'Job', 'uyuni')).toEqual([]);
  expect(sim.get('apps/v1', 'Deployment', 'uyuni', 'uyuni').spec.replicas).toBe(1);
  if (typeof expected === 'string') {
    expect(plan.out).toContain(expected);
    expect(run.err).toContain(expected);
  } else {
    expect(plan.out).toMatch(expected);
    expect(run.err).toMatch(expected);
  }
  return { plan: plan.out, run: run.err };
}

/** repair-record on the plan directory, with `--yes` or none (no terminal). */
async function repair(plan: string, yes: boolean): Promise<{ code: number; out: string; err: string }> {
  const text = { out: '', err: '' };
  const code = await repairRecordCommand(plan, { kubeconfig: sim.kubeconfigPath, yes }, { out: (t) => { text.out += t; }, err: (t) => { text.err += t; }, isTTY: false });
  return { code, ...text };
}

describe('a finished migration whose Jobs are gone', () => {
  it('is recorded twice, sealed: in ConfigMap uyuni-cdk-history and on the namespace', async () => {
    sim = await finishedMigration();
    const flow = JSON.parse(history()['flow.migration']);
    expect(flow).toMatchObject({ flow: 'migration', v: 1, sum: expect.stringMatching(/^sha256:/), finishedAt: expect.any(String) });
    expect(copy()['flow.migration']).toBe(history()['flow.migration']);
    expect(copy().identity).toBe(history().identity);
  });

  it('its ConfigMap deleted: the copy on the namespace decides; plan says so; nothing runs again', async () => {
    sim = await finishedMigration();
    await deleteJobs(sim);
    await deleteHistory();
    const { plan } = await refusedMigration('a finished migration never runs again');
    expect(plan).toContain('records: ConfigMap uyuni/uyuni-cdk-history key flow.migration is missing: read from its copy (namespace uyuni annotation uyuni-cdk.io/records)');
  });

  it('its record cut short, emptied (steps: {}) or edited: refused before any write, naming the damage and repair-record; the damaged value is kept', async () => {
    sim = await finishedMigration();
    await deleteJobs(sim);
    const intact = history()['flow.migration'];
    const legacy = JSON.parse(intact);
    for (const k of ['v', 'sum', 'writtenAt']) delete legacy[k];
    const cases: Array<[string, string, string]> = [
      ['cut short', intact.slice(0, 40), 'not JSON (40 characters, cut short or edited?)'],
      ['emptied', JSON.stringify({ ...JSON.parse(intact), steps: {} }), 'its checksum does not match its content (edited or cut)'],
      ['emptied, unsealed', JSON.stringify({ ...legacy, steps: {} }), 'incomplete: a finished flow with no data step recorded (steps: {})'],
      ['emptied to {}', '{}', 'incomplete: field flow is missing, not "migration"'],
    ];
    for (const [, text, why] of cases) {
      editHistory({ 'flow.migration': text });
      const { run } = await refusedMigration(`the record flow.migration cannot be read: ConfigMap uyuni/uyuni-cdk-history key flow.migration: ${why}`);
      expect(run).toContain('refused, nothing overwritten; repair it with: uyuni-cdk repair-record dist/migrate');
      expect(history()['flow.migration']).toBe(text);
    }
    // Nor its pre-sync, which would copy over the live claims.
    const prepare = await cli('run', dist('migrate-prepare'), { kubeconfig: sim.kubeconfigPath, yes: true });
    expect(prepare.code).toBe(1);
    expect(prepare.err).toContain('the record flow.migration cannot be read');
    expect(sim.list('batch/v1', 'Job', 'uyuni')).toEqual([]);
  });

  it('its ConfigMap and the copy both gone: the cluster shows a set-up server, and the data steps refuse as the record would', async () => {
    sim = await finishedMigration();
    await deleteJobs(sim);
    await deleteHistory();
    editCopy(undefined);
    await refusedMigration(/no record of this server is left \(ConfigMap uyuni\/uyuni-cdk-history and its copy on namespace uyuni hold none\), but the cluster shows a set-up server: Deployment uyuni\/uyuni runs registry\.opensuse\.org\/uyuni\/server:2026\.08 \(1 replica\); ConfigMap uyuni\/uyuni-config names fqdn old-server\.example\.com/);
    const prepare = await cli('run', dist('migrate-prepare'), { kubeconfig: sim.kubeconfigPath, yes: true });
    expect(prepare.code).toBe(1);
    expect(prepare.err).toMatch(/steps that would run again \(over the data of that server\): data-presync/);
    // The same flag as a record's: --rerun STEP runs that data step, and asks first.
    const asked = await cli('run', dist('migrate'), { kubeconfig: sim.kubeconfigPath, rerun: ['stop-server', 'stop-db', 'data-sync', 'inspect', 'inspect-db', 'import-secrets', 'db-upgrade', 'db-finalize'] });
    expect(asked.code).toBe(2);
    expect(asked.out).toMatch(/data-step\s+Job\/uyuni-data-sync \(uyuni\)\s+\[data-sync\]\s+--rerun data-sync: no record of this server is left/);
    expect(sim.list('batch/v1', 'Job', 'uyuni')).toEqual([]);
  });

  it('repair-record shows what it writes and asks; it rebuilds from the intact copy, else from the cluster, keeping the damaged value', async () => {
    sim = await finishedMigration();
    await deleteJobs(sim);
    const intact = history()['flow.migration'];
    editHistory({ 'flow.migration': intact.slice(0, 40) });
    const mark = sim.requests.length;
    const unasked = await repair(dist('migrate'), false);
    expect(unasked.code).toBe(2);
    expect(unasked.out).toContain('rebuild   flow.migration: from its intact copy in namespace uyuni annotation uyuni-cdk.io/records');
    expect(unasked.out).toContain('damaged: ConfigMap uyuni/uyuni-cdk-history key flow.migration: not JSON (40 characters, cut short or edited?) (kept as damaged.flow.migration');
    expect(unasked.err).toContain('no terminal to ask on: nothing was written');
    expect(changes(sim.requests.slice(mark))).toEqual([]);
    const done = await repair(dist('migrate'), true);
    expect(done.err).toBe('');
    expect(done.code).toBe(0);
    expect(JSON.parse(history()['damaged.flow.migration']).found).toEqual([{ where: 'ConfigMap uyuni/uyuni-cdk-history key flow.migration', text: intact.slice(0, 40) }]);
    await refusedMigration('a finished migration never runs again');
    expect((await repair(dist('migrate'), false)).out).toContain('nothing to repair');

    // Damaged in both places: rebuilt from what the cluster shows, a finished migration with every data step done.
    editHistory({ 'flow.migration': '{' });
    editCopy('{"flow.migration": "cut');
    await refusedMigration('the record flow.migration cannot be read');
    const rebuilt = await repair(dist('migrate'), true);
    expect(rebuilt.code).toBe(0);
    expect(rebuilt.out).toContain("rebuild   flow.migration: from the cluster's evidence: Deployment uyuni/uyuni runs registry.opensuse.org/uyuni/server:2026.08");
    const flow = JSON.parse(history()['flow.migration']);
    expect(Object.keys(flow.steps).sort()).toEqual(['data-sync', 'db-finalize', 'db-upgrade', 'import-secrets', 'inspect', 'inspect-db', 'stop-db', 'stop-server']);
    expect(flow.repaired).toMatch(/^rebuilt by uyuni-cdk repair-record/);
    expect(copy()['flow.migration']).toBe(history()['flow.migration']);
    await refusedMigration('a finished migration never runs again');
  });

  it('repair-record sets aside a record damaged in both places when no server is set up, even one kubectl wrote last', async () => {
    sim = await finishedMigration();
    await deleteJobs(sim);
    // no server here any more: nothing to rebuild the migration from
    for (const p of ['/apis/apps/v1/namespaces/uyuni/deployments/uyuni', '/api/v1/namespaces/uyuni/configmaps/uyuni-config']) {
      expect((await fetch(`${sim.url}${p}`, { method: 'DELETE' })).ok).toBe(true);
    }
    // as `kubectl patch` does: another field manager owns the key from now on
    const patch = (p: string, body: object) => fetch(`${sim.url}${p}?fieldManager=kubectl-patch`, { method: 'PATCH', headers: { 'Content-Type': 'application/merge-patch+json' }, body: JSON.stringify(body) });
    expect((await patch(CM, { data: { 'flow.migration': '{"flow":"migra' } })).ok).toBe(true);
    expect((await patch('/api/v1/namespaces/uyuni', { metadata: { annotations: { 'uyuni-cdk.io/records': '{"flow.migra' } } })).ok).toBe(true);
    const r = await repair(dist('migrate'), true);
    expect(r.out).toContain('set-aside flow.migration: no server is set up here (no server Deployment, no ConfigMap uyuni-config): the migration counts as not started');
    expect(r.code).toBe(0);
    expect(history()['flow.migration']).toBeUndefined();
    expect(copy()['flow.migration']).toBeUndefined();
    expect(JSON.parse(history()['damaged.flow.migration']).found[0]).toEqual({ where: 'ConfigMap uyuni/uyuni-cdk-history key flow.migration', text: '{"flow":"migra' });
    const plan = await cli('plan', dist('migrate'), { kubeconfig: sim.kubeconfigPath });
    expect(plan.out).not.toContain('cannot be read');
  });
});

describe('a plan with a flow but no data step', () => {
  it('records no flow (nothing to protect, and one with no step reads as emptied): its next run records cleanly', async () => {
    sim = await startSimulator();
    const dir = writePlan([{ name: 'namespace', objects: [namespace()] }, { name: 'server', objects: [service('uyuni')] }], { name: 'migrate', flow: { kind: 'migration', source: 'old.example.com' } });
    for (const _ of [1, 2]) {
      const r = await cli('run', dir, { kubeconfig: sim.kubeconfigPath });
      expect(r.code).toBe(0);
      expect(r.out).toContain('record finished run ConfigMap/uyuni-cdk-history (uyuni-test): done (the migration is finished)');
    }
    expect(sim.get('v1', 'ConfigMap', 'uyuni-cdk-history', NS).data['flow.migration']).toBeUndefined();
  });
});

describe("the server's identity, its record lost or damaged", () => {
  /** An install of 2099.01, then its record of the identity damaged by `damage`. */
  async function installedNewer(): Promise<void> {
    sim = await startSimulator();
    const newer = synthExample('../uyuni.yaml', (c) => { c.images = { ...(c.images ?? {}), tag: '2099.01' }; }).install;
    expect((await cli('run', newer, { kubeconfig: sim.kubeconfigPath })).code).toBe(0);
  }

  /** A downgrade to 2026.08 (dist/install) and an fqdn change are refused, writing nothing. */
  async function refusedChanges(downgrade: RegExp, fqdn: RegExp): Promise<void> {
    const mark = sim.requests.length;
    const plan = await cli('plan', dist('install'), { kubeconfig: sim.kubeconfigPath });
    expect(plan.out).toMatch(downgrade);
    const older = await cli('run', dist('install'), { kubeconfig: sim.kubeconfigPath, yes: true });
    expect(older.code).toBe(1);
    expect(older.err).toMatch(downgrade);
    const renamed = synthExample('../uyuni.yaml', (c) => { c.fqdn = 'other.example.com'; c.images = { ...(c.images ?? {}), tag: '2099.01' }; }).install;
    const other = await cli('run', renamed, { kubeconfig: sim.kubeconfigPath, yes: true });
    expect(other.code).toBe(1);
    expect(other.err).toMatch(fqdn);
    expect(changes(sim.requests.slice(mark))).toEqual([]);
    expect(sim.get('apps/v1', 'Deployment', 'uyuni', 'uyuni').spec.template.spec.containers[0].image).toMatch(/:2099\.01$/);
  }

  it('the identity key deleted from the ConfigMap: its copy keeps the guard', async () => {
    await installedNewer();
    editHistory({ identity: undefined });
    await refusedChanges(/older image generation: 2099\.01 \(recorded by run install-/, /fqdn would change from uyuni\.example\.com \(recorded by run install-/);
  });

  it('the identity not JSON: refused, naming the damage, whatever the flags', async () => {
    await installedNewer();
    editHistory({ identity: 'not json' });
    const damaged = /the record identity cannot be read: ConfigMap uyuni\/uyuni-cdk-history key identity: not JSON/;
    await refusedChanges(damaged, damaged);
    const flagged = await cli('run', dist('install'), { kubeconfig: sim.kubeconfigPath, yes: true, allowDowngrade: true });
    expect(flagged.code).toBe(1);
    expect(flagged.err).toMatch(damaged);
  });

  it('the ConfigMap and its copy gone: the live Deployment\'s image and uyuni-config\'s fqdn are the identity', async () => {
    await installedNewer();
    await deleteHistory();
    editCopy(undefined);
    await refusedChanges(
      /older image generation: 2099\.01 \(as the cluster runs it now: Deployment uyuni\/uyuni runs registry\.opensuse\.org\/uyuni\/server:2099\.01 \(1 replica\); ConfigMap uyuni\/uyuni-config names fqdn uyuni\.example\.com[^)]*\) → 2026\.08[^\n]*refused \(--allow-downgrade allows it\)/,
      /fqdn would change from uyuni\.example\.com \(as the cluster runs it now: /,
    );
    // A tag that is not a version is not taken for a newer one.
    const latest = synthExample('../uyuni.yaml', (c) => { c.images = { ...(c.images ?? {}), tag: 'latest' }; }).install;
    const r = await cli('run', latest, { kubeconfig: sim.kubeconfigPath, yes: true });
    expect(r.code).toBe(1);
    expect(r.err).toContain("the server's image generation would change from 2099.01 (as the cluster runs it now: ");
    expect(r.err).toContain('one of them is not a version');
  });
});
