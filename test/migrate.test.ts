import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { parse } from 'yaml';
import { hashSpec, readScript } from '../src/constructs/script-job';
import { SERVER_VOLUMES } from '../src/model/volumes';
import { LABELS } from '../src/plan/types';
import { envOf, podSpec, ROOT, SynthesizedPlan, synthYaml, tempDir } from './helpers/synth';
import { validateObject } from './helpers/validate';

const EXAMPLE = path.join(ROOT, 'examples', 'migration.yaml');
const exampleText = fs.readFileSync(EXAMPLE, 'utf8');

/** The example with changes applied (a shallow merge per top-level section). */
function exampleWith(changes: Record<string, any>): string {
  const base = parse(exampleText);
  for (const [k, v] of Object.entries(changes)) base[k] = v && typeof v === 'object' && !Array.isArray(v) ? { ...base[k], ...v } : v;
  return JSON.stringify(base);
}
const migrate = (text = exampleText): SynthesizedPlan => synthYaml(text).migrate;

const SCRIPTS: Record<string, string> = {
  'uyuni-data-sync': 'data-sync.sh',
  'uyuni-inspect': 'inspect.sh',
  'uyuni-db-upgrade': 'db-upgrade.sh',
  'uyuni-db-finalize': 'db-finalize.sh',
  'uyuni-post-upgrade': 'post-upgrade.sh',
};

const jobs = (p: SynthesizedPlan) => p.objects.filter((o) => o.kind === 'Job');
const fileOf = (p: SynthesizedPlan, kind: string, name: string) =>
  Object.keys(p.files).find((f) => p.files[f].some((o) => o.kind === kind && o.metadata.name === name));
const step = (p: SynthesizedPlan, name: string) => p.step(name);

