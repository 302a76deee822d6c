import * as fs from 'fs';
import * as path from 'path';
import { parse } from 'yaml';
import { hashSpec, readScript } from '../src/constructs/script-job';
import { LABELS } from '../src/plan/types';
import type { Gate } from '../src/plan/types';
import { evaluateGate } from '../src/runtime/gates';
import { envOf, podSpec, ROOT, SynthesizedPlan, synthYaml } from './helpers/synth';
import { validateObject } from './helpers/validate';

const exampleText = fs.readFileSync(path.join(ROOT, 'examples', 'upgrade.yaml'), 'utf8');
const upgrade = (text = exampleText): SynthesizedPlan => synthYaml(text).upgrade;
const withPg = (from: number, to: number) => JSON.stringify({ ...parse(exampleText), upgrade: { postgresql: { from, to } } });

const SCRIPTS: Record<string, string> = {
  'uyuni-inspect': 'inspect.sh',
  'uyuni-db-upgrade': 'db-upgrade.sh',
  'uyuni-db-finalize': 'db-finalize.sh',
  'uyuni-post-upgrade': 'post-upgrade.sh',
};

const step = (p: SynthesizedPlan, name: string) => p.step(name);

/** Facts of a sound 14 → 16 upgrade of Uyuni 2025.06 to 2025.10, as uyuni-inspect prints them. */
const SOUND = {
  product: 'uyuni', uyuni_release: '2025.10', image_pg_version: '16',
  current_product: 'uyuni', current_release: '2025.06', current_pg_version: '14',
  fqdn: 'uyuni.example.com', db_user: 'spacewalk', db_name: 'susemanager', db_port: '5432',
};

/** The gates that refuse these facts (by message), evaluated by the runtime's own evaluator. */
function refusals(gates: readonly Gate[], facts: Record<string, string>): string[] {
  return gates.map((g) => ({ g, r: evaluateGate(g, facts) })).filter((x) => !x.r.ok).map((x) => x.g.message);
}

