import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { parse } from 'yaml';
import { parseConfig, plansOf } from '../src/config/load';
import { hashSpec, readScript } from '../src/constructs/script-job';
import { SERVER_VOLUMES } from '../src/model/volumes';
import { LABELS } from '../src/plan/types';
import type { Gate } from '../src/plan/types';
import { evaluateGate } from '../src/runtime/decide/gates';
import { SYNTH_APP } from './helpers/entry';
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
const prepare = (text = exampleText): SynthesizedPlan => synthYaml(text)['migrate-prepare'];

const SCRIPTS: Record<string, string> = {
  'uyuni-data-sync': 'data-sync.sh',
  'uyuni-import-secrets': 'import-secrets.sh',
  'uyuni-inspect': 'inspect.sh',
  'uyuni-inspect-db': 'inspect-db.sh',
  'uyuni-db-migrate': 'db-migrate.sh',
  'uyuni-db-finalize': 'db-finalize.sh',
  'uyuni-stop-server': 'wait-stopped.sh',
  'uyuni-stop-db': 'wait-stopped.sh',
};

const NS = 'uyuni';
const WORKLOADS = ['Deployment', 'StatefulSet', 'DaemonSet', 'ReplicaSet', 'Pod'];
const jobs = (p: SynthesizedPlan) => p.objects.filter((o) => o.kind === 'Job');
const namesIn = (p: SynthesizedPlan, step: string) => p.files[p.step(step).file].map((o) => `${o.kind}/${o.metadata.name}`);
const stepNames = (p: SynthesizedPlan) => p.plan.steps.map((s) => s.name);
const claimNames = (volumes: any[]) => volumes.filter((v) => v.persistentVolumeClaim).map((v) => v.persistentVolumeClaim.claimName);

/**
 * Facts of a sound migration of an Uyuni 2024.08 host on PostgreSQL 14 to the 2026.08 images, as
 * uyuni-data-sync records them for examples/migration.yaml (timezone Europe/Berlin, no hub API, no
 * Java debugging, TFTP on, its own CA in /root/ssl-build).
 */
