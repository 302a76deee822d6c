/**
 * A finished migration on the simulator (dist/migrate, with what its inputs and its inspect Jobs
 * give), and the Jobs deleted as a TTL would: for the tests of what keeps it from running again.
 */
import * as fs from 'fs';
import * as path from 'path';
import { parse, stringify } from 'yaml';
import { synthYaml } from '../../helpers/synth';
import { startSimulator, Simulator } from '../../sim';
import { cli, ROOT } from './harness';
import { inspectJobs } from './inspect-facts';

export const dist = (p: string) => path.join(ROOT, 'dist', p);
const b64 = (t: string) => Buffer.from(t).toString('base64');

export const migrationFacts = () => inspectJobs({
  fqdn: 'old-server.example.com', current_release: '2024.10', timezone: 'Europe/Berlin', has_hub: 'false', debug_java: 'false',
  tftp_enabled: 'true', ca_fingerprint_match: 'true',
}, { current_pg_version: '14' });

/**
 * The Secrets and ConfigMap a migration needs (all but those in `without`), and what the real
 * uyuni-import-secrets makes (the simulated Job runs no script).
 */
export function migrationInputs(s: Simulator, without: readonly string[] = []): void {
  const secret = (name: string, data: Record<string, string>, type = 'Opaque') => {
    if (!without.includes(name)) s.put({ apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: 'uyuni' }, type, data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, b64(v)])) });
  };
  secret('uyuni-migration-key', { key: 'k', 'key.pub': 'p' });
  s.put({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'uyuni-migration-ssh', namespace: 'uyuni' }, data: { config: 'Host *', known_hosts: 'x' } });
  secret('uyuni-ca-password', { password: 'pw' });
  secret('uyuni-ca', { 'tls.crt': 'c', 'tls.key': 'k' }, 'kubernetes.io/tls');
  for (const name of ['db-credentials', 'reportdb-credentials']) secret(name, { username: 'u', password: 'p' }, 'kubernetes.io/basic-auth');
}

/** `kubectl create namespace uyuni`, as the README's migration recipe does first: a bare namespace that `run` takes over. */
export function handMadeNamespace(s: Simulator): void {
  s.put({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'uyuni' }, spec: { finalizers: ['kubernetes'] }, status: { phase: 'Active' } });
}

/** A simulator with a finished run of dist/migrate (into a namespace made by hand first, with `handMade`). */
export async function finishedMigration(o: { handMade?: boolean } = {}): Promise<Simulator> {
  const sim = await startSimulator({ jobs: migrationFacts() });
  if (o.handMade) handMadeNamespace(sim);
  migrationInputs(sim);
  const r = await cli('run', dist('migrate'), { kubeconfig: sim.kubeconfigPath, yes: true });
  expect(r.err).toBe('');
  expect(r.code).toBe(0);
  return sim;
}

/** Deletes every Job of namespace uyuni (a TTL, kubectl delete jobs). */
export async function deleteJobs(sim: Simulator): Promise<void> {
  for (const j of sim.list('batch/v1', 'Job', 'uyuni')) {
    const res = await fetch(`${sim.url}/apis/batch/v1/namespaces/uyuni/jobs/${j.metadata.name}?propagationPolicy=Background`, { method: 'DELETE' });
    expect(res.ok).toBe(true);
  }
  await new Promise((r) => setTimeout(r, 200));
  expect(sim.list('batch/v1', 'Job', 'uyuni')).toEqual([]);
}

/** A configuration file of examples/ with changes merged in, synthesized into a temp dir: plan name → its directory. */
export function synthExample(example: string, change: (c: any) => void): Record<string, string> {
  const c = parse(fs.readFileSync(path.join(ROOT, 'examples', example), 'utf8'));
  change(c);
  const out = synthYaml(stringify(c));
  return Object.fromEntries(Object.entries(out).filter(([k]) => k !== 'root').map(([k, v]) => [k, (v as { dir: string }).dir]));
}
