import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { parse } from 'yaml';
import { hashSpec, readScript } from '../src/constructs/script-job';
import { SERVER_VOLUMES } from '../src/model/volumes';
import { LABELS } from '../src/plan/types';
import type { Gate } from '../src/plan/types';
import { evaluateGate } from '../src/runtime/gates';
import { envOf, podSpec, readPlanDir, ROOT, SynthesizedPlan, synthYaml, tempDir } from './helpers/synth';
import { validateObject } from './helpers/validate';

const EXAMPLE = path.join(ROOT, 'examples', 'migration.yaml');
const exampleText = fs.readFileSync(EXAMPLE, 'utf8');
const example = () => parse(exampleText);

/** The example with changes applied (a shallow merge per top-level section). */
function exampleWith(changes: Record<string, any>): string {
  const base = example();
  for (const [k, v] of Object.entries(changes)) base[k] = v && typeof v === 'object' && !Array.isArray(v) ? { ...base[k], ...v } : v;
  return JSON.stringify(base);
}
/** The example with changes to its migration section. */
const migrationWith = (m: Record<string, any>) => exampleWith({ migration: { ...example().migration, ...m } });
const migrate = (text = exampleText): SynthesizedPlan => synthYaml(text).migrate;

const SCRIPTS: Record<string, string> = {
  'uyuni-data-sync': 'data-sync.sh',
  'uyuni-inspect': 'inspect.sh',
  'uyuni-inspect-db': 'inspect-db.sh',
  'uyuni-db-migrate': 'db-migrate.sh',
  'uyuni-db-finalize': 'db-finalize.sh',
};

const NS = 'uyuni';
const WORKLOADS = ['Deployment', 'StatefulSet', 'DaemonSet', 'ReplicaSet', 'Pod'];
const jobs = (p: SynthesizedPlan) => p.objects.filter((o) => o.kind === 'Job');
const namesIn = (p: SynthesizedPlan, step: string) => p.files[p.step(step).file].map((o) => `${o.kind}/${o.metadata.name}`);
const stepNames = (p: SynthesizedPlan) => p.plan.steps.map((s) => s.name);
const claimNames = (volumes: any[]) => volumes.filter((v) => v.persistentVolumeClaim).map((v) => v.persistentVolumeClaim.claimName);

/** Facts of a sound migration of an Uyuni 2024.08 host on PostgreSQL 14 to the 2026.08 images. */
const SOUND: Record<string, string> = {
  product: 'uyuni', uyuni_release: '2026.08', current_product: 'uyuni', current_release: '2024.08',
  source_fqdn: 'old-server.example.com', fqdn: 'old-server.example.com', db_user: 'spacewalk', db_name: 'susemanager', db_port: '5432',
  current_pg_version: '14', image_pg_version: '18',
};

function factsWith(change: Record<string, string | undefined>): Record<string, string> {
  const facts = { ...SOUND };
  for (const [k, v] of Object.entries(change)) {
    if (v === undefined) delete facts[k];
    else facts[k] = v;
  }
  return facts;
}

/** The messages of the gates that refuse these facts, evaluated by the runtime's own evaluator. */
function refusals(gates: readonly Gate[], facts: Record<string, string>): string[] {
  return gates.filter((g) => !evaluateGate(g, facts).ok).map((g) => g.message);
}

