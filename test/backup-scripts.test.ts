// The backup and restore Jobs' scripts run for real: Debian's sh, tar, sha256sum and python3 over
// claims in temporary directories, Debian's PostgreSQL 15 for the database claim (a cluster made,
// filled, shut down, backed up, restored and started again), and the API simulator for the
// Secrets. Root is needed (tar keeps owners, PostgreSQL runs as postgres, a full claim is a small
// tmpfs in a mount namespace of its own).
import { spawn, spawnSync } from 'child_process';
import * as crypto from 'crypto';
import * as fs from 'fs';
import * as os from 'os';
import { createServer, Server } from 'http';
import type { AddressInfo } from 'net';
import * as path from 'path';
import { BACKUP_RECORD_FILE, BACKUP_RECORD_FORMAT, BackupRecord } from '../src/model/backup-record';
import { parseFacts } from '../src/runtime/core/facts';
import { runScript, serviceAccountDir } from './helpers/script-run';
import { readScript } from '../src/constructs/script-job';
import { Simulator, startSimulator } from './sim';

const PG = '/usr/lib/postgresql/15/bin';
const NS = 'uyuni';
const CLAIMS = ['var-spacewalk', 'etc-rhn', 'srv-www', 'var-pgsql18'];
const LABELS = '{"app.kubernetes.io/part-of":"uyuni","app.kubernetes.io/managed-by":"uyuni-cdk"}';

if (process.getuid?.() !== 0) throw new Error('test/backup-scripts.test.ts needs root (tar keeps owners; PostgreSQL runs as postgres)');
if (!fs.existsSync(`${PG}/initdb`)) throw new Error('PostgreSQL 15 is not installed (Debian package postgresql-15; .ci/run installs it)');

const temp = (prefix: string) => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  fs.chmodSync(d, 0o755); // postgres must reach its data directory
  return d;
};
const ok = (r: ReturnType<typeof spawnSync>, what: string) => {
  if (r.status !== 0) throw new Error(`${what}: exit ${r.status}: ${r.stderr}${r.stdout}`);
  return String(r.stdout);
};
const asPostgres = (args: string[], what: string) => ok(spawnSync('runuser', ['-u', 'postgres', '--', ...args], { encoding: 'utf8' }), what);

