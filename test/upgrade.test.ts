import * as fs from 'fs';
import * as path from 'path';
import { parse } from 'yaml';
import { ConfigError, parseConfig } from '../src/config/load';
import { hashSpec, readScript } from '../src/constructs/script-job';
import { LABELS } from '../src/plan/types';
import type { Gate } from '../src/plan/types';
import { evaluateGate } from '../src/runtime/decide/gates';
import { defaultConfigWith, envOf, podSpec, ROOT, SynthesizedPlan, synthYaml } from './helpers/synth';
import { K8sObject, validateObject } from './helpers/validate';

const exampleText = fs.readFileSync(path.join(ROOT, 'examples', 'upgrade.yaml'), 'utf8');
const upgrade = (text = exampleText): SynthesizedPlan => synthYaml(text).upgrade;
/** The example with another `upgrade.postgresql` (`to` left to its default unless given). */
const withPg = (postgresql: Record<string, unknown>) => JSON.stringify({ ...parse(exampleText), upgrade: { postgresql } });

const SCRIPTS: Record<string, string> = {
  'uyuni-inspect': 'inspect.sh',
  'uyuni-inspect-db': 'inspect-db.sh',
  'uyuni-db-migrate': 'db-migrate.sh',
  'uyuni-db-finalize': 'db-finalize.sh',
  'uyuni-move-setup-marker': 'setup-marker.sh',
  'uyuni-stop-server': 'wait-stopped.sh',
  'uyuni-stop-db': 'wait-stopped.sh',
};

const NS = 'uyuni';
const deployment = (name: string) => ({ apiVersion: 'apps/v1', kind: 'Deployment', name, namespace: NS });
const job = (name: string) => ({ apiVersion: 'batch/v1', kind: 'Job', name, namespace: NS });
const namesIn = (p: SynthesizedPlan, step: string) => p.files[p.step(step).file].map((o) => `${o.kind}/${o.metadata.name}`);
const requiredPeers = (o: K8sObject) => podSpec(o).affinity?.podAffinity?.requiredDuringSchedulingIgnoredDuringExecution;

/**
 * Facts of a sound upgrade of Uyuni 2026.01 on PostgreSQL 16 to 2026.08 (server-postgresql 18),
 * as uyuni-inspect and uyuni-inspect-db print them.
 */
const SOUND: Record<string, string> = {
  product: 'uyuni', uyuni_release: '2026.08', current_product: 'uyuni', current_release: '2026.01',
  fqdn: 'uyuni.example.com', db_user: 'spacewalk', db_name: 'susemanager', db_port: '5432',
  current_pg_version: '16', image_pg_version: '18',
  setup_marker: '/root/.MANAGER_SETUP_COMPLETE', ca_fingerprint: 'AB:CD:EF',
};

