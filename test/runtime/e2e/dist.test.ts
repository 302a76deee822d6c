/**
 * The synthesized plans of dist/ (the lead's and the migration engineer's) through the runtime:
 * install, then upgrade with the facts its inspect Job prints deciding the gates.
 */
import * as fs from 'fs';
import * as path from 'path';
import { readPlan } from '../../../src/plan/reader';
import { startSimulator, Simulator } from '../../sim';
import { cli, ROOT, writesTo } from './harness';

const dist = (p: string) => path.join(ROOT, 'dist', p);
const have = (p: string) => fs.existsSync(path.join(dist(p), 'plan.json'));
const facts = (over: Record<string, string> = {}) => Object.entries({
  image_pg_version: '16', current_pg_version: '14', product: 'uyuni', current_product: 'uyuni',
  uyuni_release: '2025.10', current_release: '2025.07', fqdn: 'uyuni.example.com', ...over,
}).map(([k, v]) => `${k}=${v}`);

let sim: Simulator;
afterEach(async () => {
  await sim?.stop();
});

(have('install') && have('upgrade') ? describe : describe.skip)('dist/install then dist/upgrade', () => {
  it('upgrades when the inspect Job\'s facts pass every gate: server scaled down, upgrade Jobs run, server back', async () => {
    sim = await startSimulator({ jobs: { 'uyuni-inspect': { logs: ['uyuni-inspect: reading /var/lib/pgsql', ...facts()] } } });
    expect((await cli('run', dist('install'), { kubeconfig: sim.kubeconfigPath })).code).toBe(0);
    const r = await cli('run', dist('upgrade'), { kubeconfig: sim.kubeconfigPath });
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).toContain('facts: ');
    expect(r.out).toContain('current_pg_version=14');
    expect(r.out).toMatch(/scale to 0 Deployment\/uyuni \(uyuni\): done/);
    for (const s of readPlan(dist('upgrade')).steps) {
      for (const o of s.objects.filter((x) => x.kind === 'Job')) expect(sim.get(o.apiVersion, o.kind, o.name, o.namespace)?.status?.succeeded).toBe(1);
    }
  });

  it('refuses a PostgreSQL downgrade from the facts, before stopping the server', async () => {
    sim = await startSimulator({ jobs: { 'uyuni-inspect': { logs: facts({ image_pg_version: '13', current_pg_version: '14' }) } } });
    expect((await cli('run', dist('install'), { kubeconfig: sim.kubeconfigPath })).code).toBe(0);
    const mark = sim.requests.length;
    const r = await cli('run', dist('upgrade'), { kubeconfig: sim.kubeconfigPath });
    expect(r.code).toBe(1);
    expect(r.out).toContain('gate REFUSED: the new image\'s PostgreSQL is older than the database\'s: PostgreSQL cannot be downgraded');
    expect(writesTo(sim.requests.slice(mark), '/deployments/uyuni')).toEqual([]);
    expect(sim.get('batch/v1', 'Job', 'uyuni-db-upgrade', 'uyuni')).toBeUndefined();
  });
});

(have('migrate') ? describe : describe.skip)('dist/migrate', () => {
  it('stops at the data-sync step naming the missing ssh key Secret, then migrates once the user created it', async () => {
    sim = await startSimulator({ jobs: { 'uyuni-inspect': { logs: facts({ fqdn: 'old-server.example.com' }) } } });
    const first = await cli('run', dist('migrate'), { kubeconfig: sim.kubeconfigPath });
    expect(first.code).toBe(1);
    expect(first.out + first.err).toContain('kubectl -n uyuni create secret generic uyuni-migration-key');
    expect(sim.get('batch/v1', 'Job', 'uyuni-data-sync', 'uyuni')).toBeUndefined();

    const b64 = (t: string) => Buffer.from(t).toString('base64');
    sim.put({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'uyuni-migration-key', namespace: 'uyuni' }, data: { key: b64('k'), 'key.pub': b64('p') } });
    sim.put({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'uyuni-migration-ssh', namespace: 'uyuni' }, data: { config: 'Host *', known_hosts: 'old-server.example.com ssh-ed25519 AAAA' } });
    sim.put({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'uyuni-ca', namespace: 'uyuni' }, type: 'kubernetes.io/tls', data: { 'tls.crt': b64('c'), 'tls.key': b64('k') } });
    const r = await cli('run', dist('migrate'), { kubeconfig: sim.kubeconfigPath });
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    for (const s of readPlan(dist('migrate')).steps) {
      for (const o of s.objects.filter((x) => x.kind === 'Job')) expect(sim.get(o.apiVersion, o.kind, o.name, o.namespace)?.status?.succeeded).toBe(1);
    }
    expect(sim.get('apps/v1', 'Deployment', 'uyuni', 'uyuni')).toBeDefined();
  });
});