const SOUND: Record<string, string> = {
  product: 'uyuni', uyuni_release: '2026.08', current_product: 'uyuni', current_release: '2024.08',
  source_fqdn: 'old-server.example.com', fqdn: 'old-server.example.com', db_user: 'spacewalk', db_name: 'susemanager', db_port: '5432',
  current_pg_version: '14', image_pg_version: '18',
  timezone: 'Europe/Berlin', has_hub: 'false', debug_java: 'false', tftp_enabled: 'true', ca_fingerprint_match: 'true', third_party_certs: 'false',
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

  it('runs namespace, claims, data sync, inspections, the secrets import, TLS, the database upgrade, the deploy steps with a finalization, then the cleanup', () => {
    expect(plan.plan.name).toBe('migrate');
    expect(stepNames(plan)).toEqual([
      'namespace', 'volumes', 'stop-server', 'stop-db', 'data-sync', 'inspect', 'inspect-db', 'import-secrets', 'tls', 'db-upgrade',
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

  it('writes data-sync → inspect → inspect-db → import-secrets → db-migrate → Deployment db → db-finalize → Deployment uyuni, each in its own file, in that order', () => {
    const fileOf = (kind: string, name: string) => Object.keys(plan.files).findIndex((f) => plan.files[f].some((o) => o.kind === kind && o.metadata.name === name));
    const order = [
      fileOf('Job', 'uyuni-data-sync'), fileOf('Job', 'uyuni-inspect'), fileOf('Job', 'uyuni-inspect-db'), fileOf('Job', 'uyuni-import-secrets'),
      fileOf('Job', 'uyuni-db-migrate'), fileOf('Deployment', 'db'), fileOf('Job', 'uyuni-db-finalize'), fileOf('Deployment', 'uyuni'),
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

  it('stops a server left from an earlier try before anything is copied: the server and its helpers, waited for until their pods are gone, then the database (decision n)', () => {
    const job = (name: string) => ({ apiVersion: 'batch/v1', kind: 'Job', name, namespace: NS });
    const scale = (name: string) => ({ type: 'scale', object: { apiVersion: 'apps/v1', kind: 'Deployment', name, namespace: NS }, replicas: 0 });
    expect(plan.step('stop-server').actions).toEqual([{ type: 'delete', object: job('uyuni-stop-server') },
      ...['uyuni', 'uyuni-coco-attestation', 'uyuni-hub-xmlrpc', 'tftp'].map(scale)]);
    expect(plan.step('stop-server').waits).toEqual([{ object: job('uyuni-stop-server'), for: 'complete' }]);
    expect(plan.step('stop-db').actions).toEqual([{ type: 'delete', object: job('uyuni-stop-db') }, scale('db')]);
    expect(plan.step('stop-db').waits).toEqual([{ object: job('uyuni-stop-db'), for: 'complete' }]);
    expect(envOf(plan.find('Job', 'uyuni-stop-server')).POD_SELECTOR).toBe('app.kubernetes.io/part-of=uyuni,app.kubernetes.io/component in (server,hub-xmlrpc,coco,tftp)');
    expect(envOf(plan.find('Job', 'uyuni-stop-db')).POD_SELECTOR).toBe('app.kubernetes.io/part-of=uyuni,app.kubernetes.io/component=db');
    expect(plan.plan.steps.filter((s) => s.actions.some((a) => a.type === 'scale')).map((s) => s.name)).toEqual(['stop-server', 'stop-db']);
    expect(plan.step('data-sync').actions).toEqual([]);
    for (const s of ['stop-server', 'stop-db']) expect(plan.step(s).oneShot).toBe('migration');
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

  it('gives no step Job an API token but uyuni-import-secrets and the stop Jobs, which run as their own service accounts', () => {
    const own = ['uyuni-import-secrets', 'uyuni-stop-server', 'uyuni-stop-db'];
    const others = jobs(plan).filter((j) => !own.includes(j.metadata.name));
    expect(others.map((j) => j.metadata.name).sort()).toEqual(Object.keys(SCRIPTS).filter((n) => !own.includes(n)).sort());
    for (const name of ['uyuni-stop-server', 'uyuni-stop-db']) expect(podSpec(plan.find('Job', name)).serviceAccountName).toBe('uyuni-stop');
    for (const job of others) {
      expect(podSpec(job).automountServiceAccountToken).toBe(false);
      expect(podSpec(job).serviceAccountName).toBeUndefined();
    }
    const importer = podSpec(plan.find('Job', 'uyuni-import-secrets'));
    expect(importer.serviceAccountName).toBe('uyuni-migration-importer');
    expect(importer.automountServiceAccountToken).toBeUndefined();
    expect(plan.find('ServiceAccount', 'uyuni-migration-importer').automountServiceAccountToken).toBe(true);
    // the pre-sync's Job too
    expect(podSpec(prepare().find('Job', 'uyuni-data-presync')).automountServiceAccountToken).toBe(false);
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
    for (const name of ['uyuni-data-sync', 'uyuni-inspect', 'uyuni-inspect-db', 'uyuni-import-secrets', 'uyuni-db-migrate']) {
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
    expect(plan.objects.filter((o) => ['uyuni-migration-key', 'uyuni-migration-ssh'].includes(o.metadata.name))).toEqual([]);
  });

  it.each([0, 1])('requires before the data sync only the ssh material and the migrated CA\'s password, all user-made (coco replicas %i)', (coco) => {
    const p = coco ? migrate(exampleWith({ coco: { replicas: coco } })) : plan;
    const req = p.step('data-sync').requires;
    expect(req.map((r) => [r.kind, r.name, r.keys, r.ifMissing])).toEqual([
      ['Secret', 'uyuni-migration-key', ['key', 'key.pub'], 'fail'],
      ['ConfigMap', 'uyuni-migration-ssh', ['config', 'known_hosts'], 'fail'],
      ['Secret', 'uyuni-ca-password', ['password'], 'fail'],
    ]);
    expect(req.every((r) => r.namespace === NS && r.generate === undefined)).toBe(true);
    expect(req[2].message).toContain('kubectl -n uyuni create secret generic uyuni-ca-password --from-file=password=');
    // the database credentials are no longer the user's to make before the copy
    expect(req.map((r) => r.name)).not.toContain('db-credentials');
    expect(req.map((r) => r.name)).not.toContain('reportdb-credentials');
  });

  it('requires no CA password with tls.mode generated: the data sync needs the ssh material only', () => {
    const generated = migrate(exampleWith({ tls: { mode: 'generated' } }));
    expect(generated.step('data-sync').requires.map((r) => r.name)).toEqual(['uyuni-migration-key', 'uyuni-migration-ssh']);
    expect(generated.plan.steps.flatMap((s) => s.requires).map((r) => r.name)).not.toContain('uyuni-ca-password');
  });

  it.each([0, 1])('requires the old server\'s database credentials at the database step, never generated, naming the import Job (coco replicas %i)', (coco) => {
    const p = coco ? migrate(exampleWith({ coco: { replicas: coco } })) : plan;
    const req = p.step('database').requires;
    expect(req.map((r) => r.name)).toEqual(['db-admin-credentials', 'db-credentials', 'reportdb-credentials']);
    for (const [name, user, pass] of [['db-credentials', 'db_user', 'db_password'], ['reportdb-credentials', 'report_db_user', 'report_db_password']]) {
      const r = req.find((x) => x.name === name)!;
      expect(r).toMatchObject({ kind: 'Secret', namespace: NS, keys: ['username', 'password'], ifMissing: 'fail' });
      expect(r.generate).toBeUndefined();
      // who makes them, from what, and where to look when it did not
      expect(r.message).toContain(`Job uyuni-import-secrets makes from ${user} and ${pass} of the old rhn.conf`);
      expect(r.message).toContain('kubectl -n uyuni logs job/uyuni-import-secrets');
    }
    // the PostgreSQL administrator is new: generated as in the install
    expect(req[0]).toMatchObject({ ifMissing: 'generate' });
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
    // every server claim (ca-certs only for the custom anchors, not copied), and the old database
    const synced = SERVER_VOLUMES.filter((v) => v.name !== 'ca-certs');
    expect(claimNames(volumes).sort()).toEqual([...synced.map((v) => v.name), 'ca-certs', 'var-pgsql', 'migration-data'].sort());
    for (const v of synced) expect(at(`/mnt${v.mountPath}`)).toMatchObject({ name: v.name });
    expect(at('/mnt/var/lib/pgsql')).toMatchObject({ name: 'var-pgsql' });
    expect(mounts.filter((m: any) => m.name === 'ca-certs')).toEqual([{ name: 'ca-certs', mountPath: '/mnt/etc/pki/trust/anchors/' }]);
    expect(mounts.filter((m: any) => m.mountPath.startsWith('/mnt/etc/pki')).map((m: any) => m.name)).toEqual(['ca-certs']);
  });

  it('passes the source to the data sync as environment variables only', () => {
    const job = plan.find('Job', 'uyuni-data-sync');
    expect(envOf(job)).toEqual({
      SOURCE_FQDN: 'old-server.example.com', SOURCE_USER: 'root', SOURCE_PORT: '22', VOLUME_PATHS: expect.any(String),
      OLD_PG_VERSION: '14', NEW_PG_VERSION: '18', TARGET_ROOT: '/mnt', MIGRATION_DIR: '/var/lib/uyuni-tools',
      PREPARE: 'false', ANCHORS_DIR: '/mnt/etc/pki/trust/anchors/', PG_OWNER: '999:999',
    });
    expect(podSpec(job).containers[0].env.every((e: any) => e.valueFrom === undefined)).toBe(true);
    // the custom anchors go where the ca-certs claim is mounted, not among the copied paths
    const anchors = podSpec(job).containers[0].volumeMounts.find((m: any) => m.name === 'ca-certs');
    expect(envOf(job).ANCHORS_DIR).toBe(anchors.mountPath);
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

  /** The gates of the migration: on the secrets import. */
  const gatesOf = (p: SynthesizedPlan = plan) => p.step('import-secrets').gates;
  /** The facts a gate reads, as `fact op operand`. */
  const gateLine = (g: Gate) => {
    const operand = (o: { fact: string } | { value: string }) => ('fact' in o ? o.fact : JSON.stringify(o.value));
    if (g.type === 'present') return `present ${g.fact}`;
    return `${operand(g.left)} ${g.type === 'compare-versions' ? g.op : g.type} ${operand(g.right)}`;
  };

  it('gates the secrets import, the first step that changes anything once the data is known, and no other step', () => {
    expect(plan.plan.steps.filter((s) => s.gates.length > 0).map((s) => s.name)).toEqual(['import-secrets']);
    expect(plan.step('db-upgrade').gates).toEqual([]);
    // between the copy and the gates: the inspections only, which read and change nothing
    const steps = stepNames(plan);
    const between = plan.plan.steps.slice(steps.indexOf('data-sync') + 1, steps.indexOf('import-secrets'));
    expect(between.map((s) => s.name)).toEqual(['inspect', 'inspect-db']);
    for (const s of between) {
      expect(s.actions).toEqual([]);
      expect(s.factsFrom).toBeDefined();
      for (const job of plan.files[s.file]) expect(podSpec(job).containers[0].volumeMounts.every((m: any) => m.readOnly)).toBe(true);
    }
    const gates = gatesOf();
    expect(gates).toContainEqual(expect.objectContaining({ type: 'compare-versions', left: { fact: 'current_pg_version' }, op: '==', right: { value: '14' } }));
    expect(gates).toContainEqual(expect.objectContaining({ type: 'compare-versions', left: { fact: 'image_pg_version' }, op: '==', right: { value: '18' } }));
    expect(gates).toContainEqual(expect.objectContaining({ type: 'equals', left: { fact: 'fqdn' }, right: { value: 'old-server.example.com' } }));
    expect(refusals(gates, SOUND)).toEqual([]);
  });

  it('checks the configuration against what the old server ran: timezone, hub API, Java debugging, TFTP and, migrated, its own CA', () => {
    expect(gatesOf().map(gateLine)).toEqual([
      'present current_pg_version',
      'current_pg_version == "14"',
      'image_pg_version >= current_pg_version',
      'image_pg_version == "18"',
      'present current_release',
      'product equals current_product',
      'uyuni_release >= current_release',
      'fqdn equals "old-server.example.com"',
      // the current images' database name (M2): another one would be reindexed at every start
      'db_name equals "susemanager"',
      'timezone equals "Europe/Berlin"',
      'has_hub equals "false"',
      'debug_java equals "false"',
      'tftp_enabled equals "true"',
      'ca_fingerprint_match equals "true"',
    ]);
    // from the configuration, not fixed
    const other = gatesOf(migrate(exampleWith({ timezone: 'Etc/UTC', hubApi: { replicas: 1 }, debugJava: true, tftp: { enabled: false } })));
    expect(other.map(gateLine).slice(9, 13)).toEqual([
      'timezone equals "Etc/UTC"', 'has_hub equals "true"', 'debug_java equals "true"', 'tftp_enabled equals "false"',
    ]);
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
    ['an old server in another timezone', { timezone: 'America/New_York' }, /another timezone than timezone Europe\/Berlin: set timezone/],
    ['an old server whose timezone is unknown', { timezone: undefined }, /fact timezone/],
    ['an old server with the hub API when hubApi.replicas is 0', { has_hub: 'true' }, /runs the hub XML-RPC API \(fact has_hub\): set hubApi.replicas to 1 or more/],
    ['an old server with Java debugging when debugJava is off', { debug_java: 'true' }, /has Java debugging on \(fact debug_java\): set debugJava to true/],
    ['an old server without TFTP when tftp.enabled', { tftp_enabled: 'false' }, /serves no TFTP \(fact tftp_enabled, its tftp.socket\): set tftp.enabled to false/],
    ['third-party certificates with tls.mode migrated', { ca_fingerprint_match: 'false', third_party_certs: 'true' },
      /not issued by the CA in \/root\/ssl-build \(third-party certificates, fact ca_fingerprint_match\): set tls.mode third-party/],
  ])('refuses %s', (_what, change, message) => {
    const refused = refusals(gatesOf(), factsWith(change));
    expect(refused.length).toBeGreaterThan(0);
    expect(refused.join('\n')).toMatch(message);
  });

  it.each([
    ['timezone', { timezone: 'UTC' }, 'timezone'],
    ['has_hub', { has_hub: 'true' }, 'hubApi.replicas'],
    ['debug_java', { debug_java: 'true' }, 'debugJava'],
    ['tftp_enabled', { tftp_enabled: 'false' }, 'tftp.enabled'],
    ['ca_fingerprint_match', { ca_fingerprint_match: 'false' }, 'tls.mode'],
  ])('refuses a differing %s with exactly one gate, naming the setting to change', (fact, change, setting) => {
    const refused = refusals(gatesOf(), factsWith(change));
    expect(refused).toHaveLength(1);
    expect(refused[0]).toContain(`fact ${fact}`);
    expect(refused[0]).toContain(`set ${setting}`);
  });

  it('refuses the reverse differences from the other configuration', () => {
    const gates = gatesOf(migrate(exampleWith({ hubApi: { replicas: 1 }, debugJava: true, tftp: { enabled: false } })));
    const facts = factsWith({ has_hub: 'true', debug_java: 'true', tftp_enabled: 'false' });
    expect(refusals(gates, facts)).toEqual([]);
    expect(refusals(gates, { ...facts, has_hub: 'false' }).join('\n')).toMatch(/has no hub XML-RPC API \(fact has_hub\): set hubApi.replicas to 0/);
    expect(refusals(gates, { ...facts, debug_java: 'false' }).join('\n')).toMatch(/has no Java debugging on \(fact debug_java\): set debugJava to false/);
    expect(refusals(gates, { ...facts, tftp_enabled: 'true' }).join('\n')).toMatch(/serves TFTP \(fact tftp_enabled, its tftp.socket\): set tftp.enabled to true/);
  });

  it('checks the old CA only in migrated mode: third-party certificates pass with tls.mode generated', () => {
    const generated = gatesOf(migrate(exampleWith({ tls: { mode: 'generated' } })));
    expect(generated.map(gateLine)).not.toContain('ca_fingerprint_match equals "true"');
    expect(generated).toHaveLength(gatesOf().length - 1);
    expect(refusals(generated, factsWith({ ca_fingerprint_match: 'false', third_party_certs: 'true' }))).toEqual([]);
    expect(refusals(generated, factsWith({ ca_fingerprint_match: undefined }))).toEqual([]);
    // a fact nobody printed refuses in migrated mode
    expect(refusals(gatesOf(), factsWith({ ca_fingerprint_match: undefined })).join('\n')).toMatch(/fact ca_fingerprint_match/);
  });

  it('compares PostgreSQL versions as numbers, not text ("9" < "14")', () => {
    const gates = gatesOf();
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
    // the db certificate exists before: the TLS step comes first, after the import of a migrated CA
    expect(stepNames(plan).indexOf('tls')).toBeLessThan(stepNames(plan).indexOf('db-upgrade'));
    expect(stepNames(plan).indexOf('import-secrets')).toBeLessThan(stepNames(plan).indexOf('tls'));
  });

  it('finalizes once: the image\'s collation check, then the distributions\' new paths from migration-data, on the server\'s mounts after db-waiter', () => {
    const job = plan.find('Job', 'uyuni-db-finalize');
    // The current finalize script reads no switch (90-pgsqlFinalize.sh @ 17708150): none is passed.
    for (const name of ['RUN_REINDEX', 'RUN_SCHEMA_UPDATE', 'MIGRATION']) expect(envOf(job)).not.toHaveProperty(name);
    expect(envOf(job)).toMatchObject({ MIGRATION_DIR: '/var/lib/uyuni-tools', MANAGER_DB_NAME: 'susemanager', MANAGER_DB_HOST: 'db' });
    const server = podSpec(plan.find('Deployment', 'uyuni'));
    expect(podSpec(job).initContainers.map((c: any) => c.name)).toEqual(['db-waiter']);
    expect(podSpec(job).volumes).toEqual([...server.volumes, { name: 'migration-data', persistentVolumeClaim: { claimName: 'migration-data' } }]);
    expect(podSpec(job).containers[0].volumeMounts).toEqual([...server.containers[0].volumeMounts, { name: 'migration-data', mountPath: '/var/lib/uyuni-tools' }]);
    // The data sync writes the list where the Job reads it, before it runs.
    expect(stepNames(plan).indexOf('data-sync')).toBeLessThan(stepNames(plan).indexOf('db-finalize'));
    expect(stepNames(plan).indexOf('db-finalize')).toBeLessThan(stepNames(plan).indexOf('cleanup'));
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

  it('deletes the migration-data claim with every Job that mounted it, and the importer\'s service account, Role and RoleBinding in a last step, after the server runs', () => {
    const steps = stepNames(plan);
    const cleanup = plan.step('cleanup');
    expect(steps.indexOf('cleanup')).toBe(steps.length - 1);
    expect(steps.indexOf('cleanup')).toBeGreaterThan(steps.indexOf('server'));
    const claim = { apiVersion: 'v1', kind: 'PersistentVolumeClaim', name: 'migration-data', namespace: NS };
    const rbac = (apiVersion: string, kind: string) => ({ apiVersion, kind, name: 'uyuni-migration-importer', namespace: NS });
    // kube-controller-manager's pvc-protection keeps a claim while a scheduled pod references it,
    // a Succeeded one too: the Jobs whose pods mount the claim must go before it can.
    const mounting = plan.objects.filter((o) => o.kind === 'Job' && (podSpec(o).volumes ?? []).some((v: any) => v.persistentVolumeClaim?.claimName === 'migration-data'));
    expect(mounting.map((o) => o.metadata.name)).toEqual(['uyuni-data-sync', 'uyuni-inspect', 'uyuni-import-secrets', 'uyuni-db-finalize']);
    const gone = [
      ...mounting.map((o) => ({ apiVersion: 'batch/v1', kind: 'Job', name: o.metadata.name, namespace: NS })),
      claim,
      rbac('rbac.authorization.k8s.io/v1', 'RoleBinding'), rbac('rbac.authorization.k8s.io/v1', 'Role'), rbac('v1', 'ServiceAccount'),
    ];
    expect(cleanup.actions).toEqual(gone.map((object) => ({ type: 'delete', object })));
    expect(cleanup.waits).toEqual([
      ...gone.map((object) => ({ object, for: 'deleted' })),
      { object: { apiVersion: 'v1', kind: 'ConfigMap', name: 'uyuni-migration', namespace: NS }, for: 'exists' },
    ]);
    expect(namesIn(plan, 'cleanup')).toEqual(['ConfigMap/uyuni-migration']);
    expect(plan.find('ConfigMap', 'uyuni-migration').data).toEqual({ source: 'old-server.example.com', postgresql: '14 -> 18' });
    // the only deletes of the plan but the stop steps' own Jobs of an earlier run; each object
    // exists until then, made by the plan itself
    expect(plan.plan.steps.flatMap((s) => s.actions).filter((a) => a.type === 'delete' && !a.object.name.startsWith('uyuni-stop-'))).toHaveLength(8);
    expect(namesIn(plan, 'volumes')).toContain('PersistentVolumeClaim/migration-data');
    for (const kind of ['ServiceAccount', 'Role', 'RoleBinding']) expect(namesIn(plan, 'import-secrets')).toContain(`${kind}/uyuni-migration-importer`);
    for (const object of gone) {
      const made = plan.plan.steps.findIndex((s) => s.objects.some((o) => o.kind === object.kind && o.name === object.name));
      expect(made).toBeGreaterThanOrEqual(0);
      expect(made).toBeLessThan(steps.indexOf('cleanup'));
      expect(plan.plan.steps[made].objects).toContainEqual(object);
    }
  });

  it('validates every object against the Kubernetes and cert-manager schemas, and writes no Secret', () => {
    for (const o of plan.objects) expect(() => validateObject(o)).not.toThrow();
    expect(plan.objects.filter((o) => o.kind === 'Secret')).toEqual([]);
    expect(plan.objects.filter((o) => o.stringData !== undefined || (o.kind !== 'ConfigMap' && o.data !== undefined))).toEqual([]);
  });
});

describe('the secrets import of the migrate plan (step import-secrets)', () => {
  const plan = migrate();
  const job = plan.find('Job', 'uyuni-import-secrets');
  const runner = podSpec(job).containers[0];
  const env = (p: SynthesizedPlan) => podSpec(p.find('Job', 'uyuni-import-secrets')).containers[0].env;

  it('holds the importer\'s ServiceAccount, Role and RoleBinding, then its Job, and waits for them', () => {
    expect(namesIn(plan, 'import-secrets')).toEqual([
      'ServiceAccount/uyuni-migration-importer', 'Role/uyuni-migration-importer', 'RoleBinding/uyuni-migration-importer', 'Job/uyuni-import-secrets',
    ]);
    const step = plan.step('import-secrets');
    expect(step.actions).toEqual([]);
    expect(step.requires).toEqual([]);
    expect(step.waits.map((w) => `${w.object.kind}/${w.object.name} ${w.for}`)).toEqual([
      'ServiceAccount/uyuni-migration-importer exists', 'Role/uyuni-migration-importer exists',
      'RoleBinding/uyuni-migration-importer exists', 'Job/uyuni-import-secrets complete',
    ]);
    for (const o of plan.files[step.file]) {
      expect(o.metadata.namespace).toBe(NS);
      expect(o.metadata.labels).toMatchObject({ [LABELS.plan]: 'migrate', [LABELS.step]: 'import-secrets', [LABELS.partOf]: 'uyuni', [LABELS.managedBy]: 'uyuni-cdk' });
    }
  });

  it('lets the importer get the three Secrets it makes and create Secrets in the namespace, nothing else', () => {
    const role = plan.find('Role', 'uyuni-migration-importer');
    expect(role.apiVersion).toBe('rbac.authorization.k8s.io/v1');
    expect(role.rules).toEqual([
      { apiGroups: [''], resources: ['secrets'], verbs: ['get'], resourceNames: ['db-credentials', 'reportdb-credentials', 'uyuni-ca'] },
      { apiGroups: [''], resources: ['secrets'], verbs: ['create'] },
    ]);
    const binding = plan.find('RoleBinding', 'uyuni-migration-importer');
    expect(binding.roleRef).toEqual({ apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'uyuni-migration-importer' });
    expect(binding.subjects).toEqual([{ kind: 'ServiceAccount', name: 'uyuni-migration-importer', namespace: NS }]);
    // no cluster-wide rights anywhere in the plan
    expect(plan.objects.filter((o) => o.kind === 'ClusterRole' || o.kind === 'ClusterRoleBinding')).toEqual([]);
    expect(plan.objects.filter((o) => o.kind === 'Role' || o.kind === 'RoleBinding' || o.kind === 'ServiceAccount')
      .map((o) => `${o.kind}/${o.metadata.name}`)).toEqual([
      // the stop Jobs' account: it lists pods, nothing else
      'ServiceAccount/uyuni-stop', 'Role/uyuni-stop', 'RoleBinding/uyuni-stop',
      'ServiceAccount/uyuni-migration-importer', 'Role/uyuni-migration-importer', 'RoleBinding/uyuni-migration-importer',
    ]);
  });

  it('runs import-secrets.sh in the server image as root, as the importer, with migration-data read-only and nothing else', () => {
    expect(runner.image).toBe('registry.opensuse.org/uyuni/server:2026.08');
    expect(runner.securityContext).toEqual({ runAsUser: 0, runAsGroup: 0, runAsNonRoot: false });
    expect(runner.command[2]).toBe(readScript('import-secrets.sh'));
    expect(podSpec(job).serviceAccountName).toBe('uyuni-migration-importer');
    expect(podSpec(job).volumes).toEqual([{ name: 'migration-data', persistentVolumeClaim: { claimName: 'migration-data' } }]);
    expect(runner.volumeMounts).toEqual([{ name: 'migration-data', mountPath: '/var/lib/uyuni-tools', readOnly: true }]);
  });

  it('passes MIGRATION_DIR, the namespace from the pod, IMPORT_CA true and the CA password from Secret uyuni-ca-password (tls.mode migrated)', () => {
    const byName = Object.fromEntries(env(plan).map((e: any) => [e.name, e]));
    expect(Object.keys(byName)).toEqual(['MIGRATION_DIR', 'NAMESPACE', 'IMPORT_CA', 'SECRET_LABELS', 'CA_PASSWORD']);
    expect(byName.MIGRATION_DIR).toEqual({ name: 'MIGRATION_DIR', value: '/var/lib/uyuni-tools' });
    expect(byName.NAMESPACE).toEqual({ name: 'NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } });
    expect(byName.IMPORT_CA).toEqual({ name: 'IMPORT_CA', value: 'true' });
    expect(byName.CA_PASSWORD).toEqual({ name: 'CA_PASSWORD', valueFrom: { secretKeyRef: { name: 'uyuni-ca-password', key: 'password' } } });
    expect(JSON.parse(byName.SECRET_LABELS.value)).toEqual({ [LABELS.partOf]: 'uyuni', [LABELS.managedBy]: 'uyuni-cdk' });
    // the password is required before the copy, so the Job never waits for it
    expect(plan.step('data-sync').requires.map((r) => r.name)).toContain('uyuni-ca-password');
  });

  it('passes IMPORT_CA false and no CA password with tls.mode generated', () => {
    const generated = migrate(exampleWith({ tls: { mode: 'generated' } }));
    const names = env(generated).map((e: any) => e.name);
    expect(names).toEqual(['MIGRATION_DIR', 'NAMESPACE', 'IMPORT_CA', 'SECRET_LABELS']);
    expect(envOf(generated.find('Job', 'uyuni-import-secrets')).IMPORT_CA).toBe('false');
    expect(env(generated).some((e: any) => e.valueFrom?.secretKeyRef)).toBe(false);
    expect(generated.step('import-secrets').description).not.toContain('CA');
    expect(plan.step('import-secrets').description).toContain('and the old CA');
  });

  it('names the import Job where a Secret it makes is missing: uyuni-ca at the TLS step, the credentials at the database step', () => {
    const ca = plan.step('tls').requires.find((r) => r.name === 'uyuni-ca')!;
    expect(ca).toMatchObject({ kind: 'Secret', keys: ['tls.crt', 'tls.key'], ifMissing: 'fail' });
    expect(ca.message).toContain('Job uyuni-import-secrets');
    expect(ca.message).toContain('kubectl -n uyuni logs job/uyuni-import-secrets');
    for (const name of ['db-credentials', 'reportdb-credentials']) {
      expect(plan.step('database').requires.find((r) => r.name === name)!.message).toContain('Job uyuni-import-secrets');
    }
    // made by the import, so required only after it
    const steps = stepNames(plan);
    for (const s of plan.plan.steps.slice(0, steps.indexOf('import-secrets') + 1)) {
      expect(s.requires.map((r) => r.name)).not.toEqual(expect.arrayContaining(['uyuni-ca']));
      expect(s.requires.map((r) => r.name).filter((n) => n.endsWith('db-credentials'))).toEqual([]);
    }
  });
});

describe('the pre-sync plan of examples/migration.yaml (dist/migrate-prepare)', () => {
  const plan = prepare();
  const job = plan.find('Job', 'uyuni-data-presync');
  const sync = migrate().find('Job', 'uyuni-data-sync');

  it('is written beside dist/migrate for a migration configuration', () => {
    expect(plansOf(parseConfig(exampleText, 'test.yaml'))).toEqual(['migrate', 'migrate-prepare']);
    expect(plan.plan.name).toBe('migrate-prepare');
  });

  it('runs namespace, the migration\'s claims and the pre-sync, nothing else', () => {
    expect(stepNames(plan)).toEqual(['namespace', 'volumes', 'data-presync']);
    expect(plan.files[plan.step('volumes').file]).toEqual(migrate().files[migrate().step('volumes').file].map((o) => ({
      ...o, metadata: { ...o.metadata, labels: { ...o.metadata.labels, [LABELS.plan]: 'migrate-prepare' } },
    })));
    expect(namesIn(plan, 'data-presync')).toEqual(['Job/uyuni-data-presync']);
    expect(plan.plan.steps.flatMap((s) => s.gates)).toEqual([]);
    expect(plan.plan.steps.flatMap((s) => s.actions).filter((a) => a.type === 'delete')).toEqual([]);
  });

  it('requires only the ssh material, even with tls.mode migrated (the CA password is for the final run)', () => {
    const req = plan.step('data-presync').requires;
    expect(req.map((r) => [r.kind, r.name, r.ifMissing])).toEqual([
      ['Secret', 'uyuni-migration-key', 'fail'], ['ConfigMap', 'uyuni-migration-ssh', 'fail'],
    ]);
    expect(plan.plan.steps.flatMap((s) => s.requires).map((r) => r.name)).not.toContain('uyuni-ca-password');
  });

  it('runs data-sync.sh with PREPARE=true, otherwise as the final sync: same image, environment, claims and ssh mounts', () => {
    expect(envOf(job).PREPARE).toBe('true');
    expect(envOf(sync).PREPARE).toBe('false');
    expect({ ...envOf(job), PREPARE: 'false' }).toEqual(envOf(sync));
    expect(podSpec(job).containers[0].command[2]).toBe(readScript('data-sync.sh'));
    expect(podSpec(job).containers[0].image).toBe(podSpec(sync).containers[0].image);
    expect(podSpec(job).volumes).toEqual(podSpec(sync).volumes);
    expect(podSpec(job).containers[0].volumeMounts).toEqual(podSpec(sync).containers[0].volumeMounts);
    expect(job.metadata.labels).toMatchObject({ [LABELS.plan]: 'migrate-prepare', [LABELS.step]: 'data-presync', 'uyuni-cdk.io/job': 'uyuni-data-presync' });
    expect(job.metadata.annotations!['uyuni-cdk.io/spec-hash']).toBe(hashSpec(job.spec));
  });

  it('stops nothing, neither the old server nor a new one (the pre-sync stops nothing: issue 21), runs once per migration, takes the sync\'s timeout', () => {
    const step = plan.step('data-presync');
    expect(step.description).toContain('while it keeps running, without its database');
    expect(step.actions).toEqual([]);
    expect(migrate().step('stop-server').actions.map((a) => a.type)).toContain('scale');
    expect(step.oneShot).toBe('migration');
    expect(step.timeoutSeconds).toBe(86400);
    expect(step.waits).toEqual([{ object: { apiVersion: 'batch/v1', kind: 'Job', name: 'uyuni-data-presync', namespace: NS }, for: 'complete' }]);
  });

  it('validates every object and writes no Secret', () => {
    for (const o of plan.objects) expect(() => validateObject(o)).not.toThrow();
    expect(plan.objects.filter((o) => o.kind === 'Secret')).toEqual([]);
  });
});

describe('migrate plan variants', () => {
  it('keeps the migration-data claim when the configuration says so', () => {
    const kept = migrate(migrationWith({ keepMigrationData: true }));
    expect(stepNames(kept)).not.toContain('cleanup');
    expect(stepNames(kept)[stepNames(kept).length - 1]).toBe('server');
    expect(kept.plan.steps.flatMap((s) => s.actions).filter((a) => a.type === 'delete').map((a) => a.object.name)).toEqual(['uyuni-stop-server', 'uyuni-stop-db']);
    // the importer's rights stay with the data they were for
    expect(namesIn(kept, 'import-secrets')).toContain('Role/uyuni-migration-importer');
  });

  it('migrates from PostgreSQL 16 with the same steps, gated on 16', () => {
    const from16 = migrate(migrationWith({ postgresql: { from: 16 } }));
    expect(stepNames(from16)).toEqual(stepNames(migrate()));
    expect(envOf(from16.find('Job', 'uyuni-data-sync'))).toMatchObject({ OLD_PG_VERSION: '16', NEW_PG_VERSION: '18' });
    expect(envOf(from16.find('Job', 'uyuni-db-migrate'))).toMatchObject({ OLD_PG_VERSION: '16', NEW_PG_VERSION: '18' });
    expect(from16.step('db-upgrade').gates).toEqual([]);
    const gates = from16.step('import-secrets').gates;
    expect(refusals(gates, factsWith({ current_pg_version: '16' }))).toEqual([]);
    expect(refusals(gates, SOUND).join('\n')).toMatch(/differs from migration.postgresql.from \(16\)/);
  });
});

describe('migration configuration errors', () => {
  /** Runs the synth app on a configuration; dist/ holds a sentinel that must survive. */
  function synthWith(text: string) {
    const cwd = tempDir();
    fs.mkdirSync(path.join(cwd, 'dist', 'migrate'), { recursive: true });
    fs.writeFileSync(path.join(cwd, 'dist', 'migrate', 'uyuni.plan'), 'sentinel\n');
    fs.writeFileSync(path.join(cwd, 'bad.yaml'), text);
    const r = spawnSync(process.execPath, SYNTH_APP, {
      cwd, encoding: 'utf8', env: { ...process.env, UYUNI_CONFIG: 'bad.yaml', CDK8S_OUTDIR: '', UYUNI_DIST: '' },
    });
    const dir = path.join(cwd, 'dist', 'migrate');
    return { ...r, dir, sentinel: fs.readFileSync(path.join(dir, 'uyuni.plan'), 'utf8'), files: fs.readdirSync(dir) };
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
    ['the removed db.separate setting', JSON.stringify({ ...example(), db: { separate: true } }), 'db.separate: removed'],
    ['an unknown setting', migrationWith({ sshAgent: true }), 'migration.sshAgent'],
  ])('rejects %s with exit 2, naming the field, dist/ untouched', (_what, text, field) => {
    const r = synthWith(text);
    expect(r.stderr).toContain(field);
    expect(r.status).toBe(2);
    expect(r.sentinel).toBe('sentinel\n');
    expect(r.files).toEqual(['uyuni.plan']);
  });

  it('accepts the example and writes dist/migrate, the plan synthesized in-process', () => {
    const r = synthWith(exampleText);
    expect(r.stderr).not.toMatch(/synth failed/);
    expect(r.status).toBe(0);
    expect(r.sentinel).not.toBe('sentinel\n');
    expect(r.files).toContain('0004-data-sync.k8s.yaml');
    expect(r.files).toContain('0007-import-secrets.k8s.yaml');
    const written = readPlanDir(r.dir);
    const inProcess = migrate();
    expect(stepNames(written)).toEqual(stepNames(inProcess));
    expect(written.files).toEqual(inProcess.files);
    // and the pre-sync beside it
    const presync = readPlanDir(path.join(r.dir, '..', 'migrate-prepare'));
    expect(presync.files).toEqual(prepare().files);
  });
});