/** A PostgreSQL 15 cluster in `data`, its socket in `sock`; stopped by PID at the end. */
const started: string[] = [];
function pgStart(data: string, sock: string): void {
  asPostgres([`${PG}/pg_ctl`, '-D', data, '-w', '-l', path.join(sock, 'log'), '-o', `-k ${sock} -c listen_addresses=''`, 'start'], 'pg_ctl start');
  started.push(data);
}
function pgStop(data: string): void {
  const pid = Number(fs.readFileSync(path.join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
  process.kill(pid, 'SIGINT'); // fast shutdown
  for (let i = 0; i < 200 && fs.existsSync(path.join(data, 'postmaster.pid')); i++) spawnSync('sleep', ['0.05']);
  if (fs.existsSync(path.join(data, 'postmaster.pid'))) throw new Error('PostgreSQL did not stop');
  started.splice(started.indexOf(data), 1);
}
afterAll(() => {
  for (const data of started) {
    try {
      process.kill(Number(fs.readFileSync(path.join(data, 'postmaster.pid'), 'utf8').split('\n')[0]), 'SIGQUIT');
    } catch { /* gone */ }
  }
});
const psql = (sock: string, sql: string) => asPostgres([`${PG}/psql`, '-h', sock, '-U', 'postgres', '-d', 'uyuni', '-Atc', sql], 'psql');

/** Every entry under `dir`: path, type, mode, owner, size, mtime (s), content hash or link target. */
function listing(dir: string): string[] {
  const out: string[] = [];
  const walk = (rel: string) => {
    for (const name of fs.readdirSync(path.join(dir, rel)).sort()) {
      const r = path.join(rel, name);
      const p = path.join(dir, r);
      const st = fs.lstatSync(p);
      const what = st.isSymbolicLink() ? `-> ${fs.readlinkSync(p)}`
        : st.isFile() ? crypto.createHash('sha256').update(fs.readFileSync(p)).digest('hex') : 'dir';
      // A directory's mtime changes when PostgreSQL writes in it again: files and links only.
      out.push(`${r} ${(st.mode & 0o7777).toString(8)} ${st.uid}:${st.gid} ${st.isFile() ? st.size : ''} ${st.isDirectory() ? '' : Math.floor(st.mtimeMs / 1000)} ${what}`);
      if (st.isDirectory()) walk(r);
    }
  };
  walk('');
  return out;
}

/** The claims of a small server: files of several modes and owners, a link, an empty directory, a database. */
function server(root: string): { claims: string; sock: string } {
  const claims = path.join(root, 'claims');
  for (const c of CLAIMS) fs.mkdirSync(path.join(claims, c), { recursive: true });
  const put = (rel: string, text: string | Buffer, mode = 0o644, uid = 0) => {
    const p = path.join(claims, rel);
    fs.mkdirSync(path.dirname(p), { recursive: true });
    fs.writeFileSync(p, text);
    fs.chmodSync(p, mode);
    fs.chownSync(p, uid, uid);
  };
  put('var-spacewalk/packages/1/abc/pkg-1.0.rpm', crypto.randomBytes(300_000));
  put('var-spacewalk/.MANAGER_SETUP_COMPLETE', '');
  put('var-spacewalk/gpg/key.asc', 'secret key\n', 0o600, 473);
  fs.mkdirSync(path.join(claims, 'var-spacewalk/empty'));
  fs.symlinkSync('packages/1', path.join(claims, 'var-spacewalk/latest'));
  put('etc-rhn/rhn.conf', 'java.hostname = uyuni.example.com\ndb_name = uyuni\n', 0o640);
  put('etc-rhn/uyuni-cdk/uyuni-release', 'Uyuni release 2026.08\n');
  put('srv-www/htdocs/pub/RHN-ORG-TRUSTED-SSL-CERT', 'cert\n');
  fs.mkdirSync(path.join(claims, 'srv-www/lost+found'));
  const data = path.join(claims, 'var-pgsql18');
  fs.chownSync(data, uidOf('postgres'), uidOf('postgres'));
  fs.chmodSync(data, 0o700);
  asPostgres([`${PG}/initdb`, '-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--locale=C'], 'initdb');
  const sock = temp('uyuni-cdk-pgsock-');
  fs.chownSync(sock, uidOf('postgres'), 0);
  pgStart(data, sock);
  asPostgres([`${PG}/createdb`, '-h', sock, '-U', 'postgres', 'uyuni'], 'createdb');
  psql(sock, 'CREATE TABLE rhnserver (id int PRIMARY KEY, name text, created timestamptz DEFAULT now());'
    + "INSERT INTO rhnserver (id, name) SELECT g, 'client-' || g FROM generate_series(1, 5000) g;"
    + 'CREATE INDEX ON rhnserver (name);');
  return { claims, sock };
}
function uidOf(user: string): number {
  return Number(ok(spawnSync('id', ['-u', user], { encoding: 'utf8' }), 'id').trim());
}
const ROWS = 'SELECT id, name, created FROM rhnserver ORDER BY id';

let sim: Simulator;
beforeEach(async () => {
  sim = await startSimulator();
  sim.put({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
});
afterEach(async () => {
  await sim?.stop();
});


function backupEnv(claims: string, backups: string, more: Record<string, string> = {}): Record<string, string> {
  return {
    CLAIMS: CLAIMS.join(' '), CLAIMS_DIR: claims, DB_CLAIM: 'var-pgsql18', BACKUP_DIR: backups, FQDN: 'uyuni.example.com',
    SERVER_IMAGE: 'registry.example.org/uyuni/server', DB_IMAGE: 'registry.example.org/uyuni/server-postgresql', IMAGE_TAG: '2026.08',
    TLS_MODE: 'generated', RELEASE_DIR: 'etc-rhn/uyuni-cdk', SECRETS: 'db-credentials uyuni-ca absent-one',
    POD_SELECTOR: 'app.kubernetes.io/part-of=uyuni,app.kubernetes.io/component in (server,db)', STOP_WAIT_SECONDS: '5',
    NAMESPACE: NS, API_URL: sim.url, SA_DIR: serviceAccountDir(), ...more,
  };
}
function restoreEnv(claims: string, backups: string, more: Record<string, string> = {}): Record<string, string> {
  return {
    BACKUP_DIR: backups, FROM: 'latest', CLAIMS_DIR: claims, FORCE: 'false', NAMESPACE: NS, SECRET_LABELS: LABELS,
    POD_SELECTOR: 'app.kubernetes.io/part-of=uyuni,app.kubernetes.io/component in (server,db)', STOP_WAIT_SECONDS: '5',
    API_URL: sim.url, SA_DIR: serviceAccountDir(), ...more,
  };
}
function emptyClaims(root: string): string {
  const claims = path.join(root, 'claims');
  for (const c of CLAIMS) fs.mkdirSync(path.join(claims, c), { recursive: true });
  fs.chownSync(path.join(claims, 'var-pgsql18'), uidOf('postgres'), uidOf('postgres'));
  fs.chmodSync(path.join(claims, 'var-pgsql18'), 0o700);
  return claims;
}
const secretOf = (name: string, data: Record<string, string>, type = 'Opaque') => ({
  apiVersion: 'v1', kind: 'Secret', type, metadata: { name, namespace: NS, annotations: { 'cert-manager.io/issuer-name': 'uyuni-root-issuer' } },
  data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
});

const SERVER_IMAGE = 'registry.example.org/uyuni/server:2026.08';
const DIGEST = `sha256:${'ab'.repeat(32)}`;
/** As containerd reports a pulled image (the CRI's repo digest). */
const SERVER_IMAGE_ID = `registry.example.org/uyuni/server@${DIGEST}`;
const IDENTITY = JSON.stringify({ v: 1, fqdn: 'uyuni.example.com', product: 'registry.example.org/uyuni/server', imageGeneration: '2026.08', tlsMode: 'generated', plan: 'install', run: 'r-1', at: '2026-12-01T20:00:00Z', sum: 'x' });
const CONFIGURATION = { fqdn: 'uyuni.example.com', namespace: NS, images: { registry: 'registry.example.org/uyuni', tag: '2026.08' }, hubApi: { replicas: 0 } };
const serverPod = (imageID: string) => ({
  apiVersion: 'v1', kind: 'Pod',
  metadata: { name: 'uyuni-7d9f-x2k4p', namespace: NS, labels: { 'app.kubernetes.io/part-of': 'uyuni', 'app.kubernetes.io/component': 'server' } },
  spec: { containers: [{ name: 'uyuni', image: SERVER_IMAGE }] },
  status: { phase: 'Running', containerStatuses: [{ name: 'uyuni', image: SERVER_IMAGE, imageID, ready: true, restartCount: 0 }] },
});
function recordEnv(backups: string, api: string): Record<string, string> {
  return {
    NAMESPACE: NS, POD_SELECTOR: 'app.kubernetes.io/part-of=uyuni,app.kubernetes.io/component in (server,db)',
    CONFIGURATION: JSON.stringify(CONFIGURATION), BACKUP_DIR: backups, API_URL: api, SA_DIR: serviceAccountDir(),
  };
}
/**
 * The two reads of the record Job as the API answers them while the server runs (its pods with
 * their status, as a kubelet wrote it; the runtime's ConfigMap): a server of its own, as the
 * simulator's kubelet reports no imageID. Stopped after the test. Returns its URL.
 */
const apis: Server[] = [];
afterEach(async () => {
  for (const a of apis.splice(0)) await new Promise((r) => a.close(r));
});
async function podsApi(pods: object[], history?: Record<string, string>): Promise<string> {
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const send = (code: number, body: object) => res.writeHead(code, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
    if (req.headers.authorization !== 'Bearer test-token') return send(401, {});
    if (url.pathname === `/api/v1/namespaces/${NS}/pods` && url.searchParams.get('labelSelector')?.includes('app.kubernetes.io/part-of=uyuni')) return send(200, { kind: 'PodList', items: pods });
    if (url.pathname === `/api/v1/namespaces/${NS}/configmaps/uyuni-cdk-history` && history) return send(200, { kind: 'ConfigMap', data: history });
    return send(404, { kind: 'Status', code: 404 });
  });
  apis.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}
/** A record as uyuni-backup-record leaves it on the backup claim, for backup.sh tests about other things. */
const PENDING_RECORD: BackupRecord = { format: BACKUP_RECORD_FORMAT, takenAt: '2026-12-01T20:29:00Z', namespace: NS, pods: [], configuration: CONFIGURATION, planIdentity: null };
function pendingRecord(backups: string): void {
  fs.writeFileSync(path.join(backups, '.record.json'), JSON.stringify(PENDING_RECORD));
}
/** restore-check.sh's comparison with the record: this configuration and these images, nothing allowed unless `more` says. */
function checkEnv(backups: string, more: Record<string, string> = {}, config: object = CONFIGURATION, server = `registry.example.org/uyuni/server@${DIGEST}`): Record<string, string> {
  return {
    BACKUP_DIR: backups, FROM: 'latest', IMAGE_ETC: '/nonexistent', CONFIGURATION: JSON.stringify(config),
    CURRENT_IMAGES: JSON.stringify({ server: { image: server, key: 'server' } }), IGNORED: 'backup restore namespace',
    ALLOW_NEWER_IMAGES: 'false', ALLOW_CONFIG_CHANGES: 'false', ALLOW_MISSING_RECORD: 'false', ...more,
  };
}

/** One backup of a stopped server made by backup.sh: its directory, and the server's listing and rows. */
async function aBackup() {
  const root = temp('uyuni-cdk-backup-');
  const { claims, sock } = server(root);
  const rows = psql(sock, ROWS);
  pgStop(path.join(claims, 'var-pgsql18'));
  sim.put(secretOf('db-credentials', { username: 'spacewalk', password: 'db-pass-91c2' }, 'kubernetes.io/basic-auth'));
  sim.put(secretOf('uyuni-ca', { 'tls.crt': 'CA CERT', 'tls.key': 'CA KEY' }, 'kubernetes.io/tls'));
  const backups = path.join(root, 'backups');
  fs.mkdirSync(backups);
  const before = Object.fromEntries(CLAIMS.map((c) => [c, listing(path.join(claims, c))]));
  // What it is taken with, recorded while the server runs; then the server stops.
  const rec = await runScript('backup-record.sh', recordEnv(backups, await podsApi([serverPod(SERVER_IMAGE_ID)], { identity: IDENTITY })));
  if (rec.code !== 0) throw new Error(`record failed: ${rec.out}`);
  const r = await runScript('backup.sh', backupEnv(claims, backups));
  const facts = parseFacts(r.out);
  if (facts.backup_ok !== 'true') throw new Error(`backup failed: ${r.out}`);
  return { root, claims, backups, dir: path.join(backups, facts.backup_id), id: facts.backup_id, rows, before, out: r.out };
}

describe('backup.sh → restore.sh, a round trip', () => {
  it('gives back every claim byte for byte, the database row for row and the Secrets, and reports per claim', async () => {
    const b = await aBackup();
    // What the backup holds: one archive per claim, identity, the Secrets (0600), manifest last.
    expect(fs.readdirSync(path.join(b.dir, 'claims')).sort()).toEqual(CLAIMS.map((c) => `${c}.tar`).sort());
    expect(fs.statSync(path.join(b.dir, 'secrets', 'db-credentials.json')).mode & 0o777).toBe(0o600);
    expect(fs.existsSync(path.join(b.dir, 'secrets', 'absent-one.json'))).toBe(false);
    const manifest = JSON.parse(fs.readFileSync(path.join(b.dir, 'manifest.json'), 'utf8'));
    expect(manifest).toMatchObject({ format: 1, id: b.id, fqdn: 'uyuni.example.com', release: '2026.08', product: 'uyuni', pgVersion: '15', complete: true });
    for (const c of manifest.claims) {
      const file = fs.readFileSync(path.join(b.dir, c.file));
      expect(file.length).toBe(c.bytes);
      expect(crypto.createHash('sha256').update(file).digest('hex')).toBe(c.sha256);
    }
    expect(JSON.parse(fs.readFileSync(path.join(b.dir, 'identity.json'), 'utf8'))).toEqual({
      fqdn: 'uyuni.example.com', serverImage: 'registry.example.org/uyuni/server', dbImage: 'registry.example.org/uyuni/server-postgresql',
      imageTag: '2026.08', tlsMode: 'generated', product: 'uyuni', release: '2026.08', pgVersion: '15',
    });
    expect(b.out).toMatch(/claim 1\/4 var-spacewalk: [0-9.]+ KiB in \d+s \([0-9.]+ MiB\/s\), sha256 [0-9a-f]{64}/);
    expect(b.out).toContain('claim 4/4 var-pgsql18');
    expect(b.out).not.toContain('db-pass-91c2');
    // The claims were only read.
    expect(Object.fromEntries(CLAIMS.map((c) => [c, listing(path.join(b.claims, c))]))).toEqual(b.before);

    // Into fresh claims and a fresh namespace.
    await sim.stop();
    sim = await startSimulator();
    sim.put({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
    const target = emptyClaims(temp('uyuni-cdk-restore-'));
    const r = await runScript('restore.sh', restoreEnv(target, b.backups));
    expect(r.out).toContain(`restored_id=${b.id}`);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/claim 4\/4 var-pgsql18: /);
    for (const c of CLAIMS) expect(listing(path.join(target, c))).toEqual(b.before[c].filter((l) => !l.startsWith('lost+found')));
    const secret = sim.get('v1', 'Secret', 'db-credentials', NS);
    expect(secret?.type).toBe('kubernetes.io/basic-auth');
    expect(Buffer.from(secret?.data?.password ?? '', 'base64').toString()).toBe('db-pass-91c2');
    expect(secret?.metadata?.annotations?.['cert-manager.io/issuer-name']).toBe('uyuni-root-issuer');
    expect(secret?.metadata?.labels).toMatchObject(JSON.parse(LABELS));
    expect(Buffer.from(sim.get('v1', 'Secret', 'uyuni-ca', NS)?.data?.['tls.key'] ?? '', 'base64').toString()).toBe('CA KEY');

    // The restored cluster starts and holds the same rows.
    const sock = temp('uyuni-cdk-pgsock-');
    fs.chownSync(sock, uidOf('postgres'), 0);
    pgStart(path.join(target, 'var-pgsql18'), sock);
    expect(psql(sock, ROWS)).toBe(b.rows);
    expect(psql(sock, 'SELECT count(*) FROM rhnserver')).toBe('5000\n');
    pgStop(path.join(target, 'var-pgsql18'));

    // Again over the data: refused without force, every claim as it was; with force, replaced.
    const restored = listing(path.join(target, 'var-spacewalk'));
    fs.writeFileSync(path.join(target, 'var-spacewalk', 'written-since'), 'new');
    const refused = await runScript('restore.sh', restoreEnv(target, b.backups));
    expect(refused.code).toBe(1);
    expect(refused.out).toMatch(/these claims hold data: var-spacewalk etc-rhn srv-www var-pgsql18: .*set restore.force: true.*nothing was written/);
    expect(fs.existsSync(path.join(target, 'var-spacewalk', 'written-since'))).toBe(true);
    const forced = await runScript('restore.sh', restoreEnv(target, b.backups, { FORCE: 'true' }));
    expect(forced.code).toBe(0);
    expect(listing(path.join(target, 'var-spacewalk'))).toEqual(restored);
  }, 120_000);

  it('refuses a changed Secret without force, before any claim is written', async () => {
    const b = await aBackup();
    sim.put(secretOf('db-credentials', { username: 'spacewalk', password: 'another' }, 'kubernetes.io/basic-auth'));
    const target = emptyClaims(temp('uyuni-cdk-restore-'));
    const r = await runScript('restore.sh', restoreEnv(target, b.backups));
    expect(r.code).toBe(1);
    expect(r.out).toContain('Secret db-credentials exists with other values than the backup\'s');
    for (const c of CLAIMS) expect(fs.readdirSync(path.join(target, c))).toEqual([]);
  }, 60_000);
});

describe('bad backups are refused before anything is written', () => {
  it.each([
    ['a tampered archive', (dir: string) => {
      const f = path.join(dir, 'claims', 'etc-rhn.tar');
      const buf = fs.readFileSync(f);
      buf[600] ^= 0xff;
      fs.writeFileSync(f, buf);
    }, /claims\/etc-rhn.tar does not match its sha256 in the manifest: the backup was changed or damaged: refused/],
    ['a truncated manifest', (dir: string) => {
      const f = path.join(dir, 'manifest.json');
      fs.truncateSync(f, fs.statSync(f).size - 30);
    }, /manifest.json is truncated or incomplete/],
    ['a shortened archive', (dir: string) => {
      fs.truncateSync(path.join(dir, 'claims', 'srv-www.tar'), 1024);
    }, /claims\/srv-www.tar has 1024 bytes, the manifest says \d+: the backup was changed or damaged/],
    ['no manifest (an unfinished copy)', (dir: string) => {
      fs.rmSync(path.join(dir, 'manifest.json'));
    }, /no manifest.json: the copy did not finish/],
  ])('%s', async (_what, spoil, message) => {
    const b = await aBackup();
    spoil(b.dir);
    const target = emptyClaims(temp('uyuni-cdk-restore-'));
    for (const script of ['restore.sh', 'restore-check.sh']) {
      const r = await runScript(script, restoreEnv(target, b.backups));
      expect(r.code).toBe(1);
      expect(r.out).toMatch(message);
    }
    for (const c of CLAIMS) expect(fs.readdirSync(path.join(target, c))).toEqual([]);
    expect(sim.list('v1', 'Secret', NS).filter((s: any) => s.metadata.name === 'uyuni-ca')).toHaveLength(1); // only the one put there
  }, 60_000);

  /**
   * Runs a script inlined as its Job runs it, in a mount namespace where `small` is a tmpfs of
   * `kib` KiB; asynchronously, as the in-process simulator must keep answering its requests.
   */
  /** `record`: the record uyuni-backup-record left on the (small) backup claim. */
  function inSmallClaim(script: string, small: string, kib: number, env: Record<string, string>, record?: object): Promise<{ status: number; stdout: string; stderr: string }> {
    return new Promise((resolve) => {
      const child = spawn('unshare', ['-m', '--propagation', 'private', 'sh', '-c',
        `mount -t tmpfs -o size=${kib}k uyuni-cdk-test "$SMALL" && { [ -z "$RECORD" ] || printf '%s' "$RECORD" >"$SMALL/.record.json"; } && exec sh -c "$SCRIPT"`], {
        env: { PATH: process.env.PATH!, ...env, SMALL: small, SCRIPT: readScript(script), RECORD: record ? JSON.stringify(record) : '' },
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d) => { stdout += d; });
      child.stderr.on('data', (d) => { stderr += d; });
      const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
      child.on('close', (code) => {
        clearTimeout(timer);
        resolve({ status: code ?? -1, stdout, stderr });
      });
    });
  }

  it('a target claim too small for its archive: refused, naming the claim, nothing written', async () => {
    const b = await aBackup();
    const target = emptyClaims(temp('uyuni-cdk-restore-'));
    // The database claim has room for a few KiB only; the check runs before any claim is written.
    const r = await inSmallClaim('restore.sh', path.join(target, 'var-spacewalk'), 64, { ...restoreEnv(target, b.backups), API_URL: 'http://127.0.0.1:9' });
    expect(r.stderr).toMatch(/claim var-spacewalk is too small: the backup needs [0-9.]+ KiB there, it has 64.0 KiB free: give volumes.overrides.var-spacewalk.size more; nothing was written/);
    expect(r.status).toBe(1);
    for (const c of CLAIMS) expect(fs.readdirSync(path.join(target, c))).toEqual([]);
  }, 60_000);

  it('a full backup claim: refused before writing, and the Job still completes (backup_ok=false) so the server is started again', async () => {
    const root = temp('uyuni-cdk-backup-');
    const { claims } = server(root);
    pgStop(path.join(claims, 'var-pgsql18'));
    const backups = path.join(root, 'backups');
    fs.mkdirSync(backups);
    const r = await inSmallClaim('backup.sh', backups, 256, backupEnv(claims, backups), PENDING_RECORD);
    expect(r.status).toBe(0);
    const facts = parseFacts(r.stdout);
    expect(facts.backup_ok).toBe('false');
    // 256 KiB less the page the record left there
    expect(facts.backup_error).toMatch(/^the backup claim is full: it has 252.0 KiB free, this backup needs about [0-9.]+ MiB: give backup.size more/);
  }, 60_000);

  it('a database that is still running (postmaster.pid): nothing is copied', async () => {
    const root = temp('uyuni-cdk-backup-');
    const { claims } = server(root);
    const backups = path.join(root, 'backups');
    fs.mkdirSync(backups);
    pendingRecord(backups);
    const r = await runScript('backup.sh', backupEnv(claims, backups));
    pgStop(path.join(claims, 'var-pgsql18'));
    expect(r.code).toBe(0);
    expect(parseFacts(r.out)).toMatchObject({ backup_ok: 'false' });
    expect(parseFacts(r.out).backup_error).toMatch(/did not shut down cleanly \(postmaster.pid is there\)/);
    expect(fs.readdirSync(backups)).toEqual(['.record.json']);
  }, 60_000);

  it('waits for the server\'s pods to be gone, and copies nothing while one is left', async () => {
    const root = temp('uyuni-cdk-backup-');
    const { claims } = server(root);
    pgStop(path.join(claims, 'var-pgsql18'));
    const backups = path.join(root, 'backups');
    fs.mkdirSync(backups);
    sim.put({
      apiVersion: 'v1', kind: 'Pod',
      metadata: { name: 'uyuni-7d9f-x2k4p', namespace: NS, labels: { 'app.kubernetes.io/part-of': 'uyuni', 'app.kubernetes.io/component': 'server' } },
      spec: { containers: [{ name: 'uyuni', image: 'x' }] },
    });
    pendingRecord(backups);
    const r = await runScript('backup.sh', backupEnv(claims, backups, { STOP_WAIT_SECONDS: '0' }));
    expect(parseFacts(r.out).backup_error).toMatch(/1 pods of the server are still there after 0s/);
    expect(fs.readdirSync(backups)).toEqual(['.record.json']);
  }, 60_000);
});

describe('wait-stopped.sh (Jobs uyuni-stop-server and uyuni-stop-db)', () => {
  const pod = (name: string, component: string) => ({
    apiVersion: 'v1', kind: 'Pod',
    metadata: { name, namespace: NS, labels: { 'app.kubernetes.io/part-of': 'uyuni', 'app.kubernetes.io/component': component } },
    spec: { containers: [{ name: 'c', image: 'x' }] },
  });
  const env = (selector: string) => ({
    NAMESPACE: NS, POD_SELECTOR: selector, STOP_WAIT_SECONDS: '0', API_URL: sim.url, SA_DIR: serviceAccountDir(),
  });

  const server = 'app.kubernetes.io/part-of=uyuni,app.kubernetes.io/component in (server,hub-xmlrpc,coco,tftp)';
  const db = 'app.kubernetes.io/part-of=uyuni,app.kubernetes.io/component=db';

  it('the server\'s stop ends while the database still runs; the database\'s waits for its pod', async () => {
    sim.put(pod('db-5c8b-q7w2z', 'db'));
    const gone = await runScript('wait-stopped.sh', env(server));
    expect([gone.code, gone.out]).toEqual([0, expect.stringContaining('no pod of')]);
    const left = await runScript('wait-stopped.sh', env(db));
    expect(left.code).toBe(1);
    expect(left.out).toMatch(/1 pods of the server are still there after 0s/);
  }, 60_000);

  it('counts a terminating pod (a Deployment scaled to 0 no longer does)', async () => {
    const p = pod('uyuni-7d9f-x2k4p', 'server');
    sim.put({ ...p, metadata: { ...p.metadata, deletionTimestamp: '2026-12-02T17:00:00Z', finalizers: ['kubernetes'] } });
    const left = await runScript('wait-stopped.sh', env(server));
    expect(left.code).toBe(1);
  }, 60_000);
});

describe('backup-prune.sh', () => {
  it('verifies the newest backup, keeps KEEP, removes unfinished copies, and prints the list for status', async () => {
    const b = await aBackup();
    for (const old of ['20250101T000000Z', '20250102T000000Z']) fs.cpSync(b.dir, path.join(b.backups, old), { recursive: true });
    fs.mkdirSync(path.join(b.backups, '20250103T000000Z.part'));
    const r = await runScript('backup-prune.sh', { BACKUP_DIR: b.backups, KEEP: '2' });
    expect(r.code).toBe(0);
    expect(fs.readdirSync(b.backups).sort()).toEqual(['20250102T000000Z', b.id, `${b.id}.verified`].sort());
    const facts = parseFacts(r.out);
    expect(facts.backups).toBe('2');
    expect(facts['backup.1']).toMatch(new RegExp(`^${b.id} \\d{4}-\\d\\d-\\d\\dT\\S+Z \\d+ verified$`));
    expect(facts['backup.2']).toMatch(/^20250102T000000Z \S+ \d+ unverified$/);
  }, 60_000);

  it('removes nothing when the newest backup does not verify', async () => {
    const b = await aBackup();
    fs.cpSync(b.dir, path.join(b.backups, '20250101T000000Z'), { recursive: true });
    fs.appendFileSync(path.join(b.dir, 'claims', 'srv-www.tar'), 'x');
    const r = await runScript('backup-prune.sh', { BACKUP_DIR: b.backups, KEEP: '1' });
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/srv-www.tar has \d+ bytes, the manifest says/);
    expect(fs.readdirSync(b.backups).sort()).toEqual(['20250101T000000Z', b.id].sort());
  }, 60_000);
});

describe('the record of what a backup is taken with (lib/backup-record.sh)', () => {
  it('holds each pod\'s image and imageID as the API reported them, the configuration and the identity; the manifest lists it', async () => {
    const b = await aBackup();
    const record = JSON.parse(fs.readFileSync(path.join(b.dir, BACKUP_RECORD_FILE), 'utf8')) as BackupRecord;
    expect(record).toMatchObject({
      format: BACKUP_RECORD_FORMAT, namespace: NS, configuration: CONFIGURATION, planIdentity: JSON.parse(IDENTITY),
      pods: [{ pod: 'uyuni-7d9f-x2k4p', component: 'server', phase: 'Running', containers: [{ name: 'uyuni', image: SERVER_IMAGE, imageID: SERVER_IMAGE_ID }] }],
    });
    expect(record.takenAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    const manifest = JSON.parse(fs.readFileSync(path.join(b.dir, 'manifest.json'), 'utf8'));
    const bytes = fs.readFileSync(path.join(b.dir, BACKUP_RECORD_FILE));
    expect(manifest.record).toEqual([{ name: 'record', file: BACKUP_RECORD_FILE, bytes: bytes.length, disk: 0, sha256: crypto.createHash('sha256').update(bytes).digest('hex') }]);
    // Moved into the backup: the next backup needs its own.
    expect(fs.existsSync(path.join(b.backups, '.record.json'))).toBe(false);
  }, 60_000);

  it('no backup without its record: backup.sh copies nothing, says why, and the Job completes for the server to start again', async () => {
    const root = temp('uyuni-cdk-backup-');
    const { claims } = server(root);
    pgStop(path.join(claims, 'var-pgsql18'));
    const backups = path.join(root, 'backups');
    fs.mkdirSync(backups);
    const r = await runScript('backup.sh', backupEnv(claims, backups));
    expect(r.code).toBe(0);
    expect(parseFacts(r.out)).toMatchObject({ backup_ok: 'false' });
    expect(parseFacts(r.out).backup_error).toMatch(/no record of what this backup is taken with .*Job uyuni-backup-record writes it before the server stops; nothing was copied/);
    expect(fs.readdirSync(backups)).toEqual([]);
  }, 60_000);

  it('a damaged identity record fails the record Job: no backup is taken with it', async () => {
    const backups = temp('uyuni-cdk-backups-');
    const r = await runScript('backup-record.sh', recordEnv(backups, await podsApi([serverPod(SERVER_IMAGE_ID)], { identity: '{"fqdn": "uyuni.exa' })));
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/identity \(ConfigMap uyuni-cdk-history key identity\) is damaged: uyuni-cdk repair-record/);
    expect(fs.readdirSync(backups)).toEqual([]);
  }, 60_000);

  it('restore-check: the recorded image pinned by digest and the same configuration pass', async () => {
    const b = await aBackup();
    const r = await runScript('restore-check.sh', checkEnv(b.backups, {}, { ...CONFIGURATION, namespace: 'elsewhere', restore: { from: 'latest' } }));
    expect(r.code).toBe(0);
    const facts = parseFacts(r.out);
    expect(facts).toMatchObject({ backup_record: 'present', record_images_pinned: 'true', record_config_same: 'true', record_ok: 'true' });
    expect(facts['record_image.server']).toBe(`${SERVER_IMAGE} ${SERVER_IMAGE_ID}`);
    expect(facts['restore_image.server']).toBe(`registry.example.org/uyuni/server@${DIGEST}`);
    expect(facts.record_identity).toBe('uyuni.example.com registry.example.org/uyuni/server:2026.08 tls generated (plan install, run r-1)');
    expect(facts.record_refusal).toBeUndefined();
  }, 60_000);

  it('restore-check: another image configured: the recorded one runs, by digest, unless allowNewerImages; another configuration is refused unless allowConfigChanges', async () => {
    const b = await aBackup();
    const newer = { ...CONFIGURATION, images: { ...CONFIGURATION.images, tag: '2026.10' }, hubApi: { replicas: 2 } };
    const env = (more: Record<string, string>) => checkEnv(b.backups, more, newer, 'registry.example.org/uyuni/server:2026.10');
    const r = await runScript('restore-check.sh', env({}));
    expect(r.code).toBe(0);
    const facts = parseFacts(r.out);
    expect(facts['record_image_diff.1']).toBe(`server: recorded registry.example.org/uyuni/server@${DIGEST} (${SERVER_IMAGE}), configured registry.example.org/uyuni/server:2026.10: runs the recorded one`);
    expect(facts['record_config_diff.1']).toBe('hubApi.replicas: 0 -> 2');
    expect(facts['record_config_diff.2']).toBe('images.tag: "2026.08" -> "2026.10"');
    expect(facts['record_config_diff.3']).toBeUndefined();
    expect(facts.record_images_pinned).toBe('true');
    expect(facts.record_ok).toBe('false');
    expect(facts.record_refusal).toMatch(/^this configuration differs from the one the backup was taken with \(2 differences: .*restore.allowConfigChanges: true$/);
    expect(facts['restore_image.server']).toBeUndefined();
    const config = parseFacts((await runScript('restore-check.sh', env({ ALLOW_CONFIG_CHANGES: 'true' }))).out);
    expect([config.record_ok, config['restore_image.server']]).toEqual(['true', `registry.example.org/uyuni/server@${DIGEST}`]);
    const both = parseFacts((await runScript('restore-check.sh', env({ ALLOW_NEWER_IMAGES: 'true', ALLOW_CONFIG_CHANGES: 'true' }))).out);
    expect([both.record_ok, both.record_images_pinned, both['restore_image.server']]).toEqual(['true', 'false', 'registry.example.org/uyuni/server:2026.10']);
    expect(both['record_image_diff.1']).toMatch(/runs the configured one \(restore.allowNewerImages\)$/);
    // The recorded digest pinned in the configuration, from a mirror: that one runs, no flag needed.
    const mirror = `mirror.example.org/uyuni/server@${DIGEST}`;
    const mirrored = parseFacts((await runScript('restore-check.sh', checkEnv(b.backups, {}, CONFIGURATION, mirror))).out);
    expect([mirrored.record_ok, mirrored['restore_image.server']]).toEqual(['true', mirror]);
    expect(mirrored['record_image_diff.1']).toBe(`server: recorded registry.example.org/uyuni/server@${DIGEST}, configured ${mirror}: the same digest, runs the configured one`);
  }, 60_000);

  it('restore-check: an image the node ran without a registry digest cannot be pinned: refused unless allowNewerImages', async () => {
    const root = temp('uyuni-cdk-backup-');
    const { claims } = server(root);
    pgStop(path.join(claims, 'var-pgsql18'));
    const backups = path.join(root, 'backups');
    fs.mkdirSync(backups);
    // what the test plane's fake kubelet reports (test/cluster/plane/kubelet.ts); no identity recorded yet
    const api = await podsApi([serverPod('fake://registry.example.org/uyuni/server:2026.08')]);
    expect((await runScript('backup-record.sh', recordEnv(backups, api))).code).toBe(0);
    expect(parseFacts((await runScript('backup.sh', backupEnv(claims, backups))).out).backup_ok).toBe('true');
    const facts = parseFacts((await runScript('restore-check.sh', checkEnv(backups))).out);
    expect(facts.record_ok).toBe('false');
    expect(facts['record_image_diff.1']).toMatch(/without a registry digest \(imageID fake:\/\/.*\): it cannot be pinned/);
    expect(facts.record_refusal).toMatch(/cannot all be pinned .*set restore.allowNewerImages: true/);
    const newer = parseFacts((await runScript('restore-check.sh', checkEnv(backups, { ALLOW_NEWER_IMAGES: 'true' }))).out);
    expect([newer.record_ok, newer['restore_image.server']]).toEqual(['true', `registry.example.org/uyuni/server@${DIGEST}`]);
  }, 60_000);

  it('restore-check: a backup without a record (made before) is refused unless allowMissingRecord; a damaged one always', async () => {
    const b = await aBackup();
    // An older backup: no record, its manifest without the record section.
    const old = path.join(b.backups, '20250101T000000Z');
    fs.cpSync(b.dir, old, { recursive: true });
    fs.rmSync(path.join(old, BACKUP_RECORD_FILE));
    const m = fs.readFileSync(path.join(old, 'manifest.json'), 'utf8').replace(/  "record": \[\n[^\n]*\n  \],\n/, '').replace(b.id, '20250101T000000Z');
    expect(m).not.toContain('"record"');
    fs.writeFileSync(path.join(old, 'manifest.json'), m);
    const missing = await runScript('restore-check.sh', checkEnv(b.backups, { FROM: '20250101T000000Z' }));
    expect(missing.code).toBe(0);
    expect(parseFacts(missing.out)).toMatchObject({ backup_record: 'missing', record_ok: 'false' });
    expect(parseFacts(missing.out).record_refusal).toMatch(/has no record of the images and configuration it was taken with .*set restore.allowMissingRecord: true/);
    const allowed = await runScript('restore-check.sh', checkEnv(b.backups, { FROM: '20250101T000000Z', ALLOW_MISSING_RECORD: 'true' }));
    expect(parseFacts(allowed.out)).toMatchObject({ backup_record: 'missing', record_ok: 'true', 'restore_image.server': `registry.example.org/uyuni/server@${DIGEST}` });
    expect(parseFacts(missing.out)['restore_image.server']).toBeUndefined();

    // Damaged: a record the manifest does not list, or one that is not a record (its checksum made to match).
    fs.writeFileSync(path.join(old, BACKUP_RECORD_FILE), '{}');
    const unlisted = await runScript('restore-check.sh', checkEnv(b.backups, { FROM: '20250101T000000Z', ALLOW_MISSING_RECORD: 'true' }));
    expect(unlisted.code).toBe(1);
    expect(unlisted.out).toMatch(/record.json is there but its manifest does not list it: .*refused/);
    expect(parseFacts(unlisted.out).record_ok).toBeUndefined();
    const text = '{"format": 2}\n';
    fs.writeFileSync(path.join(b.dir, BACKUP_RECORD_FILE), text);
    const mf = path.join(b.dir, 'manifest.json');
    fs.writeFileSync(mf, fs.readFileSync(mf, 'utf8').replace(/("name": "record", "file": "record.json", "bytes": )\d+(, "disk": 0, "sha256": ")[0-9a-f]{64}/,
      `$1${text.length}$2${crypto.createHash('sha256').update(text).digest('hex')}`));
    const damaged = await runScript('restore-check.sh', checkEnv(b.backups, { ALLOW_MISSING_RECORD: 'true', ALLOW_NEWER_IMAGES: 'true', ALLOW_CONFIG_CHANGES: 'true' }));
    expect(damaged.code).toBe(1);
    expect(damaged.out).toMatch(/record.json is damaged: not a record of format 1 .*refused/);
    expect(parseFacts(damaged.out).record_ok).toBeUndefined();
    // A changed record fails the backup's verification, as any file of it.
    fs.appendFileSync(path.join(b.dir, BACKUP_RECORD_FILE), ' ');
    const changed = await runScript('restore-check.sh', checkEnv(b.backups));
    expect(changed.code).toBe(1);
    expect(changed.out).toMatch(/record.json has \d+ bytes, the manifest says \d+: the backup was changed or damaged: refused/);
  }, 60_000);
});
