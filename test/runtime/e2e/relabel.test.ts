/**
 * Bookkeeping-only changes are not updates (issue 38, item 7): after a migration, the documented
 * next step (the install plan of the same configuration) changes only our bookkeeping labels
 * (`uyuni-cdk.io/plan: migrate` → `install`, …) on 45 objects. `plan` counts them apart
 * (`45 to relabel`), `--detailed-exitcode` reports no drift for them unless `--bookkeeping-drift`,
 * and `run` still writes them, saying `relabelled`.
 */
import * as fs from 'fs';
import * as path from 'path';
import { parse, stringify } from 'yaml';
import { synthYaml } from '../../helpers/synth';
import { startSimulator, Simulator } from '../../sim';
import { cli, ROOT, tmpDir } from './harness';
import { inspectJobs } from './inspect-facts';

const dist = (p: string) => path.join(ROOT, 'dist', p);
const b64 = (t: string) => Buffer.from(t).toString('base64');
let sim: Simulator;
afterEach(async () => {
  await sim?.stop();
});

it('after a migration, the install plan of the same configuration: 45 to relabel, not drift; run writes them as relabelled', async () => {
  sim = await startSimulator({ jobs: inspectJobs({ fqdn: 'old-server.example.com', current_release: '2024.10', timezone: 'Europe/Berlin', has_hub: 'false', debug_java: 'false', tftp_enabled: 'true', ca_fingerprint_match: 'true' }, { current_pg_version: '14' }) });
  const secret = (name: string, data: Record<string, string>, type = 'Opaque') =>
    sim.put({ apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: 'uyuni' }, type, data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, b64(v)])) });
  sim.put({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'uyuni' } });
  secret('uyuni-migration-key', { key: 'k', 'key.pub': 'p' });
  sim.put({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'uyuni-migration-ssh', namespace: 'uyuni' }, data: { config: 'Host *', known_hosts: 'x' } });
  secret('uyuni-ca-password', { password: 'pw' });
  secret('uyuni-ca', { 'tls.crt': 'c', 'tls.key': 'k' }, 'kubernetes.io/tls');
  for (const name of ['db-credentials', 'reportdb-credentials']) secret(name, { username: 'u', password: 'p' }, 'kubernetes.io/basic-auth');
  expect((await cli('run', dist('migrate'), { kubeconfig: sim.kubeconfigPath, yes: true })).code).toBe(0);
  const c = parse(fs.readFileSync(path.join(ROOT, 'examples', 'migration.yaml'), 'utf8'));
  delete c.migration;
  const install = (synthYaml(stringify(c)) as Record<string, { dir: string }>).install.dir;
  const label = () => sim.get('v1', 'PersistentVolumeClaim', 'var-cobbler', 'uyuni').metadata.labels['uyuni-cdk.io/plan'];
  expect(label()).toBe('migrate');

  const p = await cli('plan', install, { kubeconfig: sim.kubeconfigPath, detailedExitcode: true });
  expect(p.out).toContain('Plan: 0 to create, 0 to update, 0 to delete, 0 to stop, 45 to relabel (bookkeeping labels only), 0 unchanged.');
  expect(p.out).not.toMatch(/^ {2}update /m);
  expect(p.out).toContain('  relabel  26 objects  (1 bookkeeping label)');
  expect(p.code).toBe(0);
  expect((await cli('plan', install, { kubeconfig: sim.kubeconfigPath, detailedExitcode: true, bookkeepingDrift: true })).code).toBe(2);
  const json = JSON.parse((await cli('plan', install, { kubeconfig: sim.kubeconfigPath, output: 'json' })).out);
  expect(json.summary).toMatchObject({ update: 0, relabel: 45 });

  const runDir = tmpDir();
  const r = await cli('run', install, { kubeconfig: sim.kubeconfigPath, runDir, yes: true });
  expect(r.err).toBe('');
  expect(r.code).toBe(0);
  expect(r.out).toContain('PersistentVolumeClaim/var-cobbler (uyuni): relabelled');
  expect(r.out).toMatch(/Run complete in [\d.]+s: 0 created, 0 updated, 45 relabelled, 0 deleted/);
  const events = fs.readFileSync(path.join(runDir, 'events.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  expect(events.filter((e) => e.type === 'apply' && e.result === 'relabelled')).toHaveLength(45);
  expect(label()).toBe('install');
  const after = await cli('plan', install, { kubeconfig: sim.kubeconfigPath, detailedExitcode: true, bookkeepingDrift: true });
  expect(after.out).toContain('Plan: 0 to create, 0 to update, 0 to delete, 0 to stop, 45 unchanged.');
  expect(after.code).toBe(0);
}, 120000);