describe('the migrate plan of examples/migration.yaml (PostgreSQL 14 → 18)', () => {
  const plan = migrate();

  it('runs namespace, claims, TLS, data sync, inspections, the database upgrade, the deploy steps with a finalization, then the cleanup', () => {
    expect(plan.plan.name).toBe('migrate');
    expect(stepNames(plan)).toEqual([
      'namespace', 'volumes', 'tls', 'data-sync', 'inspect', 'inspect-db', 'db-upgrade',
      'services', 'database', 'db-finalize', 'ingress', 'server', 'cleanup',
    ]);
    expect(Object.keys(plan.files)).toEqual(plan.plan.steps.map((s, i) => `${String(i).padStart(4, '0')}-${s.name}.k8s.yaml`));
    expect(plan.plan.steps.map((s) => s.file)).toEqual(Object.keys(plan.files));
  });

  it('claims the install\'s volumes plus var-pgsql (the old database) and migration-data', () => {
    const config = example();
    delete config.migration;
    const install = synthYaml(JSON.stringify(config)).install;
    const claims = (p: SynthesizedPlan) => p.files[p.step('volumes').file]
      .filter((o) => o.kind === 'PersistentVolumeClaim').map((o) => ({ name: o.metadata.name, spec: o.spec }));
    expect(namesIn(plan, 'volumes').every((n) => n.startsWith('PersistentVolumeClaim/'))).toBe(true);
    expect(claims(plan)).toEqual([
      ...claims(install),
      { name: 'var-pgsql', spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '50Gi' } }, storageClassName: 'standard' } },
      { name: 'migration-data', spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '10Mi' } }, storageClassName: 'standard' } },
    ]);
    expect(claims(install).map((c) => c.name)).toContain('var-pgsql18');
  });

  it('writes data-sync → inspect → inspect-db → db-migrate → Deployment db → db-finalize → Deployment uyuni, each in its own file, in that order', () => {
    const fileOf = (kind: string, name: string) => Object.keys(plan.files).findIndex((f) => plan.files[f].some((o) => o.kind === kind && o.metadata.name === name));
    const order = [
      fileOf('Job', 'uyuni-data-sync'), fileOf('Job', 'uyuni-inspect'), fileOf('Job', 'uyuni-inspect-db'), fileOf('Job', 'uyuni-db-migrate'),
      fileOf('Deployment', 'db'), fileOf('Job', 'uyuni-db-finalize'), fileOf('Deployment', 'uyuni'),
    ];
    expect(order.every((i) => i >= 0)).toBe(true);
    expect(order).toEqual([...order].sort((a, b) => a - b));
    expect(new Set(order).size).toBe(order.length);
  });

  it('starts no workload before the database step, and nothing but the db there: the data is upgraded first', () => {
    const database = stepNames(plan).indexOf('database');
    const before = plan.plan.steps.slice(0, database).flatMap((s) => plan.files[s.file]);
    expect(before.filter((o) => WORKLOADS.includes(o.kind))).toEqual([]);
    expect(namesIn(plan, 'database')).toEqual(['Deployment/db']);
    const db = plan.find('Deployment', 'db');
    expect(podSpec(db).containers[0].image).toBe('registry.opensuse.org/uyuni/server-postgresql:2026.08');
    expect(claimNames(podSpec(db).volumes)).toEqual(['var-pgsql18']);
    // after it, workloads only in the server step
    const after = plan.plan.steps.slice(database + 1).filter((s) => plan.files[s.file].some((o) => WORKLOADS.includes(o.kind)));
    expect(after.map((s) => s.name)).toEqual(['server']);
    expect(namesIn(plan, 'server').filter((n) => n.startsWith('Deployment/'))).toEqual(['Deployment/uyuni', 'Deployment/tftp']);
  });

  it('scales every workload on the data to 0 (a server left from an earlier try) before anything is copied', () => {
    expect(plan.step('data-sync').actions).toEqual(['uyuni', 'uyuni-coco-attestation', 'uyuni-hub-xmlrpc', 'tftp', 'db'].map((name) => ({
      type: 'scale', object: { apiVersion: 'apps/v1', kind: 'Deployment', name, namespace: NS }, replicas: 0,
    })));
    expect(plan.plan.steps.filter((s) => s.actions.some((a) => a.type === 'scale')).map((s) => s.name)).toEqual(['data-sync']);
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

  it('labels each Job with its plan and step, annotates a spec-hash, and waits for it to complete', () => {
    for (const s of plan.plan.steps) {
      for (const job of plan.files[s.file].filter((o) => o.kind === 'Job')) {
        expect(job.metadata.labels).toMatchObject({
          [LABELS.plan]: 'migrate', [LABELS.step]: s.name, [LABELS.partOf]: 'uyuni', [LABELS.managedBy]: 'uyuni-cdk',
          'uyuni-cdk.io/job': job.metadata.name,
        });
        expect(job.metadata.annotations!['uyuni-cdk.io/spec-hash']).toMatch(/^sha256:[0-9a-f]{64}$/);
        expect(job.metadata.name).not.toMatch(/[0-9]{6,}/); // no timestamps
        expect(s.waits).toContainEqual({ object: { apiVersion: 'batch/v1', kind: 'Job', name: job.metadata.name, namespace: NS }, for: 'complete' });
      }
    }
  });

  it('annotates the hash of the spec of the Jobs that take no Quantity from the server pod', () => {
    for (const name of ['uyuni-data-sync', 'uyuni-inspect', 'uyuni-inspect-db', 'uyuni-db-migrate']) {
      const job = plan.find('Job', name);
      expect(job.metadata.annotations!['uyuni-cdk.io/spec-hash']).toBe(hashSpec(job.spec));
    }
  });

  it('annotates every Job with the hash of its spec as written, uyuni-db-finalize included', () => {
    for (const job of jobs(plan)) expect(job.metadata.annotations!['uyuni-cdk.io/spec-hash']).toBe(hashSpec(job.spec));
  });

  it('changes the spec-hash of a Job with its spec, and only then', () => {
    const again = migrate();
    const retagged = migrate(exampleWith({ images: { ...example().images, tag: '2026.09' } }));
    for (const job of jobs(plan)) {
      const hash = (p: SynthesizedPlan) => p.find('Job', job.metadata.name).metadata.annotations!['uyuni-cdk.io/spec-hash'];
      expect(hash(again)).toBe(hash(plan));
      expect(hash(retagged)).not.toBe(hash(plan));
    }
  });

  /** What a pod reads (claims, Secrets, ConfigMaps) that no step up to `upTo` creates or requires. */
  function unprovided(upTo: string, pod: any): string[] {
    const provided = new Set<string>();
    for (const s of plan.plan.steps.slice(0, stepNames(plan).indexOf(upTo) + 1)) {
      for (const r of s.requires) provided.add(`${r.kind}/${r.name}`);
      for (const o of plan.files[s.file]) {
        provided.add(`${o.kind}/${o.metadata.name}`);
        if (o.kind === 'Certificate') provided.add(`Secret/${o.spec.secretName}`);
      }
    }
    const reads = new Set<string>();
    for (const c of [...(pod.initContainers ?? []), ...pod.containers]) {
      for (const e of c.env ?? []) {
        if (e.valueFrom?.configMapKeyRef) reads.add(`ConfigMap/${e.valueFrom.configMapKeyRef.name}`);
        if (e.valueFrom?.secretKeyRef) reads.add(`Secret/${e.valueFrom.secretKeyRef.name}`);
      }
    }
    for (const v of pod.volumes ?? []) {
      if (v.persistentVolumeClaim) reads.add(`PersistentVolumeClaim/${v.persistentVolumeClaim.claimName}`);
      if (v.secret) reads.add(`Secret/${v.secret.secretName}`);
      if (v.configMap) reads.add(`ConfigMap/${v.configMap.name}`);
    }
    return [...reads].filter((r) => !provided.has(r));
  }
  const workloads = () => plan.plan.steps.flatMap((s) => plan.files[s.file]
    .filter((o) => o.kind === 'Job' || o.kind === 'Deployment').map((o) => ({ step: s.name, name: o.metadata.name, pod: podSpec(o) })));

  it('creates or requires, by their step, every claim, Secret and ConfigMap the pods of the migration read (db-finalize aside)', () => {
    const missing = workloads().filter((w) => w.name !== 'uyuni-db-finalize').flatMap((w) => unprovided(w.step, w.pod).map((r) => `${w.name}: ${r}`));
    expect(missing).toEqual([]);
    expect(workloads().length).toBeGreaterThan(5);
  });

  it('creates or requires, by the db-finalize step, everything uyuni-db-finalize reads', () => {
    expect(unprovided('db-finalize', podSpec(plan.find('Job', 'uyuni-db-finalize')))).toEqual([]);
  });

  it('requires the ssh Secret and ConfigMap before the data sync, with the commands that create them', () => {
    const req = plan.step('data-sync').requires;
    expect(req.slice(0, 2).map((r) => [r.kind, r.name, r.keys, r.ifMissing])).toEqual([
      ['Secret', 'uyuni-migration-key', ['key', 'key.pub'], 'fail'],
      ['ConfigMap', 'uyuni-migration-ssh', ['config', 'known_hosts'], 'fail'],
    ]);
    expect(req[0].message).toContain('kubectl -n uyuni create secret generic uyuni-migration-key --from-file=key=');
    expect(req[1].message).toContain('kubectl -n uyuni create configmap uyuni-migration-ssh --from-file=config=');
    expect(req[1].message).toContain('ssh-keyscan -p 22 old-server.example.com');
    // never synthesized
    expect(plan.objects.filter((o) => o.metadata.name.startsWith('uyuni-migration-'))).toEqual([]);
  });

  it.each([0, 1])('requires the old server\'s database credentials before the data sync, never generated (coco replicas %i)', (coco) => {
    const p = coco ? migrate(exampleWith({ coco: { replicas: coco } })) : plan;
    const req = p.step('data-sync').requires;
    expect(req.map((r) => r.name)).toEqual(['uyuni-migration-key', 'uyuni-migration-ssh', 'db-credentials', 'reportdb-credentials']);
    for (const [name, user, pass] of [['db-credentials', 'db_user', 'db_password'], ['reportdb-credentials', 'report_db_user', 'report_db_password']]) {
      const r = req.find((x) => x.name === name)!;
      expect(r).toMatchObject({ kind: 'Secret', namespace: NS, keys: ['username', 'password'], ifMissing: 'fail' });
      expect(r.generate).toBeUndefined();
      // where to read them, and how to create the Secret
      expect(r.message).toContain(`ssh root@old-server.example.com sudo grep -E '^(${user}|${pass}) ' /etc/rhn/rhn.conf`);
      expect(r.message).toContain(`kubectl -n uyuni create secret generic ${name} --type=kubernetes.io/basic-auth --from-literal=username=<${user}>`);
    }
    expect(req.every((r) => r.ifMissing === 'fail' && r.generate === undefined)).toBe(true);
  });

  it('generates the migrated database credentials in no step', () => {
    const generated = plan.plan.steps.flatMap((s) => s.requires)
      .filter((r) => ['db-credentials', 'reportdb-credentials'].includes(r.name) && r.ifMissing !== 'fail');
    expect(generated).toEqual([]);
  });

  it('mounts the ssh key (0600), the ssh config, migration-data and every synced claim into the data sync', () => {
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
    // every server claim but ca-certs (its CA files come from the TLS step), and the old database
    const synced = SERVER_VOLUMES.filter((v) => v.name !== 'ca-certs');
    expect(claimNames(volumes).sort()).toEqual([...synced.map((v) => v.name), 'var-pgsql', 'migration-data'].sort());
    for (const v of synced) expect(at(`/mnt${v.mountPath}`)).toMatchObject({ name: v.name });
    expect(at('/mnt/var/lib/pgsql')).toMatchObject({ name: 'var-pgsql' });
    expect(mounts.filter((m: any) => m.name === 'ca-certs' || m.mountPath.startsWith('/mnt/etc/pki'))).toEqual([]);
  });

  it('passes the source to the data sync as environment variables only', () => {
    const job = plan.find('Job', 'uyuni-data-sync');
    expect(envOf(job)).toMatchObject({
      SOURCE_FQDN: 'old-server.example.com', SOURCE_USER: 'root', SOURCE_PORT: '22',
      OLD_PG_VERSION: '14', NEW_PG_VERSION: '18', TARGET_ROOT: '/mnt', MIGRATION_DIR: '/var/lib/uyuni-tools',
    });
    const paths = envOf(job).VOLUME_PATHS.split(' ');
    expect(paths).toEqual([...SERVER_VOLUMES.filter((v) => v.name !== 'ca-certs').map((v) => v.mountPath), '/var/lib/pgsql']);
    expect(paths).toContain('/var/lib/pgsql');
    expect(paths).not.toContain('/etc/pki/trust/anchors/');
    expect(podSpec(job).containers[0].command[2]).not.toContain('old-server.example.com');
    expect(plan.step('data-sync').timeoutSeconds).toBe(86400);
  });

  it('inspects the migrated data (migration-data, read-only) and the old database (var-pgsql, read-only) in the new images', () => {
    expect(plan.step('inspect').factsFrom).toEqual({ apiVersion: 'batch/v1', kind: 'Job', name: 'uyuni-inspect', namespace: NS });
    expect(plan.step('inspect-db').factsFrom).toEqual({ apiVersion: 'batch/v1', kind: 'Job', name: 'uyuni-inspect-db', namespace: NS });
    const inspect = plan.find('Job', 'uyuni-inspect');
    expect(podSpec(inspect).containers[0].image).toBe('registry.opensuse.org/uyuni/server:2026.08');
    expect(envOf(inspect).MIGRATION_DATA).toBe('/var/lib/uyuni-tools/data');
    expect(podSpec(inspect).volumes).toEqual([{ name: 'migration-data', persistentVolumeClaim: { claimName: 'migration-data' } }]);
    expect(podSpec(inspect).containers[0].volumeMounts).toEqual([{ name: 'migration-data', mountPath: '/var/lib/uyuni-tools', readOnly: true }]);
    const inspectDb = plan.find('Job', 'uyuni-inspect-db');
    expect(podSpec(inspectDb).containers[0].image).toBe('registry.opensuse.org/uyuni/server-postgresql:2026.08');
    expect(podSpec(inspectDb).volumes).toEqual([{ name: 'var-pgsql', persistentVolumeClaim: { claimName: 'var-pgsql' } }]);
    expect(podSpec(inspectDb).containers[0].volumeMounts).toEqual([{ name: 'var-pgsql', mountPath: envOf(inspectDb).DATA_DIR, readOnly: true }]);
    // nothing runs yet whose node they should share
    expect(podSpec(inspect).affinity).toBeUndefined();
    expect(podSpec(inspectDb).affinity).toBeUndefined();
  });

  it('gates the database upgrade on the inspected facts, and no other step', () => {
    expect(plan.plan.steps.filter((s) => s.gates.length > 0).map((s) => s.name)).toEqual(['db-upgrade']);
    const gates = plan.step('db-upgrade').gates;
    expect(gates).toContainEqual(expect.objectContaining({ type: 'compare-versions', left: { fact: 'current_pg_version' }, op: '==', right: { value: '14' } }));
    expect(gates).toContainEqual(expect.objectContaining({ type: 'compare-versions', left: { fact: 'image_pg_version' }, op: '==', right: { value: '18' } }));
    expect(gates).toContainEqual(expect.objectContaining({ type: 'equals', left: { fact: 'fqdn' }, right: { value: 'old-server.example.com' } }));
    expect(refusals(gates, SOUND)).toEqual([]);
  });

  it.each([
    ['a database version other than migration.postgresql.from', { current_pg_version: '16' }, /differs from migration.postgresql.from \(14\)/],
    ['an image PostgreSQL other than migration.postgresql.to', { image_pg_version: '17' }, /differs from migration.postgresql.to \(18\)/],
    ['a PostgreSQL downgrade', { current_pg_version: '19' }, /cannot be downgraded/],
    ['no database data', { current_pg_version: undefined }, /no database data: var-pgsql holds no PG_VERSION/],
    ['a source without a release file', { current_release: undefined, current_product: undefined },
      /neither \/etc\/uyuni-release nor \/etc\/susemanager-release/],
    ['a release downgrade', { current_release: '2027.01' }, /release downgrades/],
    ['a switch from SUSE Manager to Uyuni', { current_product: 'suse-manager', current_release: '5.0.3' }, /switching between Uyuni and SUSE Manager/],
    ['data of another server', { fqdn: 'other.example.com' }, /another server name than fqdn old-server.example.com/],
  ])('refuses %s', (_what, change, message) => {
    const refused = refusals(plan.step('db-upgrade').gates, factsWith(change));
    expect(refused.length).toBeGreaterThan(0);
    expect(refused.join('\n')).toMatch(message);
  });

  it('compares PostgreSQL versions as numbers, not text ("9" < "14")', () => {
    const gates = plan.step('db-upgrade').gates;
    const nine = refusals(gates, factsWith({ current_pg_version: '9' })).join('\n');
    expect(nine).not.toMatch(/cannot be downgraded/);
    expect(nine).toMatch(/differs from migration.postgresql.from \(14\)/);
    expect(refusals(gates, factsWith({ image_pg_version: '9' })).join('\n')).toMatch(/cannot be downgraded/);
  });

  it('upgrades PostgreSQL with server-database-migration as root: var-pgsql → var-pgsql18, the db certificate, nothing else', () => {
    const job = plan.find('Job', 'uyuni-db-migrate');
    const c = podSpec(job).containers[0];
    expect(c.image).toBe('registry.opensuse.org/uyuni/server-database-migration:2026.08');
    expect(c.securityContext).toEqual({ runAsUser: 0, runAsGroup: 0, runAsNonRoot: false });
    expect(claimNames(podSpec(job).volumes)).toEqual(['var-pgsql', 'var-pgsql18']);
    expect(podSpec(job).volumes.find((v: any) => v.secret).secret).toMatchObject({
      secretName: 'db-cert', items: [{ key: 'tls.crt', path: 'tls.crt' }, { key: 'tls.key', path: 'tls.key', mode: 0o400 }],
    });
    expect(c.volumeMounts).toEqual([
      { name: 'var-pgsql', mountPath: '/migration/old' },
      { name: 'var-pgsql18', mountPath: '/migration/target' },
      { name: 'db-cert', mountPath: envOf(job).CERT_DIR, readOnly: true },
    ]);
    expect(envOf(job)).toMatchObject({ OLD_PG_VERSION: '14', NEW_PG_VERSION: '18', TARGET: '/migration/target' });
    expect(plan.step('db-upgrade').timeoutSeconds).toBe(21600);
    // the db certificate exists before: the TLS step comes first
    expect(stepNames(plan).indexOf('tls')).toBeLessThan(stepNames(plan).indexOf('db-upgrade'));
  });

  it('finalizes once with REINDEX and the migration\'s rewrites, on the server\'s mounts after db-waiter', () => {
    const job = plan.find('Job', 'uyuni-db-finalize');
    expect(envOf(job)).toMatchObject({ RUN_REINDEX: 'true', RUN_SCHEMA_UPDATE: 'true', MIGRATION: 'true' });
    const server = podSpec(plan.find('Deployment', 'uyuni'));
    expect(podSpec(job).initContainers.map((c: any) => c.name)).toEqual(['db-waiter']);
    expect(podSpec(job).volumes).toEqual(server.volumes);
    expect(podSpec(job).containers[0].volumeMounts).toEqual(server.containers[0].volumeMounts);
    expect(plan.step('db-finalize').timeoutSeconds).toBe(86400);
  });

  it('takes the long timeouts from the configuration', () => {
    const longer = migrate(exampleWith({ timeouts: { dbFinalizeSeconds: 200000, dataSyncSeconds: 7200, dbUpgradeSeconds: 3600 } }));
    expect(longer.step('db-finalize').timeoutSeconds).toBe(200000);
    expect(longer.step('data-sync').timeoutSeconds).toBe(7200);
    expect(longer.step('db-upgrade').timeoutSeconds).toBe(3600);
  });

  it('has no setup Job and no leftovers of the PostgreSQL 14→16 era', () => {
    expect(plan.objects.some((o) => o.metadata.name.startsWith('uyuni-setup'))).toBe(false);
    for (const text of Object.values(plan.text)) expect(text).not.toMatch(/mgr-setup|post-upgrade\.sh|server-migration-/);
    expect(JSON.stringify(plan.plan)).not.toMatch(/mgr-setup|post-upgrade|server-migration-|uyuni-setup/);
  });

  it('deletes the migration-data claim in a last step, after the server runs', () => {
    const steps = stepNames(plan);
    const cleanup = plan.step('cleanup');
    expect(steps.indexOf('cleanup')).toBe(steps.length - 1);
    expect(steps.indexOf('cleanup')).toBeGreaterThan(steps.indexOf('server'));
    const claim = { apiVersion: 'v1', kind: 'PersistentVolumeClaim', name: 'migration-data', namespace: NS };
    expect(cleanup.actions).toEqual([{ type: 'delete', object: claim }]);
    expect(cleanup.waits).toContainEqual({ object: claim, for: 'deleted' });
    expect(namesIn(plan, 'cleanup')).toEqual(['ConfigMap/uyuni-migration']);
    expect(plan.find('ConfigMap', 'uyuni-migration').data).toEqual({ source: 'old-server.example.com', postgresql: '14 -> 18' });
    // the only delete of the plan; the claim exists until then
    expect(plan.plan.steps.flatMap((s) => s.actions).filter((a) => a.type === 'delete')).toHaveLength(1);
    expect(namesIn(plan, 'volumes')).toContain('PersistentVolumeClaim/migration-data');
  });

  it('validates every object against the Kubernetes and cert-manager schemas, and writes no Secret', () => {
    for (const o of plan.objects) expect(() => validateObject(o)).not.toThrow();
    expect(plan.objects.filter((o) => o.kind === 'Secret')).toEqual([]);
    expect(plan.objects.filter((o) => o.stringData !== undefined || (o.kind !== 'ConfigMap' && o.data !== undefined))).toEqual([]);
  });
});