describe('the migrate plan of examples/migration.yaml', () => {
  const plan = migrate();

  it('runs namespace, claims, data sync, inspection, database steps, the deploy steps, then the cleanup', () => {
    expect(plan.plan.name).toBe('migrate');
    expect(plan.plan.steps.map((s) => s.name)).toEqual([
      'namespace', 'volumes', 'data-sync', 'inspect', 'db-upgrade', 'db-finalize', 'post-upgrade',
      'tls', 'services', 'ingress', 'server', 'cleanup',
    ]);
    expect(Object.keys(plan.files)).toEqual(plan.plan.steps.map((s) => s.file));
  });

  it('writes the Jobs data-sync → db-upgrade → db-finalize → post-upgrade in file order before Deployment uyuni', () => {
    const order = ['uyuni-data-sync', 'uyuni-db-upgrade', 'uyuni-db-finalize', 'uyuni-post-upgrade'].map((j) => fileOf(plan, 'Job', j)!);
    const server = fileOf(plan, 'Deployment', 'uyuni')!;
    expect(order.every(Boolean)).toBe(true);
    expect([...order, server]).toEqual([...order, server].slice().sort());
    expect(new Set([...order, server]).size).toBe(5);
  });

  it('starts no server between the data sync and the database upgrade: no workload but step Jobs before the server step', () => {
    const serverIndex = plan.plan.steps.findIndex((s) => s.name === 'server');
    const before = plan.plan.steps.slice(0, serverIndex).flatMap((s) => plan.files[s.file]);
    expect(before.filter((o) => ['Deployment', 'StatefulSet', 'Pod', 'DaemonSet', 'ReplicaSet'].includes(o.kind))).toEqual([]);
    // and a server left from an earlier try is scaled to 0 before anything is copied
    expect(step(plan, 'data-sync').actions).toEqual([
      { type: 'scale', object: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'uyuni', namespace: 'uyuni' }, replicas: 0 },
      { type: 'scale', object: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'uyuni-coco-attestation', namespace: 'uyuni' }, replicas: 0 },
    ]);
  });

  it('keeps every step Job: no TTL, backoffLimit 0, restartPolicy Never, one runner running its script with sh -c', () => {
    expect(jobs(plan).map((j) => j.metadata.name).sort()).toEqual(Object.keys(SCRIPTS).sort());
    for (const job of jobs(plan)) {
      expect(job.spec.ttlSecondsAfterFinished).toBeUndefined();
      expect(job.spec.backoffLimit).toBe(0);
      expect(podSpec(job).restartPolicy).toBe('Never');
      expect(podSpec(job).containers.map((c: any) => c.name)).toEqual(['runner']);
      const command = podSpec(job).containers[0].command;
      expect(command.slice(0, 2)).toEqual(['sh', '-c']);
      expect(command[2]).toBe(readScript(SCRIPTS[job.metadata.name]));
      expect(podSpec(job).containers[0].args).toBeUndefined();
    }
  });

  it('labels each Job with its plan and step, and annotates the hash of its spec', () => {
    for (const s of plan.plan.steps) {
      for (const job of plan.files[s.file].filter((o) => o.kind === 'Job')) {
        expect(job.metadata.labels).toMatchObject({
          [LABELS.plan]: 'migrate', [LABELS.step]: s.name, [LABELS.partOf]: 'uyuni', [LABELS.managedBy]: 'uyuni-cdk',
        });
        expect(job.metadata.annotations!['uyuni-cdk.io/spec-hash']).toBe(hashSpec(job.spec));
        expect(job.metadata.name).not.toMatch(/[0-9]{6,}/); // no timestamps
      }
    }
  });

  it('declares the ssh Secret and ConfigMap as requirements of the data sync, with the commands that create them', () => {
    const req = step(plan, 'data-sync').requires;
    expect(req.map((r) => [r.kind, r.name, r.keys, r.ifMissing])).toEqual([
      ['Secret', 'uyuni-migration-key', ['key', 'key.pub'], 'fail'],
      ['ConfigMap', 'uyuni-migration-ssh', ['config', 'known_hosts'], 'fail'],
    ]);
    expect(req[0].message).toContain('kubectl -n uyuni create secret generic uyuni-migration-key --from-file=key=');
    expect(req[1].message).toContain('kubectl -n uyuni create configmap uyuni-migration-ssh --from-file=config=');
    expect(req.every((r) => r.generate === undefined)).toBe(true);
    // never synthesized
    expect(plan.objects.filter((o) => o.metadata.name.startsWith('uyuni-migration-'))).toEqual([]);
  });

  it('mounts the ssh key (0600), the ssh config, migration-data and every server volume into the data sync', () => {
    const job = plan.find('Job', 'uyuni-data-sync');
    const volumes = podSpec(job).volumes;
    const mounts = podSpec(job).containers[0].volumeMounts;
    const key = volumes.find((v: any) => v.secret?.secretName === 'uyuni-migration-key');
    expect(key.secret.defaultMode).toBe(0o600);
    expect(key.secret.items.find((i: any) => i.key === 'key').mode).toBe(0o600);
    expect(volumes.find((v: any) => v.configMap?.name === 'uyuni-migration-ssh')).toBeDefined();
    const at = (p: string) => mounts.find((m: any) => m.mountPath === p);
    expect(at('/root/.ssh/key')).toMatchObject({ name: key.name, subPath: 'key', readOnly: true });
    expect(at('/root/.ssh/key.pub')).toMatchObject({ name: key.name, subPath: 'key.pub' });
    expect(at('/root/.ssh/config')).toMatchObject({ subPath: 'config' });
    expect(at('/root/.ssh/known_hosts')).toMatchObject({ subPath: 'known_hosts' });
    expect(at('/var/lib/uyuni-tools')).toMatchObject({ name: 'migration-data' });
    const claims = volumes.filter((v: any) => v.persistentVolumeClaim).map((v: any) => v.persistentVolumeClaim.claimName).sort();
    expect(claims).toEqual([...SERVER_VOLUMES.map((v) => v.name), 'migration-data'].sort());
    for (const v of SERVER_VOLUMES) expect(at(`/mnt${v.mountPath}`)).toMatchObject({ name: v.name });
  });

  it('passes the source to the data sync as environment variables only', () => {
    const job = plan.find('Job', 'uyuni-data-sync');
    expect(envOf(job)).toMatchObject({
      SOURCE_FQDN: 'old-server.example.com', SOURCE_USER: 'root', SOURCE_PORT: '22',
      OLD_PG_VERSION: '14', NEW_PG_VERSION: '16', TARGET_ROOT: '/mnt', MIGRATION_DIR: '/var/lib/uyuni-tools',
    });
    expect(envOf(job).VOLUME_PATHS.split(' ')).toEqual(SERVER_VOLUMES.map((v) => v.mountPath));
    expect(podSpec(job).containers[0].command[2]).not.toContain('old-server.example.com');
  });

  it('runs the database upgrade in the server-migration-14-16 image with only var-pgsql mounted', () => {
    const job = plan.find('Job', 'uyuni-db-upgrade');
    expect(podSpec(job).containers[0].image).toBe('registry.opensuse.org/uyuni/server-migration-14-16:2025.10');
    expect(podSpec(job).volumes).toEqual([{ name: 'var-pgsql', persistentVolumeClaim: { claimName: 'var-pgsql' } }]);
    expect(podSpec(job).containers[0].volumeMounts).toEqual([{ name: 'var-pgsql', mountPath: '/var/lib/pgsql' }]);
    expect(envOf(job)).toMatchObject({ OLD_PG_VERSION: '14', NEW_PG_VERSION: '16' });
    expect(step(plan, 'db-upgrade').timeoutSeconds).toBe(21600);
  });

  it('inspects the migrated data into facts, and gates the database upgrade on them', () => {
    const inspect = step(plan, 'inspect');
    expect(inspect.factsFrom).toEqual({ apiVersion: 'batch/v1', kind: 'Job', name: 'uyuni-inspect', namespace: 'uyuni' });
    const job = plan.find('Job', 'uyuni-inspect');
    expect(envOf(job).MIGRATION_DATA).toBe('/var/lib/uyuni-tools/data');
    expect(podSpec(job).containers[0].volumeMounts).toEqual([{ name: 'migration-data', mountPath: '/var/lib/uyuni-tools', readOnly: true }]);
    const gates = step(plan, 'db-upgrade').gates;
    expect(gates).toContainEqual(expect.objectContaining({ type: 'compare-versions', left: { fact: 'current_pg_version' }, op: '==', right: { value: '14' } }));
    expect(gates).toContainEqual(expect.objectContaining({ type: 'compare-versions', left: { fact: 'image_pg_version' }, op: '==', right: { value: '16' } }));
    expect(gates).toContainEqual(expect.objectContaining({ type: 'equals', left: { fact: 'fqdn' }, right: { value: 'old-server.example.com' } }));
    // no other step decides on facts
    expect(plan.plan.steps.filter((s) => s.gates.length > 0).map((s) => s.name)).toEqual(['db-upgrade']);
  });

  it('finalizes with REINDEX and the long, configurable timeout, then the deploy steps without a setup Job', () => {
    const job = plan.find('Job', 'uyuni-db-finalize');
    expect(envOf(job)).toMatchObject({ REINDEX: 'true', ANALYZE: 'true', NEW_PG_VERSION: '16' });
    expect(step(plan, 'db-finalize').timeoutSeconds).toBe(86400);
    expect(step(plan, 'data-sync').timeoutSeconds).toBe(86400);
    expect(plan.objects.some((o) => o.metadata.name === 'uyuni-setup')).toBe(false);
    const longer = migrate(exampleWith({ timeouts: { dbFinalizeSeconds: 200000, dataSyncSeconds: 7200 } }));
    expect(step(longer, 'db-finalize').timeoutSeconds).toBe(200000);
    expect(step(longer, 'data-sync').timeoutSeconds).toBe(7200);
  });

  it('deletes the migration-data claim in a last step, after the server runs', () => {
    const steps = plan.plan.steps.map((s) => s.name);
    const cleanup = step(plan, 'cleanup');
    expect(steps.indexOf('cleanup')).toBe(steps.length - 1);
    expect(steps.indexOf('cleanup')).toBeGreaterThan(steps.indexOf('server'));
    const claim = { apiVersion: 'v1', kind: 'PersistentVolumeClaim', name: 'migration-data', namespace: 'uyuni' };
    expect(cleanup.actions).toEqual([{ type: 'delete', object: claim }]);
    expect(cleanup.waits).toContainEqual({ object: claim, for: 'deleted' });
    expect(plan.files[cleanup.file].map((o) => `${o.kind}/${o.metadata.name}`)).toEqual(['ConfigMap/uyuni-migration']);
    // the claim exists until then
    expect(plan.files[step(plan, 'volumes').file].map((o) => o.metadata.name)).toContain('migration-data');
  });

  it('keeps the migration-data claim when the configuration says so', () => {
    const kept = migrate(exampleWith({ migration: { ...parse(exampleText).migration, keepMigrationData: true } }));
    expect(kept.plan.steps.map((s) => s.name)).not.toContain('cleanup');
    expect(kept.plan.steps.flatMap((s) => s.actions).filter((a) => a.type === 'delete')).toEqual([]);
  });

  it('skips the database upgrade when the PostgreSQL major stays, and gates the finalization instead', () => {
    const same = migrate(exampleWith({ migration: { ...parse(exampleText).migration, postgresql: { from: 16, to: 16 } } }));
    expect(same.plan.steps.map((s) => s.name)).not.toContain('db-upgrade');
    expect(same.objects.some((o) => o.metadata.name === 'uyuni-db-upgrade')).toBe(false);
    expect(step(same, 'db-finalize').gates.length).toBeGreaterThan(0);
    expect(envOf(same.find('Job', 'uyuni-db-finalize'))).toMatchObject({ ANALYZE: 'false', REINDEX: 'true' });
  });

  it('validates every object against the Kubernetes and cert-manager schemas, and writes no Secret', () => {
    for (const o of plan.objects) expect(() => validateObject(o)).not.toThrow();
    expect(plan.objects.filter((o) => o.kind === 'Secret')).toEqual([]);
    expect(plan.objects.filter((o) => o.stringData !== undefined || (o.kind !== 'ConfigMap' && o.data !== undefined))).toEqual([]);
  });

  it('matches the snapshot of its plan index and step files', () => {
    expect({ plan: { ...plan.plan, generator: '(generator)' }, files: plan.files }).toMatchSnapshot();
  });
});

