/**
 * A refused run writes nothing (issue 38, item 2): for each way `run` refuses before its first
 * step (no terminal to ask on, `no` answered, objects of another owner, a change of the server's
 * identity, a finished flow, the lock held by another run, a missing requirement), every object
 * of the cluster is the same afterwards, byte for byte (its resourceVersion included), and no
 * object came or went. `plan` predicts each refusal that does not depend on the terminal.
 *
 * Most cases start from the README's migration recipe: `kubectl create namespace uyuni` and the
 * migration's key Secrets, a bare namespace that `run` takes over by design, but only once it goes on.
 */
import { startSimulator, Simulator } from '../../sim';
import { runCommand } from '../../../src/runtime/verbs/commands';
import { cli, tmpDir } from './harness';
import { dist, handMadeNamespace, migrationFacts, migrationInputs } from './migration';

const NS = 'uyuni';

let sim: Simulator;
afterEach(async () => {
  await sim?.stop();
});

/** `kubectl create namespace uyuni`, then the Secrets the migration needs (all but those in `without`). */
function readmeRecipe(s: Simulator, without: readonly string[] = []): void {
  handMadeNamespace(s);
  migrationInputs(s, without);
}

/** Every object of the cluster, as JSON text each (kind, namespace, name → the whole object). */
function cluster(): Map<string, string> {
  return new Map(sim.snapshot().map((o) => [`${o.kind} ${o.metadata.namespace ?? ''}/${o.metadata.name}`, JSON.stringify(o)]));
}

/** What differs between two snapshots: objects that came, went, or changed (with their resourceVersions). */
function differences(before: Map<string, string>, after: Map<string, string>): string[] {
  const rv = (t: string | undefined) => (t ? JSON.parse(t).metadata.resourceVersion : '-');
  return [...new Set([...before.keys(), ...after.keys()])].filter((k) => before.get(k) !== after.get(k))
    .map((k) => `${k}: ${before.has(k) ? `rv ${rv(before.get(k))}` : 'absent'} → ${after.has(k) ? `rv ${rv(after.get(k))}` : 'absent'}`);
}

/** `run` as the CLI calls it, with a terminal that answers `answer` when one is given. */
async function run(dir: string, o: Record<string, unknown>, answer?: string): Promise<{ code: number; text: string; asked: number }> {
  let text = '';
  let asked = 0;
  const code = await runCommand(dir, { kubeconfig: sim.kubeconfigPath, runDir: tmpDir(), ...o }, {
    out: (t) => { text += t; }, err: (t) => { text += t; }, isTTY: false,
    ...(answer === undefined ? {} : { ask: async () => { asked += 1; return answer; } }),
  });
  return { code, text, asked };
}

/** Runs `dir`, expects it refused with `code` saying `says`, and the cluster exactly as it was. */
async function refusedUnchanged(dir: string, o: Record<string, unknown>, code: number, says: string | RegExp, answer?: string): Promise<string> {
  const before = cluster();
  const r = await run(dir, o, answer);
  expect(r.text).toMatch(says);
  expect(r.code).toBe(code);
  expect(differences(before, cluster())).toEqual([]);
  return r.text;
}

/** `plan --detailed-exitcode` over the same cluster: it predicts the refusal (exit 1, `says` shown), and writes nothing either. */
async function planPredicts(dir: string, o: Record<string, unknown>, says: string | RegExp): Promise<void> {
  const before = cluster();
  const p = await cli('plan', dir, { kubeconfig: sim.kubeconfigPath, detailedExitcode: true, ...o });
  expect(p.out + p.err).toMatch(says);
  expect(p.code).toBe(1);
  expect(differences(before, cluster())).toEqual([]);
}

async function finishedMigration(): Promise<void> {
  sim = await startSimulator({ jobs: migrationFacts() });
  readmeRecipe(sim);
  const r = await run(dist('migrate'), { yes: true });
  expect(r.code).toBe(0);
}

