// uyuni-import-secrets run for real: Debian's sh, curl and openssl against the API simulator, with
// an old CA whose key openssl encrypted with a known password, as the old server's ssl-build has it.
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { runScript, serviceAccountDir } from './helpers/script-run';
import { tempDir } from './helpers/synth';
import { Simulator, startSimulator } from './sim';

const NS = 'uyuni';
const PASSWORD = 'old CA pass phrase';
const DB_PASSWORD = 'db-pass-3f9a';
const REPORT_PASSWORD = 'report-pass-77c1';

/** An old server's ssl-build CA: certificate and an AES-encrypted private key, as rhn-ssl-tool makes them. */
function oldCa(dir: string, password = PASSWORD): void {
  fs.mkdirSync(dir, { recursive: true });
  const key = path.join(dir, 'clear.key');
  const ok = (r: ReturnType<typeof spawnSync>) => expect({ status: r.status, err: String(r.stderr) }).toEqual({ status: 0, err: expect.any(String) });
  ok(spawnSync('openssl', ['genpkey', '-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048', '-out', key]));
  ok(spawnSync('openssl', ['req', '-x509', '-new', '-key', key, '-subj', '/CN=old-server CA', '-days', '30', '-out', path.join(dir, 'RHN-ORG-TRUSTED-SSL-CERT')]));
  ok(spawnSync('openssl', ['pkey', '-in', key, '-aes256', '-passout', `pass:${password}`, '-out', path.join(dir, 'RHN-ORG-PRIVATE-SSL-KEY')]));
  fs.rmSync(key);
}

function migrationDir(): string {
  const dir = tempDir('uyuni-cdk-import-');
  fs.writeFileSync(path.join(dir, 'secrets'), [
    'db_user=spacewalk', `db_password=${DB_PASSWORD}`, 'report_db_user=pythia_susemanager', `report_db_password=${REPORT_PASSWORD}`, '',
  ].join('\n'), { mode: 0o600 });
  oldCa(path.join(dir, 'ca'));
  return dir;
}

let sim: Simulator;
beforeEach(async () => {
  sim = await startSimulator();
  sim.put({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
});
afterEach(async () => {
  await sim?.stop();
});

/** Runs the script as the Job would, with the simulator as the API and a service account token. */
function run(dir: string, env: Record<string, string> = {}): Promise<{ code: number; out: string }> {
  const sa = serviceAccountDir();
  return runScript('import-secrets.sh', {
    MIGRATION_DIR: dir, NAMESPACE: NS, IMPORT_CA: 'true', CA_PASSWORD: PASSWORD,
    SECRET_LABELS: '{"app.kubernetes.io/part-of":"uyuni","app.kubernetes.io/managed-by":"uyuni-cdk"}',
    API_URL: sim.url, SA_DIR: sa, ...env,
  });
}

const secret = (name: string) => sim.get('v1', 'Secret', name, NS);
const decoded = (name: string, key: string) => Buffer.from(secret(name)?.data?.[key] ?? '', 'base64').toString('utf8');

describe('import-secrets.sh against the API simulator', () => {
  it('creates the database credentials and the decrypted CA, labelled, and prints no secret', async () => {
    const dir = migrationDir();
    const r = await run(dir);
    expect(r.code).toBe(0);
    expect(secret('db-credentials')?.type).toBe('kubernetes.io/basic-auth');
    expect(decoded('db-credentials', 'username')).toBe('spacewalk');
    expect(decoded('db-credentials', 'password')).toBe(DB_PASSWORD);
    expect(decoded('reportdb-credentials', 'username')).toBe('pythia_susemanager');
    expect(decoded('reportdb-credentials', 'password')).toBe(REPORT_PASSWORD);
    expect(secret('uyuni-ca')?.type).toBe('kubernetes.io/tls');
    expect(secret('uyuni-ca')?.metadata?.labels).toEqual({ 'app.kubernetes.io/part-of': 'uyuni', 'app.kubernetes.io/managed-by': 'uyuni-cdk' });
    expect(decoded('uyuni-ca', 'tls.crt')).toBe(fs.readFileSync(path.join(dir, 'ca', 'RHN-ORG-TRUSTED-SSL-CERT'), 'utf8'));
    // The key is in clear now, and it is the certificate's.
    const key = decoded('uyuni-ca', 'tls.key');
    expect(key).toMatch(/^-----BEGIN PRIVATE KEY-----/);
    const pub = spawnSync('openssl', ['pkey', '-pubout'], { input: key, encoding: 'utf8' }).stdout;
    const certPub = spawnSync('openssl', ['x509', '-noout', '-pubkey', '-in', path.join(dir, 'ca', 'RHN-ORG-TRUSTED-SSL-CERT')], { encoding: 'utf8' }).stdout;
    expect(pub).toBe(certPub);
    for (const s of [PASSWORD, DB_PASSWORD, REPORT_PASSWORD, 'PRIVATE KEY', 'test-token']) expect(r.out).not.toContain(s);
    expect(r.out).toContain('created Secret uyuni-ca');
  });

  it('refuses a wrong CA password, naming the Secret, and creates no CA', async () => {
    const r = await run(migrationDir(), { CA_PASSWORD: 'wrong' });
    expect(r.code).toBe(1);
    expect(r.out).toContain('cannot decrypt the old CA key with the CA password in Secret uyuni-ca-password');
    expect(r.out).not.toContain(PASSWORD);
    expect(secret('uyuni-ca')).toBeUndefined();
  });

  it('refuses a CA key that does not belong to the certificate', async () => {
    const dir = migrationDir();
    oldCa(path.join(dir, 'other'));
    fs.copyFileSync(path.join(dir, 'other', 'RHN-ORG-PRIVATE-SSL-KEY'), path.join(dir, 'ca', 'RHN-ORG-PRIVATE-SSL-KEY'));
    const r = await run(dir);
    expect(r.code).toBe(1);
    expect(r.out).toContain('the old CA key does not belong to RHN-ORG-TRUSTED-SSL-CERT');
    expect(secret('uyuni-ca')).toBeUndefined();
  });

  it('keeps Secrets the user made, and imports no CA without IMPORT_CA', async () => {
    const mine = Buffer.from('mine').toString('base64');
    sim.put({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'db-credentials', namespace: NS }, data: { username: mine, password: mine } });
    const r = await run(migrationDir(), { IMPORT_CA: 'false', CA_PASSWORD: '' });
    expect(r.code).toBe(0);
    expect(r.out).toContain('Secret db-credentials exists already: kept as it is');
    expect(decoded('db-credentials', 'password')).toBe('mine');
    expect(decoded('reportdb-credentials', 'password')).toBe(REPORT_PASSWORD);
    expect(secret('uyuni-ca')).toBeUndefined();
  });

  it('fails with the API\'s own words when the service account may not read a Secret', async () => {
    sim.failNext(1, 403, 'GET /api/v1/namespaces');
    const r = await run(migrationDir());
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/uyuni-import-secrets: reading Secret db-credentials: HTTP 403: \{.*simulated RBAC refusal/);
    expect(secret('db-credentials')).toBeUndefined();
  });

  it('fails, naming the file, when the data sync wrote no credentials', async () => {
    const dir = migrationDir();
    fs.rmSync(path.join(dir, 'secrets'));
    const r = await run(dir);
    expect(r.code).toBe(1);
    expect(r.out).toContain('secrets is missing: did uyuni-data-sync run?');
    expect(secret('db-credentials')).toBeUndefined();
  });
});