describe('the upgrade plan of examples/upgrade.yaml', () => {
  const plan = upgrade();
  const gates = step(plan, 'stop-server').gates;

  it('inspects, stops the server, upgrades and finalizes the database, then deploys', () => {
    expect(plan.plan.name).toBe('upgrade');
    expect(plan.plan.steps.map((s) => s.name)).toEqual([
      'inspect', 'stop-server', 'db-upgrade', 'db-finalize', 'post-upgrade', 'tls', 'services', 'ingress', 'server',
    ]);
    expect(Object.keys(plan.files)).toEqual(plan.plan.steps.map((s) => s.file));
  });

  it('runs its inspect Job before db-upgrade, and keeps its output as facts', () => {
    const files = Object.keys(plan.files);
    const fileOf = (job: string) => files.findIndex((f) => plan.files[f].some((o) => o.kind === 'Job' && o.metadata.name === job));
    expect(fileOf('uyuni-inspect')).toBeLessThan(fileOf('uyuni-db-upgrade'));
    expect(fileOf('uyuni-db-upgrade')).toBeLessThan(fileOf('uyuni-db-finalize'));
    expect(fileOf('uyuni-db-finalize')).toBeLessThan(fileOf('uyuni-post-upgrade'));
    expect(step(plan, 'inspect').factsFrom).toEqual({ apiVersion: 'batch/v1', kind: 'Job', name: 'uyuni-inspect', namespace: 'uyuni' });
  });

  it('inspects with the new image and the volumes it reads mounted read-only', () => {
    const job = plan.find('Job', 'uyuni-inspect');
    expect(podSpec(job).containers[0].image).toBe('registry.opensuse.org/uyuni/server:2025.10');
    expect(podSpec(job).containers[0].volumeMounts).toEqual([
      { name: 'var-pgsql', mountPath: '/var/lib/pgsql', readOnly: true },
      { name: 'etc-rhn', mountPath: '/etc/rhn', readOnly: true },
    ]);
    expect(envOf(job)).toEqual({ RELEASE_DIR: '/etc/rhn/uyuni-cdk' });
    // the running server's node: its ReadWriteOnce claims can be mounted there
    expect(podSpec(job).affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm.labelSelector.matchLabels)
      .toEqual({ 'app.kubernetes.io/part-of': 'uyuni', 'app.kubernetes.io/component': 'server' });
  });

  it('stops the server and the attestation before the database is touched, and waits until no replica runs', () => {
    const stop = step(plan, 'stop-server');
    const deployments = ['uyuni', 'uyuni-coco-attestation'].map((name) => ({ apiVersion: 'apps/v1', kind: 'Deployment', name, namespace: 'uyuni' }));
    expect(stop.actions).toEqual(deployments.map((object) => ({ type: 'scale', object, replicas: 0 })));
    for (const object of deployments) expect(stop.waits).toContainEqual({ object, for: 'scaled-down' });
    expect(plan.files[stop.file].map((o) => `${o.kind}/${o.metadata.name}`)).toEqual(['ConfigMap/uyuni-upgrade']);
    // no other step changes workloads by action, and nothing runs before the gates
    expect(plan.plan.steps.filter((s) => s.actions.length > 0).map((s) => s.name)).toEqual(['stop-server']);
    expect(plan.plan.steps.filter((s) => s.gates.length > 0).map((s) => s.name)).toEqual(['stop-server']);
  });

  it('lets a sound upgrade through every gate', () => {
    expect(refusals(gates, SOUND)).toEqual([]);
  });

  it.each([
    ['a release downgrade', { uyuni_release: '2025.06', current_release: '2025.10' }, /release downgrades/],
    ['a pre-release of the same release after the release', { uyuni_release: '5.1.0 Alpha1', current_release: '5.1.0' }, /release downgrades/],
    ['a PostgreSQL downgrade', { image_pg_version: '14', current_pg_version: '16' }, /cannot be downgraded/],
    ['a switch from Uyuni to SUSE Manager', { product: 'suse-manager' }, /switching between Uyuni and SUSE Manager/],
    ['a switch from SUSE Manager to Uyuni', { current_product: 'suse-manager' }, /switching between Uyuni and SUSE Manager/],
    ['missing database data', { current_pg_version: undefined }, /no database data/],
    ['a database version other than upgrade.postgresql.from', { current_pg_version: '15' }, /differs from upgrade.postgresql.from \(14\)/],
    ['an image PostgreSQL other than upgrade.postgresql.to', { image_pg_version: '17' }, /differs from upgrade.postgresql.to \(16\)/],
    ['data of an unknown release', { current_release: undefined, current_product: undefined },
      /no release file in \/etc\/rhn\/uyuni-cdk[^]*kubectl -n uyuni exec deploy\/uyuni -c uyuni -- sh -c 'mkdir -p \/etc\/rhn\/uyuni-cdk/],
    ['data of another server', { fqdn: 'other.example.com' }, /another server name/],
  ])('refuses %s', (_what, change, message) => {
    const facts: Record<string, string> = { ...SOUND };
    for (const [k, v] of Object.entries(change)) {
      if (v === undefined) delete facts[k];
      else facts[k] = v;
    }
    const refused = refusals(gates, facts);
    expect(refused.length).toBeGreaterThan(0);
    expect(refused.join('\n')).toMatch(message);
  });

  it('compares PostgreSQL versions as numbers, not text ("9" < "16")', () => {
    const nine = upgrade(withPg(12, 16));
    const g = step(nine, 'stop-server').gates;
    // 9 data under a 16 image: "9" > "16" as text; numerically it is an upgrade, refused only for not being `from`
    const refused = refusals(g, { ...SOUND, current_pg_version: '9' });
    expect(refused.join('\n')).not.toMatch(/cannot be downgraded/);
    expect(refused.join('\n')).toMatch(/differs from upgrade.postgresql.from \(12\)/);
    expect(refusals(g, { ...SOUND, current_pg_version: '12' })).toEqual([]);
  });

  it('keeps every step Job: no TTL, backoffLimit 0, restartPolicy Never, one runner running its script with sh -c', () => {
    const jobs = plan.objects.filter((o) => o.kind === 'Job');
    expect(jobs.map((j) => j.metadata.name).sort()).toEqual(Object.keys(SCRIPTS).sort());
    for (const s of plan.plan.steps) {
      for (const job of plan.files[s.file].filter((o) => o.kind === 'Job')) {
        expect(job.spec.ttlSecondsAfterFinished).toBeUndefined();
        expect(job.spec.backoffLimit).toBe(0);
        expect(podSpec(job).restartPolicy).toBe('Never');
        expect(podSpec(job).containers.map((c: any) => c.name)).toEqual(['runner']);
        expect(podSpec(job).containers[0].command).toEqual(['sh', '-c', readScript(SCRIPTS[job.metadata.name])]);
        expect(job.metadata.labels).toMatchObject({ [LABELS.plan]: 'upgrade', [LABELS.step]: s.name, 'uyuni-cdk.io/job': job.metadata.name });
        expect(job.metadata.annotations!['uyuni-cdk.io/spec-hash']).toBe(hashSpec(job.spec));
      }
    }
  });

  it('upgrades PostgreSQL in the server-migration-14-16 image with only var-pgsql mounted', () => {
    const job = plan.find('Job', 'uyuni-db-upgrade');
    expect(podSpec(job).containers[0].image).toBe('registry.opensuse.org/uyuni/server-migration-14-16:2025.10');
    expect(podSpec(job).volumes.map((v: any) => v.name)).toEqual(['var-pgsql']);
    expect(podSpec(job).containers[0].volumeMounts).toEqual([{ name: 'var-pgsql', mountPath: '/var/lib/pgsql' }]);
  });

  it('finalizes without REINDEX (not a migration) but with new statistics after pg_upgrade', () => {
    const job = plan.find('Job', 'uyuni-db-finalize');
    expect(envOf(job)).toMatchObject({ REINDEX: 'false', ANALYZE: 'true', NEW_PG_VERSION: '16' });
    expect(step(plan, 'db-finalize').timeoutSeconds).toBe(86400);
    expect(podSpec(job).volumes.filter((v: any) => v.persistentVolumeClaim).length).toBe(27);
  });

  it('has no db-upgrade step when PostgreSQL stays the same', () => {
    const same = upgrade(withPg(16, 16));
    expect(same.plan.steps.map((s) => s.name)).toEqual([
      'inspect', 'stop-server', 'db-finalize', 'post-upgrade', 'tls', 'services', 'ingress', 'server',
    ]);
    expect(envOf(same.find('Job', 'uyuni-db-finalize')).ANALYZE).toBe('false');
    expect(refusals(step(same, 'stop-server').gates, { ...SOUND, current_pg_version: '16' })).toEqual([]);
  });

  it('validates every object against the schemas, and writes no Secret', () => {
    for (const o of plan.objects) expect(() => validateObject(o)).not.toThrow();
    expect(plan.objects.filter((o) => o.kind === 'Secret' || o.stringData !== undefined)).toEqual([]);
  });

  it('matches the snapshot of its plan index and step files', () => {
    expect({ plan: { ...plan.plan, generator: '(generator)' }, files: plan.files }).toMatchSnapshot();
  });
});