describe('migrate plan variants', () => {
  it('keeps the migration-data claim when the configuration says so', () => {
    const kept = migrate(migrationWith({ keepMigrationData: true }));
    expect(stepNames(kept)).not.toContain('cleanup');
    expect(stepNames(kept)[stepNames(kept).length - 1]).toBe('server');
    expect(kept.plan.steps.flatMap((s) => s.actions).filter((a) => a.type === 'delete')).toEqual([]);
  });

  it('migrates from PostgreSQL 16 with the same steps, gated on 16', () => {
    const from16 = migrate(migrationWith({ postgresql: { from: 16 } }));
    expect(stepNames(from16)).toEqual(stepNames(migrate()));
    expect(envOf(from16.find('Job', 'uyuni-data-sync'))).toMatchObject({ OLD_PG_VERSION: '16', NEW_PG_VERSION: '18' });
    expect(envOf(from16.find('Job', 'uyuni-db-migrate'))).toMatchObject({ OLD_PG_VERSION: '16', NEW_PG_VERSION: '18' });
    const gates = from16.step('db-upgrade').gates;
    expect(refusals(gates, factsWith({ current_pg_version: '16' }))).toEqual([]);
    expect(refusals(gates, SOUND).join('\n')).toMatch(/differs from migration.postgresql.from \(16\)/);
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
    const r = spawnSync(process.execPath, [SYNTH], {
      cwd, encoding: 'utf8', env: { ...process.env, UYUNI_CONFIG: 'bad.yaml', CDK8S_OUTDIR: '', UYUNI_DIST: '' },
    });
    const dir = path.join(cwd, 'dist', 'migrate');
    return { ...r, dir, sentinel: fs.readFileSync(path.join(dir, 'plan.json'), 'utf8'), files: fs.readdirSync(dir) };
  }

  it.each([
    ['a source FQDN with a shell metacharacter', migrationWith({ source: { fqdn: 'old.example.com;reboot' } }), 'migration.source.fqdn'],
    ['a source that is not a FQDN', migrationWith({ source: { fqdn: 'localhost' } }), 'migration.source.fqdn'],
    ['an ssh user with spaces', migrationWith({ source: { fqdn: 'old.example.com', user: 'root -o ProxyCommand=x' } }), 'migration.source.user'],
    ['an ssh user with a $()', migrationWith({ source: { fqdn: 'old.example.com', user: '$(id)' } }), 'migration.source.user'],
    ['an ssh port out of range', migrationWith({ source: { fqdn: 'old.example.com', port: 70000 } }), 'migration.source.port'],
    ['PostgreSQL 18 as the source (nothing to upgrade from)', migrationWith({ postgresql: { from: 18 } }), 'migration.postgresql.from'],
    ['a PostgreSQL the migration image does not upgrade from', migrationWith({ postgresql: { from: 12 } }), 'migration.postgresql.from'],
    ['a PostgreSQL version given as text', migrationWith({ postgresql: { from: '14; rm -rf /' } }), 'migration.postgresql.from'],
    ['a target other than the images\' PostgreSQL', migrationWith({ postgresql: { from: 14, to: 16 } }), 'migration.postgresql.to'],
    ['the removed db section', JSON.stringify({ ...example(), db: { separate: true } }), 'db: removed'],
    ['an unknown setting', migrationWith({ sshAgent: true }), 'migration.sshAgent'],
  ])('rejects %s with exit 2, naming the field, dist/ untouched', (_what, text, field) => {
    const r = synthWith(text);
    expect(r.stderr).toContain(field);
    expect(r.status).toBe(2);
    expect(r.sentinel).toBe('sentinel\n');
    expect(r.files).toEqual(['plan.json']);
  });

  it('accepts the example and writes dist/migrate, the plan synthesized in-process', () => {
    const r = synthWith(exampleText);
    expect(r.stderr).not.toMatch(/synth failed/);
    expect(r.status).toBe(0);
    expect(r.sentinel).not.toBe('sentinel\n');
    expect(r.files).toContain('0003-data-sync.k8s.yaml');
    const written = readPlanDir(r.dir);
    const inProcess = migrate();
    expect(stepNames(written)).toEqual(stepNames(inProcess));
    expect(written.files).toEqual(inProcess.files);
  });
});