describe('after the README migration recipe, a refused run leaves the cluster as it was', () => {
  it('no terminal to ask on: exit 2, the hand-made namespace not even marked adopted; the next run is not refused for it', async () => {
    sim = await startSimulator({ jobs: migrationFacts() });
    readmeRecipe(sim);
    const text = await refusedUnchanged(dist('migrate'), {}, 2, /destructive changes? and no terminal to ask on: nothing was done/);
    expect(text).not.toMatch(/adopt\s+Namespace\/uyuni/);
    expect(sim.get('v1', 'Namespace', NS).metadata.annotations?.['uyuni-cdk.io/adopted-from']).toBeUndefined();
    // what the refusal says to do next works: the namespace is still the plan's by design
    const again = await run(dist('migrate'), { yes: true });
    expect(again.text).not.toContain('refusing to take over');
    expect(again.code).toBe(0);
    expect(sim.get('v1', 'Namespace', NS).metadata.annotations?.['uyuni-cdk.io/adopted-from']).toMatch(/nobody known/);
  });

  it('a namespace that an older refused run marked adopted (and nothing else) is still the plan\'s by design', async () => {
    sim = await startSimulator({ jobs: migrationFacts() });
    readmeRecipe(sim);
    const ns = sim.get('v1', 'Namespace', NS);
    sim.put({ ...ns, metadata: { ...ns.metadata, annotations: { 'uyuni-cdk.io/adopted-from': 'nobody known (no managed-by label, no field manager)' } } });
    const p = await cli('plan', dist('migrate'), { kubeconfig: sim.kubeconfigPath });
    expect(p.out).not.toContain('refuse  Namespace/uyuni');
    const r = await run(dist('migrate'), { yes: true });
    expect(r.text).not.toContain('refusing to take over');
    expect(r.code).toBe(0);
  });

  it('`no` answered on a terminal: exit 1, nothing written', async () => {
    sim = await startSimulator({ jobs: migrationFacts() });
    readmeRecipe(sim);
    await refusedUnchanged(dist('migrate'), {}, 1, 'destructive changes not approved: nothing was done', 'no');
  });

  it('a missing requirement: refused with --yes, nothing written; plan predicts it', async () => {
    sim = await startSimulator({ jobs: migrationFacts() });
    readmeRecipe(sim, ['uyuni-ca-password']);
    await planPredicts(dist('migrate'), {}, 'Secret uyuni/uyuni-ca-password (step data-sync) is missing');
    await refusedUnchanged(dist('migrate'), { yes: true }, 1, 'Secret uyuni/uyuni-ca-password (step data-sync) is missing');
  });

  it('the lock held by another live run: refused with --yes, its Lease untouched; plan predicts it', async () => {
    sim = await startSimulator({ jobs: migrationFacts() });
    readmeRecipe(sim);
    const now = new Date().toISOString().replace(/Z$/, '000Z');
    sim.put({
      apiVersion: 'coordination.k8s.io/v1', kind: 'Lease',
      metadata: {
        name: 'uyuni-cdk-lock', namespace: NS,
        annotations: { 'uyuni-cdk.io/lock-run': 'migrate-20261201T000000Z', 'uyuni-cdk.io/lock-host': 'admin-box-elsewhere', 'uyuni-cdk.io/lock-pid': '4242', 'uyuni-cdk.io/lock-verb': 'run' },
      },
      spec: { holderIdentity: 'migrate-20261201T000000Z', leaseDurationSeconds: 3600, acquireTime: now, renewTime: now },
    });
    await planPredicts(dist('migrate'), {}, /namespace uyuni is locked by run migrate-20261201T000000Z/);
    await refusedUnchanged(dist('migrate'), { yes: true }, 1, /namespace uyuni is locked by run migrate-20261201T000000Z/);
  });

  it('an object of another owner without --adopt: refused with --yes, nothing marked; plan predicts it', async () => {
    sim = await startSimulator({ jobs: migrationFacts() });
    readmeRecipe(sim);
    sim.put({
      apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: NS, annotations: { 'meta.helm.sh/release-name': 'uyuni', 'meta.helm.sh/release-namespace': NS } },
      spec: { ports: [{ name: 'http', port: 80 }] },
    });
    await planPredicts(dist('migrate'), {}, /refuse\s+Service\/web \(uyuni\)\s+owner: Helm release uyuni\/uyuni/);
    await refusedUnchanged(dist('migrate'), { yes: true }, 1, /refusing to take over \d+ object\(s\):.*Service\/web \(uyuni\) belongs to Helm release uyuni\/uyuni/s);
  });
});

describe('after a finished migration, a refused run leaves the cluster as it was', () => {
  it('the same migration again (a finished flow): refused with --yes, nothing written; plan predicts it', async () => {
    await finishedMigration();
    await planPredicts(dist('migrate'), {}, 'a finished migration never runs again');
    await refusedUnchanged(dist('migrate'), { yes: true }, 1, 'a finished migration never runs again');
  });

  it("a change of the server's identity (the install plan of another fqdn): refused with --yes, nothing written; plan predicts it", async () => {
    await finishedMigration();
    await planPredicts(dist('install'), {}, /the server's fqdn would change from old-server\.example\.com/);
    await refusedUnchanged(dist('install'), { yes: true }, 1, /the server's fqdn would change from old-server\.example\.com[^\n]*--allow-fqdn-change/);
  });
});
