// gitops.credentials: job in the synthesized plans: a `credentials` step after the namespace whose
// Job makes exactly the Secrets the plan's requirements would have the runtime generate.
import * as fs from 'fs';
import * as path from 'path';
import { parse } from 'yaml';
import { KUSTOMIZATION } from '../../src/plans/kustomization';
import { defaultConfigWith, ROOT, synthYaml } from '../helpers/synth';
import { validateObject } from '../helpers/validate';

/** A configuration as YAML text (JSON is YAML). */
const yaml = (o: unknown) => JSON.stringify(o);
const withJob = (changes: Record<string, unknown> = {}) => defaultConfigWith({ gitops: { credentials: 'job' }, ...changes });
const envOf = (job: any): Record<string, string> => Object.fromEntries(job.spec.template.spec.containers[0].env.map((e: any) => [e.name, e.value]));

describe('gitops.credentials: job', () => {
  const { install } = synthYaml(withJob());
  const job = install.find('Job', 'uyuni-credentials');

  it('adds step credentials right after the namespace, as wave 1, and shifts every later wave', () => {
    expect(install.plan.steps.map((s) => s.name)).toEqual(['namespace', 'credentials', 'volumes', 'tls', 'services', 'database', 'ingress', 'server']);
    install.plan.steps.forEach((step, i) => {
      for (const o of install.files[step.file]) expect({ o: `${o.kind}/${o.metadata.name}`, wave: o.metadata.annotations?.['argocd.argoproj.io/sync-wave'] }).toEqual({ o: `${o.kind}/${o.metadata.name}`, wave: String(i) });
    });
    expect(install.step('credentials').waits).toEqual(expect.arrayContaining([
      { object: { apiVersion: 'batch/v1', kind: 'Job', name: 'uyuni-credentials', namespace: 'uyuni' }, for: 'complete' },
    ]));
    expect(fs.readFileSync(path.join(install.dir, KUSTOMIZATION), 'utf8')).toContain('  - 0001-credentials.k8s.yaml\n  - 0002-volumes.k8s.yaml\n');
  });

  it('makes exactly the Secrets the requirements generate, with their literals, lengths and types', () => {
    const generated = install.plan.steps.flatMap((s) => s.requires).filter((r) => r.ifMissing === 'generate');
    expect(generated.map((r) => r.name).sort()).toEqual(['admin-credentials', 'db-admin-credentials', 'db-credentials', 'reportdb-credentials']);
    const lines = envOf(job).SECRETS.split('\n');
    expect(lines.map((l) => l.split(' ')[0]).sort()).toEqual(generated.map((r) => r.name).sort());
    for (const r of generated) {
      const items = Object.entries(r.generate!).map(([k, g]) => ('literal' in g ? `${k}=literal:${g.literal}` : `${k}=random:${g.random.length}`));
      expect(lines).toContain([r.name, r.secretType, ...items].join(' '));
    }
    expect(lines).toContain('db-credentials kubernetes.io/basic-auth username=literal:spacewalk password=random:32');
    // The requirements stay: the runtime finds the Secrets the Job made.
    expect(install.step('database').requires.map((r) => r.ifMissing)).toEqual(['generate', 'generate', 'generate']);
  });

  it('may get only those Secrets and create Secrets, and runs the server image without root', () => {
    const role = install.find('Role', 'uyuni-credentials');
    expect(role.rules).toEqual([
      { apiGroups: [''], resources: ['secrets'], verbs: ['get'], resourceNames: ['db-admin-credentials', 'db-credentials', 'reportdb-credentials', 'admin-credentials'] },
      { apiGroups: [''], resources: ['secrets'], verbs: ['create'] },
    ]);
    expect(install.find('RoleBinding', 'uyuni-credentials').subjects).toEqual([{ kind: 'ServiceAccount', name: 'uyuni-credentials', namespace: 'uyuni' }]);
    const pod = job.spec.template.spec;
    expect(pod.serviceAccountName).toBe('uyuni-credentials');
    expect(pod.containers[0].image).toBe('registry.opensuse.org/uyuni/server:2026.08');
    expect(pod.containers[0].securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 65534, allowPrivilegeEscalation: false });
    expect(JSON.parse(envOf(job).SECRET_LABELS)).toEqual({
      'app.kubernetes.io/part-of': 'uyuni', 'app.kubernetes.io/managed-by': 'uyuni-cdk', 'uyuni-cdk.io/step': 'credentials',
    });
    expect(job.metadata.annotations?.['uyuni-cdk.io/spec-hash']).toMatch(/^sha256:[0-9a-f]{64}$/);
    for (const o of install.files['0001-credentials.k8s.yaml']) validateObject(o);
  });

  it('writes no value into dist/: only names, literal user names and lengths', () => {
    const text = install.text['0001-credentials.k8s.yaml'];
    expect(text).not.toMatch(/kind: Secret\b/);
    expect(text).not.toMatch(/^\s+data:/m);
  });

  it('goes first in a plan without a namespace step (upgrade) and is left out where nothing is generated (proxy)', () => {
    const upgrade = synthYaml(withJob({ upgrade: { postgresql: { from: 16 } } })).upgrade;
    expect(upgrade.plan.steps[0].name).toBe('credentials');
    const proxy = synthYaml(withJob({ plans: ['proxy'], proxy: { fqdn: 'proxy.example.com' } })).proxy;
    expect(proxy.plan.steps.map((s) => s.name)).not.toContain('credentials');
  });

  it('makes only the generated ones in a migration: the database credentials come from the old server', () => {
    const config = { ...parse(fs.readFileSync(path.join(ROOT, 'examples', 'migration.yaml'), 'utf8')), gitops: { credentials: 'job' } };
    const { migrate } = synthYaml(yaml(config));
    expect(migrate.plan.steps.slice(0, 3).map((s) => s.name)).toEqual(['namespace', 'credentials', 'volumes']);
    const lines = envOf(migrate.find('Job', 'uyuni-credentials')).SECRETS.split('\n');
    expect(lines.map((l) => l.split(' ')[0])).toEqual(['db-admin-credentials', 'admin-credentials']);
  });

  it('is opt-in: the committed plans have no credentials step and generate at run time, as before', () => {
    for (const dir of fs.readdirSync(path.join(ROOT, 'dist'))) {
      const index = path.join(ROOT, 'dist', dir, 'uyuni.plan');
      if (!fs.existsSync(index)) continue;
      expect(JSON.parse(fs.readFileSync(index, 'utf8')).steps.map((s: any) => s.name)).not.toContain('credentials');
    }
    const runtime = synthYaml(defaultConfigWith()).install;
    expect(runtime.plan.steps.map((s) => s.name)).not.toContain('credentials');
    expect(runtime.plan.steps.flatMap((s) => s.requires).filter((r) => r.ifMissing === 'generate')).toHaveLength(4);
  });

  it('refuses a value other than runtime or job, naming the field', () => {
    expect(() => synthYaml(defaultConfigWith({ gitops: { credentials: 'sealed' } }))).toThrow(/gitops\.credentials: must be one of "runtime", "job"/);
  });
});