describe('migration configuration errors', () => {
  const SYNTH = path.join(ROOT, 'bin', 'synth.js');

  /** Runs the synth app on a configuration; dist/ holds a sentinel that must survive. */
  function synthWith(text: string) {
    const cwd = tempDir();
    fs.mkdirSync(path.join(cwd, 'dist', 'migrate'), { recursive: true });
    fs.writeFileSync(path.join(cwd, 'dist', 'migrate', 'plan.json'), 'sentinel\n');
    fs.writeFileSync(path.join(cwd, 'bad.yaml'), text);
    const r = spawnSync(process.execPath, [SYNTH], { cwd, encoding: 'utf8', env: { ...process.env, UYUNI_CONFIG: 'bad.yaml', CDK8S_OUTDIR: '' } });
    return { ...r, sentinel: fs.readFileSync(path.join(cwd, 'dist', 'migrate', 'plan.json'), 'utf8'), files: fs.readdirSync(path.join(cwd, 'dist', 'migrate')) };
  }
  const migrationWith = (m: Record<string, any>) => {
    const base = parse(exampleText);
    return JSON.stringify({ ...base, migration: { ...base.migration, ...m } });
  };

  it.each([
    ['a source FQDN with a shell metacharacter', migrationWith({ source: { fqdn: 'old.example.com;reboot' } }), 'migration.source.fqdn'],
    ['a source that is not a FQDN', migrationWith({ source: { fqdn: 'localhost' } }), 'migration.source.fqdn'],
    ['an ssh user with spaces', migrationWith({ source: { fqdn: 'old.example.com', user: 'root -o ProxyCommand=x' } }), 'migration.source.user'],
    ['an ssh user with a $()', migrationWith({ source: { fqdn: 'old.example.com', user: '$(id)' } }), 'migration.source.user'],
    ['an ssh port out of range', migrationWith({ source: { fqdn: 'old.example.com', port: 70000 } }), 'migration.source.port'],
    ['to lower than from', migrationWith({ postgresql: { from: 16, to: 14 } }), 'migration.postgresql.to'],
    ['an unknown PostgreSQL version', migrationWith({ postgresql: { from: 9, to: 16 } }), 'migration.postgresql.from'],
    ['a PostgreSQL version given as text', migrationWith({ postgresql: { from: '14; rm -rf /', to: 16 } }), 'migration.postgresql.from'],
    ['a separate db Deployment', JSON.stringify({ ...parse(exampleText), db: { separate: true } }), 'db.separate'],
    ['an unknown setting', migrationWith({ sshAgent: true }), 'migration.sshAgent'],
  ])('rejects %s with exit 2, naming the field, dist/ untouched', (_what, text, field) => {
    const r = synthWith(text);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(field);
    expect(r.sentinel).toBe('sentinel\n');
    expect(r.files).toEqual(['plan.json']);
  });

  it('accepts the example and writes dist/migrate', () => {
    const r = synthWith(exampleText);
    expect(r.status).toBe(0);
    expect(r.sentinel).not.toBe('sentinel\n');
    expect(r.files).toContain('0002-data-sync.k8s.yaml');
  });
});

describe('migration with coco attestation', () => {
  it('requires the old server\'s database credentials instead of generating new ones', () => {
    const text = fs.readFileSync(path.join(ROOT, 'examples', 'migration.yaml'), 'utf8') + '\ncoco:\n  replicas: 1\n';
    const { migrate } = synthYaml(text);
    const requires = migrate.plan.steps.flatMap((s) => s.requires);
    const db = requires.find((r) => r.name === 'db-credentials')!;
    expect(db).toMatchObject({ kind: 'Secret', ifMissing: 'fail', keys: ['username', 'password'] });
    expect(db.generate).toBeUndefined();
    expect(db.message).toContain('kubectl -n uyuni create secret generic db-credentials --from-literal=username=<db_user>');
    // Without coco nothing reads it, so it is generated as in the install.
    expect(synthYaml(fs.readFileSync(path.join(ROOT, 'examples', 'migration.yaml'), 'utf8')).migrate.plan.steps
      .flatMap((s) => s.requires).find((r) => r.name === 'db-credentials')!.ifMissing).toBe('generate');
  });
});