/** The facts with changes (`undefined` removes a fact: nobody printed it). */
function factsWith(change: Record<string, string | undefined>, base = SOUND): Record<string, string> {
  const facts = { ...base };
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

describe('the upgrade plan of examples/upgrade.yaml (PostgreSQL 16 → 18)', () => {
  const plan = upgrade();
  const gates = plan.step('stop-server').gates;

  it('inspects, stops everything, moves the setup marker, claims var-pgsql18, upgrades PostgreSQL, then deploys with a finalization after the database', () => {
    expect(plan.plan.name).toBe('upgrade');
    expect(plan.plan.steps.map((s) => s.name)).toEqual([
      'inspect', 'inspect-db', 'stop-server', 'stop-db', 'setup-marker', 'volumes', 'db-upgrade', 'keep-tls', 'services', 'database', 'db-finalize', 'ingress', 'server',
    ]);
    expect(Object.keys(plan.files)).toEqual(plan.plan.steps.map((s, i) => `${String(i).padStart(4, '0')}-${s.name}.k8s.yaml`));
    expect(plan.plan.steps.map((s) => s.file)).toEqual(Object.keys(plan.files));
  });

  it('keeps the output of both inspect Jobs as facts, gathered before anything is stopped', () => {
    expect(plan.step('inspect').factsFrom).toEqual(job('uyuni-inspect'));
    expect(plan.step('inspect-db').factsFrom).toEqual(job('uyuni-inspect-db'));
    expect(namesIn(plan, 'inspect')).toEqual(['Job/uyuni-inspect']);
    expect(namesIn(plan, 'inspect-db')).toEqual(['Job/uyuni-inspect-db']);
    expect(plan.plan.steps.filter((s) => s.factsFrom).map((s) => s.name)).toEqual(['inspect', 'inspect-db']);
  });

  it('inspects in the new server image with etc-rhn, var-spacewalk, the legacy root claim and uyuni-cert\'s CA, read-only, on the running server\'s node', () => {
    const inspect = plan.find('Job', 'uyuni-inspect');
    const pod = podSpec(inspect);
    expect(pod.containers[0].image).toBe('registry.opensuse.org/uyuni/server:2026.08');
    expect(pod.volumes).toEqual([
      { name: 'etc-rhn', persistentVolumeClaim: { claimName: 'etc-rhn' } },
      { name: 'var-spacewalk', persistentVolumeClaim: { claimName: 'var-spacewalk' } },
      { name: 'root', persistentVolumeClaim: { claimName: 'root' } },
      { name: 'uyuni-cert', secret: { secretName: 'uyuni-cert', optional: true, items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
    ]);
    expect(pod.containers[0].volumeMounts).toEqual([
      { name: 'etc-rhn', mountPath: '/etc/rhn', readOnly: true },
      { name: 'var-spacewalk', mountPath: '/var/spacewalk', readOnly: true },
      { name: 'root', mountPath: '/root', readOnly: true },
      { name: 'uyuni-cert', mountPath: '/inspect/uyuni-cert', readOnly: true },
    ]);
    expect(envOf(inspect)).toEqual({
      RELEASE_DIR: '/etc/rhn/uyuni-cdk', SETUP_MARKER: '/var/spacewalk/.MANAGER_SETUP_COMPLETE',
      LEGACY_SETUP_MARKER: '/root/.MANAGER_SETUP_COMPLETE', CA_CERT: '/inspect/uyuni-cert/ca.crt',
    });
    // the running server's node, required: only there can its ReadWriteOnce claims be mounted (M7)
    expect(requiredPeers(inspect)).toEqual([{
      labelSelector: { matchLabels: { 'app.kubernetes.io/part-of': 'uyuni', 'app.kubernetes.io/component': 'server' } },
      topologyKey: 'kubernetes.io/hostname',
    }]);
    expect(podSpec(inspect).affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution).toBeUndefined();
  });

  it('inspects the database in the new server-postgresql image with var-pgsql read-only, on the db\'s node', () => {
    const inspect = plan.find('Job', 'uyuni-inspect-db');
    const pod = podSpec(inspect);
    expect(pod.containers[0].image).toBe('registry.opensuse.org/uyuni/server-postgresql:2026.08');
    expect(pod.volumes).toEqual([{ name: 'var-pgsql', persistentVolumeClaim: { claimName: 'var-pgsql' } }]);
    expect(pod.containers[0].volumeMounts).toHaveLength(1);
    expect(pod.containers[0].volumeMounts[0]).toMatchObject({ name: 'var-pgsql', readOnly: true });
    expect(envOf(inspect).DATA_DIR).toBe(pod.containers[0].volumeMounts[0].mountPath);
    expect(requiredPeers(inspect)).toEqual([{
      labelSelector: { matchLabels: { 'app.kubernetes.io/part-of': 'uyuni', 'app.kubernetes.io/component': 'db' } },
      topologyKey: 'kubernetes.io/hostname',
    }]);
  });

  it('stops the server, attestation, hub API and TFTP, waits until their pods are gone, then the database and waits until its pod is gone', () => {
    const stop = plan.step('stop-server');
    const stopped = ['uyuni', 'uyuni-coco-attestation', 'uyuni-hub-xmlrpc', 'tftp'].map(deployment);
    expect(stop.actions).toEqual([{ type: 'delete', object: job('uyuni-stop-server') }, ...stopped.map((object) => ({ type: 'scale', object, replicas: 0 }))]);
    expect(stop.waits).toEqual([
      { object: job('uyuni-stop-server'), for: 'complete' },
      { object: { apiVersion: 'v1', kind: 'ConfigMap', name: 'uyuni-upgrade', namespace: NS }, for: 'exists' },
    ]);
    expect(namesIn(plan, 'stop-server')).toEqual([
      'ServiceAccount/uyuni-stop', 'Role/uyuni-stop', 'RoleBinding/uyuni-stop', 'Job/uyuni-stop-server', 'ConfigMap/uyuni-upgrade',
    ]);
    expect(plan.find('Role', 'uyuni-stop').rules).toEqual([{ apiGroups: [''], resources: ['pods'], verbs: ['list'] }]);
    expect(podSpec(plan.find('Job', 'uyuni-stop-server')).serviceAccountName).toBe('uyuni-stop');
    const stopDb = plan.step('stop-db');
    expect(stopDb.actions).toEqual([{ type: 'delete', object: job('uyuni-stop-db') }, { type: 'scale', object: deployment('db'), replicas: 0 }]);
    expect(stopDb.waits).toEqual([{ object: job('uyuni-stop-db'), for: 'complete' }]);
    expect(envOf(plan.find('Job', 'uyuni-stop-db')).POD_SELECTOR).toBe('app.kubernetes.io/part-of=uyuni,app.kubernetes.io/component=db');
    expect(stopDb.oneShot).toBe('upgrade');
    expect(plan.find('ConfigMap', 'uyuni-upgrade').data).toEqual({
      image: 'registry.opensuse.org/uyuni/server:2026.08',
      db: 'registry.opensuse.org/uyuni/server-postgresql:2026.08',
      postgresql: '16 -> 18',
      ca: 'keep',
    });
    // no other step changes workloads by action, and the gates come before anything is stopped
    expect(plan.plan.steps.filter((s) => s.actions.length > 0).map((s) => s.name)).toEqual(['stop-server', 'stop-db']);
    expect(plan.plan.steps.filter((s) => s.gates.length > 0).map((s) => s.name)).toEqual(['stop-server']);
  });

  it('claims only var-pgsql18 (the other claims exist; var-pgsql is kept as it is)', () => {
    expect(namesIn(plan, 'volumes')).toEqual(['PersistentVolumeClaim/var-pgsql18']);
    const claim = plan.find('PersistentVolumeClaim', 'var-pgsql18');
    expect(claim.spec).toMatchObject({ accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '50Gi' } }, storageClassName: 'standard' });
    expect(plan.objects.filter((o) => o.kind === 'PersistentVolumeClaim').map((o) => o.metadata.name)).toEqual(['var-pgsql18']);
    expect(plan.plan.steps.flatMap((s) => s.actions).filter((a) => a.type === 'delete' && !['uyuni-stop-server', 'uyuni-stop-db'].includes(a.object.name))).toEqual([]);
  });

  it('upgrades PostgreSQL with server-database-migration as root: var-pgsql → var-pgsql18, the db certificate, nothing else', () => {
    const migrate = plan.find('Job', 'uyuni-db-migrate');
    const pod = podSpec(migrate);
    const c = pod.containers[0];
    expect(c.image).toBe('registry.opensuse.org/uyuni/server-database-migration:2026.08');
    expect(c.securityContext).toEqual({ runAsUser: 0, runAsGroup: 0, runAsNonRoot: false });
    expect(pod.volumes).toEqual([
      { name: 'var-pgsql', persistentVolumeClaim: { claimName: 'var-pgsql' } },
      { name: 'var-pgsql18', persistentVolumeClaim: { claimName: 'var-pgsql18' } },
      {
        name: 'db-cert',
        secret: {
          secretName: 'db-cert', defaultMode: 0o644,
          items: [{ key: 'tls.crt', path: 'tls.crt' }, { key: 'tls.key', path: 'tls.key', mode: 0o400 }],
        },
      },
    ]);
    expect(c.volumeMounts).toEqual([
      { name: 'var-pgsql', mountPath: '/migration/old' },
      { name: 'var-pgsql18', mountPath: '/migration/target' },
      { name: 'db-cert', mountPath: envOf(migrate).CERT_DIR, readOnly: true },
    ]);
    expect(envOf(migrate)).toMatchObject({
      OLD_DATA: '/migration/old', SOURCE_LINK: '/migration/source', TARGET: '/migration/target',
      OLD_PG_VERSION: '16', NEW_PG_VERSION: '18',
    });
    expect(pod.initContainers).toBeUndefined();
    expect(plan.step('db-upgrade').timeoutSeconds).toBe(21600);
  });

  it('starts the database with the new image on var-pgsql18', () => {
    expect(namesIn(plan, 'database')).toEqual(['Deployment/db']);
    const db = plan.find('Deployment', 'db');
    expect(podSpec(db).containers[0].image).toBe('registry.opensuse.org/uyuni/server-postgresql:2026.08');
    const claims = podSpec(db).volumes.filter((v: any) => v.persistentVolumeClaim).map((v: any) => v.persistentVolumeClaim.claimName);
    expect(claims).toEqual(['var-pgsql18']);
  });

  it('finalizes once with the database up and the server down: the image\'s own collation check, no migration rewrites, the server\'s mounts and db-waiter', () => {
    const finalize = plan.find('Job', 'uyuni-db-finalize');
    for (const name of ['RUN_REINDEX', 'RUN_SCHEMA_UPDATE', 'MIGRATION', 'MIGRATION_DIR']) expect(envOf(finalize)).not.toHaveProperty(name);
    expect(podSpec(finalize).containers[0].image).toBe('registry.opensuse.org/uyuni/server:2026.08');
    const server = podSpec(plan.find('Deployment', 'uyuni'));
    expect(podSpec(finalize).initContainers).toEqual([server.initContainers.find((c: any) => c.name === 'db-waiter')]);
    expect(podSpec(finalize).initContainers[0].name).toBe('db-waiter');
    expect(podSpec(finalize).volumes).toEqual(server.volumes);
    expect(podSpec(finalize).containers[0].volumeMounts).toEqual(server.containers[0].volumeMounts);
    expect(plan.step('db-finalize').timeoutSeconds).toBe(86400);
    // the server's own Deployment does not carry the one-off switches: they would run at every start
    const serverEnv = server.containers[0].env.map((e: any) => e.name);
    for (const name of ['RUN_REINDEX', 'RUN_SCHEMA_UPDATE', 'MIGRATION']) expect(serverEnv).not.toContain(name);
  });

  it('lets a sound upgrade through every gate', () => {
    expect(gates).toHaveLength(11);
    expect(refusals(gates, SOUND)).toEqual([]);
  });

  it.each([
    ['a release downgrade', { uyuni_release: '2026.01', current_release: '2026.08' }, /release downgrades/],
    ['a pre-release of the release the data was made with', { uyuni_release: '5.1.0 Alpha1', current_release: '5.1.0' }, /release downgrades/],
    ['a PostgreSQL downgrade', { image_pg_version: '16', current_pg_version: '18' }, /cannot be downgraded/],
    ['a switch from Uyuni to SUSE Manager', { product: 'suse-manager' }, /switching between Uyuni and SUSE Manager/],
    ['a switch from SUSE Manager to Uyuni', { current_product: 'suse-manager' }, /switching between Uyuni and SUSE Manager/],
    ['missing database data', { current_pg_version: undefined }, /no database data: var-pgsql holds no PG_VERSION/],
    ['a database version other than upgrade.postgresql.from', { current_pg_version: '14' }, /differs from upgrade.postgresql.from \(16\)/],
    ['an image PostgreSQL other than upgrade.postgresql.to', { image_pg_version: '17' }, /differs from upgrade.postgresql.to \(18\)/],
    ['an image whose PostgreSQL nobody printed', { image_pg_version: undefined }, /server-postgresql image/],
    ['data of an unknown release', { current_release: undefined, current_product: undefined },
      /no release file in \/etc\/rhn\/uyuni-cdk[^]*kubectl -n uyuni exec deploy\/uyuni -c uyuni -- sh -c 'mkdir -p \/etc\/rhn\/uyuni-cdk/],
    ['data of another server', { fqdn: 'other.example.com' }, /another server name than fqdn uyuni.example.com/],
    ['data whose server name nobody printed', { fqdn: undefined }, /another server name/],
    ['a product database of another name (M2)', { db_name: 'rhnschema' }, /not named susemanager \(db_name in rhn.conf\)[^]*reindex at every start/],
    ['data without a setup marker (S3)', { setup_marker: undefined }, /no setup marker[^]*set itself up again on the live database/],
    ['a running uyuni-cert without a CA to keep (S4)', { ca_fingerprint: undefined }, /no CA certificate \(ca.crt\) to keep[^]*upgrade.ca: new/],
  ])('refuses %s', (_what, change, message) => {
    const refused = refusals(gates, factsWith(change));
    expect(refused.length).toBeGreaterThan(0);
    expect(refused.join('\n')).toMatch(message);
  });

  it('compares versions as numbers, not text ("9" < "16", "2026.10" > "2026.9")', () => {
    // 9 data under an 18 image: "18" < "9" as text; numerically no downgrade, refused only for not being `from`
    const nine = refusals(gates, factsWith({ current_pg_version: '9' })).join('\n');
    expect(nine).not.toMatch(/cannot be downgraded/);
    expect(nine).toMatch(/differs from upgrade.postgresql.from \(16\)/);
    // a 9 image under 16 data: "9" > "16" as text; numerically a downgrade
    expect(refusals(gates, factsWith({ image_pg_version: '9' })).join('\n')).toMatch(/cannot be downgraded/);
    expect(refusals(gates, factsWith({ uyuni_release: '2026.10', current_release: '2026.9' }))).toEqual([]);
    expect(refusals(gates, factsWith({ uyuni_release: '2026.9', current_release: '2026.10' })).join('\n')).toMatch(/release downgrades/);
    // 16.0 is 16
    expect(refusals(gates, factsWith({ current_pg_version: '16.0', image_pg_version: '18' }))).toEqual([]);
  });

  it('keeps every step Job: no TTL, backoffLimit 0, restartPolicy Never, one runner running its script with sh -c', () => {
    const jobs = plan.objects.filter((o) => o.kind === 'Job');
    expect(jobs.map((j) => j.metadata.name).sort()).toEqual(Object.keys(SCRIPTS).sort());
    for (const j of jobs) {
      expect(j.spec.ttlSecondsAfterFinished).toBeUndefined();
      expect(j.spec.backoffLimit).toBe(0);
      expect(podSpec(j).restartPolicy).toBe('Never');
      expect(podSpec(j).containers.map((c: any) => c.name)).toEqual(['runner']);
      expect(podSpec(j).containers[0].command).toEqual(['sh', '-c', readScript(SCRIPTS[j.metadata.name])]);
      expect(podSpec(j).containers[0].args).toBeUndefined();
    }
  });

  it('labels each Job with its plan and step, and annotates the hash of its spec (affinity included)', () => {
    for (const s of plan.plan.steps) {
      for (const j of plan.files[s.file].filter((o) => o.kind === 'Job')) {
        expect(j.metadata.labels).toMatchObject({
          [LABELS.plan]: 'upgrade', [LABELS.step]: s.name, [LABELS.partOf]: 'uyuni', [LABELS.managedBy]: 'uyuni-cdk',
          'uyuni-cdk.io/job': j.metadata.name,
        });
        expect(j.metadata.annotations!['uyuni-cdk.io/spec-hash']).toMatch(/^sha256:[0-9a-f]{64}$/);
        expect(j.metadata.name).not.toMatch(/[0-9]{6,}/); // no timestamps
        expect(s.waits).toContainEqual({ object: job(j.metadata.name), for: 'complete' });
      }
    }
  });

  it('annotates the hash of the spec as written of the Jobs that take no Quantity from the server pod, affinity included', () => {
    for (const name of ['uyuni-inspect', 'uyuni-inspect-db', 'uyuni-db-migrate']) {
      const j = plan.find('Job', name);
      expect(j.metadata.annotations!['uyuni-cdk.io/spec-hash']).toBe(hashSpec(j.spec));
    }
  });

  it('annotates uyuni-db-finalize with the hash of its spec as written', () => {
    const j = plan.find('Job', 'uyuni-db-finalize');
    expect(j.metadata.annotations!['uyuni-cdk.io/spec-hash']).toBe(hashSpec(j.spec));
  });

  it('changes the spec-hash of a Job with its spec, and only then', () => {
    const again = upgrade();
    const retagged = upgrade(JSON.stringify({ ...parse(exampleText), images: { ...parse(exampleText).images, tag: '2026.09' } }));
    for (const j of plan.objects.filter((o) => o.kind === 'Job')) {
      const hash = (p: SynthesizedPlan) => p.find('Job', j.metadata.name).metadata.annotations!['uyuni-cdk.io/spec-hash'];
      expect(hash(again)).toBe(hash(plan));
      expect(hash(retagged)).not.toBe(hash(plan));
    }
  });

  it('has no setup Job and no leftovers of the PostgreSQL 14→16 era', () => {
    expect(plan.objects.some((o) => o.metadata.name.startsWith('uyuni-setup'))).toBe(false);
    for (const text of Object.values(plan.text)) expect(text).not.toMatch(/mgr-setup|post-upgrade\.sh|server-migration-/);
    expect(JSON.stringify(plan.plan)).not.toMatch(/mgr-setup|post-upgrade|server-migration-|uyuni-setup/);
  });

  it('validates every object against the schemas (Traefik\'s CRDs have none), and writes no Secret', () => {
    const traefik = plan.objects.filter((o) => o.apiVersion.startsWith('traefik.io/'));
    expect(traefik.map((o) => o.kind).sort()).toEqual(['IngressRouteTCP', 'IngressRouteTCP', 'Middleware', 'Middleware']);
    for (const o of plan.objects.filter((x) => !traefik.includes(x))) expect(() => validateObject(o)).not.toThrow();
    expect(plan.objects.filter((o) => o.kind === 'Secret')).toEqual([]);
    expect(plan.objects.filter((o) => o.stringData !== undefined || (o.kind !== 'ConfigMap' && o.data !== undefined))).toEqual([]);
  });
});

describe('upgrades from other PostgreSQL versions', () => {
  it('upgrades from 14 out of var-pgsql as well, gated on 14', () => {
    const from14 = upgrade(withPg({ from: 14 }));
    expect(from14.plan.steps.map((s) => s.name)).toContain('db-upgrade');
    expect(envOf(from14.find('Job', 'uyuni-db-migrate'))).toMatchObject({ OLD_PG_VERSION: '14', NEW_PG_VERSION: '18' });
    expect(podSpec(from14.find('Job', 'uyuni-inspect-db')).volumes).toEqual([{ name: 'var-pgsql', persistentVolumeClaim: { claimName: 'var-pgsql' } }]);
    const gates = from14.step('stop-server').gates;
    expect(refusals(gates, factsWith({ current_pg_version: '14' }))).toEqual([]);
    expect(refusals(gates, SOUND).join('\n')).toMatch(/differs from upgrade.postgresql.from \(14\)/);
  });

  describe('with upgrade.postgresql.from: 18 (the database is on var-pgsql18 already)', () => {
    const same = upgrade(withPg({ from: 18 }));

    it('has no volumes, db-upgrade nor db-finalize step', () => {
      expect(same.plan.steps.map((s) => s.name)).toEqual([
        'inspect', 'inspect-db', 'stop-server', 'stop-db', 'keep-tls', 'services', 'database', 'ingress', 'server',
      ]);
      expect(same.objects.filter((o) => o.kind === 'Job').map((o) => o.metadata.name)).toEqual(['uyuni-inspect', 'uyuni-inspect-db', 'uyuni-stop-server', 'uyuni-stop-db']);
      expect(same.objects.filter((o) => o.kind === 'PersistentVolumeClaim')).toEqual([]);
    });

    it('inspects var-pgsql18 read-only, next to the db, and still stops everything first', () => {
      const inspect = same.find('Job', 'uyuni-inspect-db');
      expect(podSpec(inspect).volumes).toEqual([{ name: 'var-pgsql18', persistentVolumeClaim: { claimName: 'var-pgsql18' } }]);
      expect(podSpec(inspect).containers[0].volumeMounts).toEqual([{ name: 'var-pgsql18', mountPath: envOf(inspect).DATA_DIR, readOnly: true }]);
      expect(requiredPeers(inspect)[0].labelSelector.matchLabels['app.kubernetes.io/component']).toBe('db');
      expect(same.step('stop-server').actions.map((a) => a.object.name)).toEqual(['uyuni-stop-server', 'uyuni', 'uyuni-coco-attestation', 'uyuni-hub-xmlrpc', 'tftp']);
      expect(same.step('stop-db').actions.map((a) => a.object.name)).toEqual(['uyuni-stop-db', 'db']);
      expect(same.find('ConfigMap', 'uyuni-upgrade').data.postgresql).toBe('18 -> 18');
    });

    it('gates on PostgreSQL 18 data in var-pgsql18 and an 18 image', () => {
      const gates = same.step('stop-server').gates;
      const on18 = factsWith({ current_pg_version: '18' });
      expect(refusals(gates, on18)).toEqual([]);
      expect(refusals(gates, SOUND).join('\n')).toMatch(/differs from upgrade.postgresql.from \(18\)/);
      expect(refusals(gates, factsWith({ current_pg_version: undefined })).join('\n')).toMatch(/var-pgsql18 holds no PG_VERSION/);
      expect(refusals(gates, factsWith({ image_pg_version: '16' }, on18)).join('\n')).toMatch(/cannot be downgraded/);
      expect(refusals(gates, factsWith({ uyuni_release: '2025.10' }, on18)).join('\n')).toMatch(/release downgrades/);
    });

    it('starts the new database image on var-pgsql18', () => {
      const db = same.find('Deployment', 'db');
      expect(podSpec(db).containers[0].image).toBe('registry.opensuse.org/uyuni/server-postgresql:2026.08');
      expect(podSpec(db).volumes.find((v: any) => v.persistentVolumeClaim).persistentVolumeClaim.claimName).toBe('var-pgsql18');
    });
  });
});

describe('the upgrade plan of the default configuration with an upgrade section', () => {
  const plan = synthYaml(defaultConfigWith({
    images: { tag: '2026.09', components: { dbMigration: { image: 'registry.example.org/mirror/server-database-migration', tag: 'pg18' } } },
    timeouts: { dbUpgradeSeconds: 7200, dbFinalizeSeconds: 3600 },
    upgrade: { postgresql: { from: 16 } },
  })).upgrade;

  it('takes every image from the configured tag, and the migration image from its override', () => {
    expect(podSpec(plan.find('Job', 'uyuni-inspect')).containers[0].image).toMatch(/\/server:2026\.09$/);
    expect(podSpec(plan.find('Job', 'uyuni-inspect-db')).containers[0].image).toMatch(/\/server-postgresql:2026\.09$/);
    expect(podSpec(plan.find('Job', 'uyuni-db-migrate')).containers[0].image).toBe('registry.example.org/mirror/server-database-migration:pg18');
    expect(podSpec(plan.find('Deployment', 'db')).containers[0].image).toMatch(/\/server-postgresql:2026\.09$/);
  });

  it('gives the database upgrade and the finalization their configured timeouts', () => {
    expect(plan.step('db-upgrade').timeoutSeconds).toBe(7200);
    expect(plan.step('db-finalize').timeoutSeconds).toBe(3600);
  });
});

describe('upgrade configuration errors', () => {
  const problems = (text: string): string => {
    try {
      parseConfig(text, 'bad.yaml');
    } catch (e) {
      if (e instanceof ConfigError) return e.message;
      throw e;
    }
    throw new Error('the configuration was accepted');
  };

  it.each([
    ['a PostgreSQL the upgrade does not know', { from: 12 }, 'upgrade.postgresql.from'],
    ['a target other than the images\' PostgreSQL', { from: 16, to: 16 }, 'upgrade.postgresql.to'],
    ['a PostgreSQL version given as text', { from: '16; rm -rf /' }, 'upgrade.postgresql.from'],
  ])('rejects %s, naming the field', (_what, postgresql, field) => {
    expect(problems(withPg(postgresql))).toContain(field);
  });
});

/** The example with more in its `upgrade` section. */
const withUpgrade = (extra: Record<string, unknown>) => {
  const base = parse(exampleText);
  return JSON.stringify({ ...base, upgrade: { ...base.upgrade, ...extra } });
};

describe('the upgrade keeps what the running install relies on (issue 22)', () => {
  const plan = upgrade();

  it('moves the setup marker of an install before 5.2.5 off its root claim, with the server stopped, before any data step (S3)', () => {
    const names = plan.plan.steps.map((s) => s.name);
    expect(names.indexOf('setup-marker')).toBe(names.indexOf('stop-db') + 1);
    expect(namesIn(plan, 'setup-marker')).toEqual(['Job/uyuni-move-setup-marker']);
    const pod = podSpec(plan.find('Job', 'uyuni-move-setup-marker'));
    expect(pod.containers[0].image).toBe('registry.opensuse.org/uyuni/server:2026.08');
    expect(pod.volumes).toEqual([
      { name: 'root', persistentVolumeClaim: { claimName: 'root' } },
      { name: 'var-spacewalk', persistentVolumeClaim: { claimName: 'var-spacewalk' } },
    ]);
    expect(pod.containers[0].volumeMounts).toEqual([
      { name: 'root', mountPath: '/root' }, { name: 'var-spacewalk', mountPath: '/var/spacewalk' },
    ]);
    expect(envOf(plan.find('Job', 'uyuni-move-setup-marker'))).toEqual({
      SETUP_MARKER: '/var/spacewalk/.MANAGER_SETUP_COMPLETE', LEGACY_SETUP_MARKER: '/root/.MANAGER_SETUP_COMPLETE',
    });
    // The new server mounts no /root, as the chart: the marker must be on var-spacewalk.
    const server = podSpec(plan.find('Deployment', 'uyuni'));
    expect(server.containers[0].volumeMounts.map((m: any) => m.mountPath)).not.toContain('/root');
  });

  it('has no root claim to move from on PostgreSQL 18 installs, unless upgrade.rootClaim says so (S3)', () => {
    const on18 = upgrade(withPg({ from: 18 }));
    expect(on18.plan.steps.map((s) => s.name)).not.toContain('setup-marker');
    expect(podSpec(on18.find('Job', 'uyuni-inspect')).volumes.map((v: any) => v.name)).toEqual(['etc-rhn', 'var-spacewalk', 'uyuni-cert']);
    expect(envOf(on18.find('Job', 'uyuni-inspect')).LEGACY_SETUP_MARKER).toBeUndefined();
    expect(refusals(on18.step('stop-server').gates, factsWith({ current_pg_version: '18', setup_marker: undefined })).join('\n'))
      .toMatch(/set upgrade.rootClaim: true/);
    const withRoot = synthYaml(JSON.stringify({ ...parse(exampleText), upgrade: { postgresql: { from: 18 }, rootClaim: true } })).upgrade;
    expect(withRoot.plan.steps.map((s) => s.name)).toContain('setup-marker');
    const without = upgrade(withUpgrade({ rootClaim: false }));
    expect(without.plan.steps.map((s) => s.name)).not.toContain('setup-marker');
  });

  it('keeps the running CA by default: no Issuer, CA or Certificate applied, uyuni-cert and db-cert required as they are (S4)', () => {
    const certManager = plan.objects.filter((o) => o.apiVersion.startsWith('cert-manager.io/'));
    expect(certManager).toEqual([]);
    // Step keep-tls, not tls: the runtime prunes the members of the steps a plan has, and an
    // install made by uyuni-cdk has its Issuers and Certificates in step tls.
    expect(plan.plan.steps.map((s) => s.name)).not.toContain('tls');
    expect(namesIn(plan, 'keep-tls')).toEqual(['ConfigMap/uyuni-tls']);
    const tls = plan.step('keep-tls');
    expect(tls.actions).toEqual([]);
    expect(tls.requires.map((r) => [r.kind, r.name, r.ifMissing, r.keys.join(',')])).toEqual([
      ['Secret', 'uyuni-cert', 'fail', 'tls.crt,tls.key,ca.crt'], ['Secret', 'db-cert', 'fail', 'tls.crt,tls.key,ca.crt'],
    ]);
    // The gate: the CA uyuni-cert has now, fingerprinted by the inspection before anything stops.
    expect(plan.step('stop-server').gates.filter((g) => g.type === 'present').map((g) => (g as { fact: string }).fact))
      .toEqual(expect.arrayContaining(['ca_fingerprint', 'setup_marker']));
    // The pods read the CA from the Secrets that stay (the chart's and mgradm's carry ca.crt).
    const secrets = podSpec(plan.find('Deployment', 'uyuni')).volumes.filter((v: any) => v.secret).map((v: any) => v.secret.secretName);
    expect(secrets).toEqual(expect.arrayContaining(['uyuni-cert', 'db-cert']));
  });

  it('mints a new CA only when upgrade.ca says new, deleting the running Issuer uyuni-issuer first (mgradm\'s is self-signed) (S4)', () => {
    const fresh = upgrade(withUpgrade({ ca: 'new' }));
    expect(fresh.step('tls').actions).toEqual([
      { type: 'delete', object: { apiVersion: 'cert-manager.io/v1', kind: 'Issuer', name: 'uyuni-issuer', namespace: NS } },
    ]);
    expect(namesIn(fresh, 'tls')).toEqual(expect.arrayContaining(['Issuer/uyuni-root-issuer', 'Certificate/uyuni-ca', 'Issuer/uyuni-issuer']));
    expect(fresh.find('Issuer', 'uyuni-issuer').spec).toEqual({ ca: { secretName: 'uyuni-ca' } });
    expect(envOf(fresh.find('Job', 'uyuni-inspect')).CA_CERT).toBeUndefined();
    expect(refusals(fresh.step('stop-server').gates, factsWith({ ca_fingerprint: undefined }))).toEqual([]);
    expect(fresh.find('ConfigMap', 'uyuni-upgrade').data.ca).toBe('new');
  });

  it('requires the install\'s database credentials, never generating one (M3)', () => {
    const requires = plan.step('database').requires;
    expect(requires.map((r) => [r.name, r.ifMissing])).toEqual([
      ['db-admin-credentials', 'fail'], ['db-credentials', 'fail'], ['reportdb-credentials', 'fail'],
    ]);
    expect(requires.every((r) => r.generate === undefined)).toBe(true);
    expect(requires[1].message).toMatch(/an upgrade never makes a new one/);
    expect(plan.plan.steps.flatMap((s) => s.requires).filter((r) => /^(db|reportdb|db-admin)-credentials$/.test(r.name) && r.ifMissing !== 'fail')).toEqual([]);
  });

  it('rejects an upgrade.ca that is neither keep nor new, naming the field', () => {
    expect(() => parseConfig(withUpgrade({ ca: 'mint' }), 'bad.yaml')).toThrow(/upgrade.ca/);
  });
});
