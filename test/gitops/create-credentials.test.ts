// uyuni-credentials run for real: Debian's sh, curl, tr and base64 against the API simulator, with
// the SECRETS of the Job synth writes for gitops.credentials: job (derived from the plan's
// requirements), as the Job's pod would run it.
import * as fs from 'fs';
import { runScript, serviceAccountDir } from '../helpers/script-run';
import { defaultConfigWith, synthYaml } from '../helpers/synth';
import { Simulator, startSimulator } from '../sim';

const NS = 'uyuni';
const LABELS = { 'app.kubernetes.io/part-of': 'uyuni', 'app.kubernetes.io/managed-by': 'uyuni-cdk', 'uyuni-cdk.io/step': 'credentials' };

/** The Job's environment as synth wrote it. */
function jobEnv(): Record<string, string> {
  const { install } = synthYaml(defaultConfigWith({ gitops: { credentials: 'job' } }));
  const job = install.find('Job', 'uyuni-credentials');
  return Object.fromEntries(job.spec.template.spec.containers[0].env.filter((e: any) => e.value !== undefined).map((e: any) => [e.name, e.value]));
}
const ENV = jobEnv();

let sim: Simulator;
let sa: string;
beforeEach(async () => {
  sim = await startSimulator();
  sim.put({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
  sa = serviceAccountDir();
});
afterEach(async () => {
  await sim?.stop();
  fs.rmSync(sa, { recursive: true, force: true });
});

/** Runs the script as the Job's pod would, with the simulator as the API. */
function run(env: Record<string, string> = {}): Promise<{ code: number; out: string }> {
  return runScript('create-credentials.sh', { ...ENV, NAMESPACE: NS, API_URL: sim.url, SA_DIR: sa, ...env });
}

const secret = (name: string) => sim.get('v1', 'Secret', name, NS);
const decoded = (name: string, key: string) => Buffer.from(secret(name)?.data?.[key] ?? '', 'base64').toString('utf8');
const NAMES = ['admin-credentials', 'db-admin-credentials', 'db-credentials', 'reportdb-credentials'];

describe('create-credentials.sh against the API simulator', () => {
  it('creates every missing credential Secret: the user names, 32 random letters and digits, basic-auth, labelled', async () => {
    const r = await run();
    expect(r.code).toBe(0);
    const users = { 'admin-credentials': 'admin', 'db-admin-credentials': 'postgres', 'db-credentials': 'spacewalk', 'reportdb-credentials': 'pythia_susemanager' };
    const passwords = new Set<string>();
    for (const name of NAMES) {
      expect(secret(name)?.type).toBe('kubernetes.io/basic-auth');
      expect(secret(name)?.metadata?.labels).toEqual(LABELS);
      expect(Object.keys(secret(name)?.data ?? {}).sort()).toEqual(['password', 'username']);
      expect(decoded(name, 'username')).toBe(users[name as keyof typeof users]);
      expect(decoded(name, 'password')).toMatch(/^[A-Za-z0-9]{32}$/);
      passwords.add(decoded(name, 'password'));
      expect(r.out).toContain(`created Secret ${name} (keys username, password)`);
      // No generated value reaches the log.
      expect(r.out).not.toContain(decoded(name, 'password'));
    }
    expect(passwords.size).toBe(NAMES.length);
    expect(r.out).not.toContain('test-token');
  });

  it('leaves an existing Secret untouched (not even read back into the log) and creates the others', async () => {
    const mine = { username: Buffer.from('dba').toString('base64'), password: Buffer.from('chosen-by-me').toString('base64') };
    sim.put({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'db-credentials', namespace: NS, labels: { mine: 'yes' } }, type: 'Opaque', data: mine });
    const before = secret('db-credentials');
    const r = await run();
    expect(r.code).toBe(0);
    expect(r.out).toContain('Secret db-credentials exists already: kept as it is');
    expect(secret('db-credentials')).toEqual(before);
    expect(r.out).not.toContain('chosen-by-me');
    expect(decoded('reportdb-credentials', 'username')).toBe('pythia_susemanager');
  });

  it('is idempotent: a second run changes nothing and writes nothing', async () => {
    expect((await run()).code).toBe(0);
    const first = Object.fromEntries(NAMES.map((n) => [n, secret(n)]));
    const writes = sim.requests.length;
    const r = await run();
    expect(r.code).toBe(0);
    for (const n of NAMES) expect(r.out).toContain(`Secret ${n} exists already: kept as it is`);
    expect(Object.fromEntries(NAMES.map((n) => [n, secret(n)]))).toEqual(first);
    expect(sim.requests.slice(writes).filter((q: any) => q.method !== 'GET')).toEqual([]);
  });

  it('checks every line before the first request: a bad one creates nothing, naming it', async () => {
    const r = await run({ SECRETS: `${ENV.SECRETS}\nbad_name kubernetes.io/basic-auth password=random:32` });
    expect(r.code).toBe(1);
    expect(r.out).toContain("SECRETS: 'bad_name' is not a Secret name");
    for (const n of NAMES) expect(secret(n)).toBeUndefined();
    const r2 = await run({ SECRETS: 'x Opaque password=random:0' });
    expect(r2.out).toContain('SECRETS: key password: random length must be 1 to 4096');
    const r3 = await run({ SECRETS: 'x Opaque user=literal:a"b' });
    expect(r3.out).toContain('SECRETS: the literal of key user holds characters other than');
  });

  it('names its Role when the service account may not read a Secret, and creates nothing', async () => {
    sim.failNext(1, 403, 'GET /api/v1/namespaces');
    const r = await run();
    expect(r.code).toBe(1);
    expect(r.out).toContain('uyuni-credentials: reading Secret db-admin-credentials: HTTP 403: the service account may not get it (Role uyuni-credentials)');
    for (const n of NAMES) expect(secret(n)).toBeUndefined();
  });

  it('fails, naming the Secret and the status, when the API refuses', async () => {
    const r = await run({ NAMESPACE: 'missing-namespace' });
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/uyuni-credentials: creating Secret db-admin-credentials: HTTP 404/);
  });
});
