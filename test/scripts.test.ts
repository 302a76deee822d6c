import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { readScript, SCRIPTS_DIR } from '../src/constructs/script-job';
import { parseFacts } from '../src/runtime/core/facts';
import {
  IMAGE_TREE, localSshBin, OLD_RHN_CONF, OLD_SECRETS, oldServer, sourceHost, writeTree,
} from './helpers/sshd';

// Not the synth helper's tempDir: these tests must not load the synthesis code.
const tempDir = (prefix: string) => fs.mkdtempSync(path.join(os.tmpdir(), prefix));

const ALL = fs.readdirSync(SCRIPTS_DIR).filter((f) => f.endsWith('.sh')).sort();
/** Shared pieces (src/scripts/lib/) that scripts include; synth inlines them. */
const LIBS = fs.readdirSync(path.join(SCRIPTS_DIR, 'lib')).filter((f) => f.endsWith('.sh')).sort();

/** The comment block a script opens with: what it does and its Input env vars. */
function header(text: string): string {
  return text.slice(0, text.search(/^set -eu$/m));
}

/** The upper-case variables a script reads and does not set itself: its env contract. */
function envRead(text: string): string[] {
  const body = text.slice(text.search(/^set -eu$/m)).split('\n').filter((l) => !/^\s*#/.test(l)).join('\n');
  const assigned = new Set([...body.matchAll(/^\s*([A-Z][A-Z0-9_]*)=/gm)].map((m) => m[1]));
  const read = new Set([...body.matchAll(/\$\{?([A-Z][A-Z0-9_]*)/g)].map((m) => m[1]));
  return [...read].filter((v) => !assigned.has(v) && v !== 'PATH').sort();
}

describe('every step script', () => {
  it('is there: the foundation\'s and the migration\'s, and the replaced ones are gone', () => {
    expect(ALL).toEqual(['backup-prune.sh', 'backup-record.sh', 'backup.sh', 'ca-bundle.sh', 'create-credentials.sh', 'data-sync.sh', 'db-archive-status.sh', 'db-archiving.sh', 'db-basebackup.sh', 'db-data-dir.sh', 'db-finalize.sh', 'db-migrate.sh', 'db-pitr-restore.sh', 'db-pods-cidr.sh', 'db-recovery-wait.sh', 'db-stop.sh', 'db-waiter.sh', 'import-secrets.sh',
      'init-volumes.sh', 'inspect-db.sh', 'inspect.sh', 'proxy-init-httpd.sh', 'proxy-init-sshd.sh', 'restore-check.sh', 'restore.sh', 'setup-marker.sh', 'wait-stopped.sh']);
  });

  it.each(ALL)('%s parses with sh -n', (file) => {
    const r = spawnSync('sh', ['-n', path.join(SCRIPTS_DIR, file)], { encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
  });

  it.each([...ALL, ...LIBS.map((l) => `lib/${l}`)])('%s passes shellcheck -s sh (following its includes)', (file) => {
    const r = spawnSync('shellcheck', ['-s', 'sh', '-x', '-f', 'gcc', path.join(SCRIPTS_DIR, file)], { encoding: 'utf8' });
    if (r.error) throw new Error(`shellcheck is not installed (Debian package shellcheck): ${r.error.message}`);
    expect(r.stdout).toBe('');
    expect(r.status).toBe(0);
  });

  it.each(ALL)('%s stops on the first error and holds no template placeholders', (file) => {
    const text = readScript(file);
    expect(text).toMatch(/^set -eu$/m);
    expect(text).not.toMatch(/\{\{|\}\}|<%|%>/);
    expect(text).not.toMatch(/example\.com|registry\.opensuse\.org/);
  });

  it.each(ALL)('%s says what it does and names every env var it reads in its header', (file) => {
    const text = readScript(file);
    const head = header(text);
    expect(head.split('\n').filter((l) => l !== '').every((l) => l.startsWith('#'))).toBe(true);
    expect(head).toMatch(/^# [a-z-]+: /);
    expect(head).toMatch(/# +Input: /);
    const named = (v: string) => new RegExp(`(^|[^A-Z0-9_])${v}([^A-Z0-9_]|$)`, 'm').test(head);
    expect(envRead(text).filter((v) => !named(v))).toEqual([]);
  });
});

/** Runs a step script for real with only the given environment (and PATH). */
function run(script: string, env: Record<string, string | undefined>, bin?: string) {
  const clean = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined)) as Record<string, string>;
  return spawnSync('sh', ['-c', readScript(script)], {
    encoding: 'utf8',
    env: { PATH: bin ? `${bin}:${process.env.PATH}` : process.env.PATH!, ...clean },
  });
}

/** A directory of fake commands (executable sh scripts). */
function binWith(dir: string, commands: Record<string, string>): string {
  const bin = path.join(dir, 'fake-bin');
  fs.mkdirSync(bin, { recursive: true });
  for (const [name, text] of Object.entries(commands)) fs.writeFileSync(path.join(bin, name), text, { mode: 0o755 });
  return bin;
}

function put(file: string, text: string, mode?: number) {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
  if (mode !== undefined) fs.chmodSync(file, mode);
}

const modeOf = (p: string) => fs.statSync(p).mode & 0o7777;
const isRoot = process.getuid?.() === 0;

describe('init-volumes.sh, run over an "image" and its claims in a temp dir', () => {
  /** The image's paths live in <dir>/image, the claims are mounted at <dir>/mnt<path>. */
  function scene() {
    const dir = tempDir('uyuni-cdk-init-');
    const img = path.join(dir, 'image');
    const mnt = path.join(dir, 'mnt');
    const rhn = path.join(img, 'etc/rhn');
    const spacewalk = path.join(img, 'var/spacewalk');
    const www = path.join(img, 'srv/www');
    put(path.join(rhn, 'rhn.conf'), 'from the image\n');
    put(path.join(spacewalk, 'packages/from-image'), 'image');
    put(path.join(www, 'htdocs/index.html'), 'hi');
    fs.chmodSync(rhn, 0o750);
    fs.chmodSync(spacewalk, 0o775);
    for (const p of [rhn, spacewalk, www]) fs.mkdirSync(mnt + p, { recursive: true });
    fs.chmodSync(mnt + rhn, 0o777);
    fs.chmodSync(mnt + spacewalk, 0o700);
    put(path.join(img, 'etc/uyuni-release'), 'Uyuni release 2026.01\n');
    return { dir, img, mnt, rhn, spacewalk, www, missing: path.join(img, 'srv/missing') };
  }
  const go = (s: ReturnType<typeof scene>, env: Record<string, string | undefined> = {}) => run('init-volumes.sh', {
    VOLUME_PATHS: [s.rhn, s.spacewalk, `${s.www}/`, s.missing].join(' '),
    RELEASE_DIR: path.join(s.rhn, 'uyuni-cdk'),
    MNT: s.mnt,
    IMAGE_ETC: path.join(s.img, 'etc'),
    ...env,
  });

  it('copies the image\'s content into empty claims, keeps full ones, skips paths the image lacks', () => {
    const s = scene();
    put(path.join(s.mnt + s.spacewalk, 'packages/old.rpm'), 'old');
    const r = go(s);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(fs.readFileSync(path.join(s.mnt + s.rhn, 'rhn.conf'), 'utf8')).toBe('from the image\n');
    expect(fs.readFileSync(path.join(s.mnt + s.www, 'htdocs/index.html'), 'utf8')).toBe('hi');
    expect(fs.readFileSync(path.join(s.mnt + s.spacewalk, 'packages/old.rpm'), 'utf8')).toBe('old');
    expect(fs.existsSync(path.join(s.mnt + s.spacewalk, 'packages/from-image'))).toBe(false);
    expect(fs.existsSync(s.mnt + s.missing)).toBe(false);
    expect(r.stdout).toContain(`init-volumes: ${s.rhn}: empty, copying the image's content`);
    expect(r.stdout).toContain(`init-volumes: ${s.spacewalk}: has data, kept`);
    expect(r.stdout).toContain(`init-volumes: ${s.www}: empty, copying the image's content`);
    expect(r.stdout).toContain(`init-volumes: ${s.missing}: not in the image, left empty`);
  });

  it('seeds a new ext4 claim that holds nothing but lost+found, and keeps that lost+found', () => {
    const s = scene();
    fs.mkdirSync(path.join(s.mnt + s.rhn, 'lost+found'), { mode: 0o700 });
    fs.mkdirSync(path.join(s.mnt + s.spacewalk, 'lost+found'), { mode: 0o700 });
    put(path.join(s.mnt + s.spacewalk, 'packages/old.rpm'), 'old');
    const r = go(s);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain(`init-volumes: ${s.rhn}: empty, copying the image's content`);
    expect(fs.readFileSync(path.join(s.mnt + s.rhn, 'rhn.conf'), 'utf8')).toBe('from the image\n');
    expect(fs.statSync(path.join(s.mnt + s.rhn, 'lost+found')).isDirectory()).toBe(true);
    expect(r.stdout).toContain(`init-volumes: ${s.spacewalk}: has data, kept`);
    expect(fs.existsSync(path.join(s.mnt + s.spacewalk, 'packages/from-image'))).toBe(false);
  });

  it('gives every claim the mode (and owner) of its path in the image, also a full one', () => {
    const s = scene();
    put(path.join(s.mnt + s.spacewalk, 'old'), 'old');
    if (isRoot) fs.chownSync(s.spacewalk, 1234, 2345);
    expect(go(s).status).toBe(0);
    expect(modeOf(s.mnt + s.rhn)).toBe(0o750);
    expect(modeOf(s.mnt + s.spacewalk)).toBe(0o775);
    if (isRoot) {
      expect(fs.statSync(s.mnt + s.spacewalk).uid).toBe(1234);
      expect(fs.statSync(s.mnt + s.spacewalk).gid).toBe(2345);
    }
  });

  it('records the image\'s release in RELEASE_DIR after filling the claim it lies on', () => {
    const s = scene();
    const r = go(s);
    expect(r.status).toBe(0);
    const record = path.join(s.mnt + s.rhn, 'uyuni-cdk');
    expect(fs.readdirSync(record)).toEqual(['uyuni-release']);
    expect(fs.readFileSync(path.join(record, 'uyuni-release'), 'utf8')).toBe('Uyuni release 2026.01\n');
    expect(r.stdout).toContain('init-volumes: the data now runs: Uyuni release 2026.01');
  });

  it('replaces the other product\'s release file the data last ran', () => {
    const s = scene();
    const record = path.join(s.mnt + s.rhn, 'uyuni-cdk');
    put(path.join(record, 'susemanager-release'), 'SUSE Manager release 5.0 (5.0.3)\n');
    put(path.join(s.mnt + s.rhn, 'rhn.conf'), 'the data\'s\n');
    expect(go(s).status).toBe(0);
    expect(fs.readdirSync(record)).toEqual(['uyuni-release']);
    expect(fs.readFileSync(path.join(s.mnt + s.rhn, 'rhn.conf'), 'utf8')).toBe('the data\'s\n');

    const suse = scene();
    fs.rmSync(path.join(suse.img, 'etc/uyuni-release'));
    put(path.join(suse.img, 'etc/susemanager-release'), 'SUSE Multi-Linux Manager release 5.1 (5.1.0)\n');
    put(path.join(suse.mnt + suse.rhn, 'uyuni-cdk/uyuni-release'), 'Uyuni release 2025.10\n');
    expect(go(suse).status).toBe(0);
    expect(fs.readdirSync(path.join(suse.mnt + suse.rhn, 'uyuni-cdk'))).toEqual(['susemanager-release']);
  });

  it('fails when the image has no release file, or a claim is not mounted', () => {
    const s = scene();
    fs.rmSync(path.join(s.img, 'etc/uyuni-release'));
    const r = go(s);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('the image has no');
    const t = scene();
    fs.rmSync(t.mnt + t.www, { recursive: true });
    const u = go(t);
    expect(u.status).toBe(1);
    expect(u.stderr).toContain(`init-volumes: ${t.www}: its claim is not mounted at ${t.mnt}${t.www}`);
  });
});

describe('db-waiter.sh, with a fake pg_isready that fails twice per database', () => {
  function waiter(env: Record<string, string | undefined> = {}) {
    const dir = tempDir('uyuni-cdk-waiter-');
    const log = path.join(dir, 'log');
    fs.writeFileSync(log, '');
    const bin = binWith(dir, {
      pg_isready: `#!/bin/sh
echo "pg_isready $*" >>"$FAKE_LOG"
while [ $# -gt 0 ]; do case $1 in -h) host=$2; shift ;; esac; shift; done
n=$(cat "$FAKE_DIR/tries-$host" 2>/dev/null || echo 0)
n=$((n + 1))
echo "$n" >"$FAKE_DIR/tries-$host"
[ "$n" -gt 2 ] || { echo "$host:5432 - no response"; exit 2; }
echo "$host:5432 - accepting connections"
`,
      sleep: '#!/bin/sh\necho "sleep $*" >>"$FAKE_LOG"\n',
    });
    const r = run('db-waiter.sh', {
      FAKE_LOG: log, FAKE_DIR: dir,
      MANAGER_USER: 'spacewalk', MANAGER_DB_HOST: 'db', MANAGER_DB_PORT: '5432', MANAGER_DB_NAME: 'susemanager',
      REPORT_DB_USER: 'pythia_susemanager', REPORT_DB_HOST: 'reportdb', REPORT_DB_PORT: '5433', REPORT_DB_NAME: 'reportdb',
      DB_WAIT_INTERVAL: '0',
      ...env,
    }, bin);
    return { ...r, log: fs.readFileSync(log, 'utf8').trimEnd().split('\n') };
  }

  it('waits for the product database, then for the report database, with their user, host, port and name', () => {
    const r = waiter();
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const db = 'pg_isready -U spacewalk -h db -p 5432 -d susemanager';
    const report = 'pg_isready -U pythia_susemanager -h reportdb -p 5433 -d reportdb';
    expect(r.log).toEqual([db, 'sleep 0', db, 'sleep 0', db, report, 'sleep 0', report, 'sleep 0', report]);
    expect(r.stdout.match(/^db-waiter: waiting for the product database \(susemanager at db:5432\)$/gm)).toHaveLength(2);
    expect(r.stdout.match(/^db-waiter: waiting for the report database \(reportdb at reportdb:5433\)$/gm)).toHaveLength(2);
    expect(r.stdout.indexOf('the product database (susemanager at db:5432) accepts connections'))
      .toBeLessThan(r.stdout.indexOf('waiting for the report database'));
  });

  it('sleeps 5 seconds between tries by default, and refuses an interval that is no number', () => {
    expect(waiter({ DB_WAIT_INTERVAL: undefined }).log).toContain('sleep 5');
    const bad = waiter({ DB_WAIT_INTERVAL: '5; reboot' });
    expect(bad.status).toBe(1);
    expect(bad.stderr).toContain('DB_WAIT_INTERVAL');
    expect(bad.log).toEqual(['']);
  });

  it('needs every connection value', () => {
    const r = waiter({ REPORT_DB_NAME: undefined });
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain('REPORT_DB_NAME');
  });
});

/** A sample of the server's claim paths, a nested one included, for the data sync. */
const SYNC_PATHS = [
  '/var/lib/pgsql', '/var/spacewalk', '/srv/www/', '/var/cache', '/var/lib/rhn/search', '/var/log',
  '/srv/tftpboot', '/etc/sysconfig', '/var/lib/cobbler', '/var/lib/salt', '/srv/salt', '/srv/pillar',
  '/srv/susemanager', '/etc/rhn', '/etc/apache2', '/etc/salt', '/etc/tomcat', '/etc/cobbler',
  '/etc/postfix', '/etc/sssd', '/etc/systemd/system/multi-user.target.wants', '/var/spacewalk/packages',
];

interface SyncRun { status: number | null; stdout: string; stderr: string; log: string[]; stubs: string[]; target: string; mig: string }

/**
 * Runs data-sync.sh for real against the fake old server of test/helpers/sshd.ts, reached
 * through a local stand-in for ssh (the same remote side as the real-sshd test,
 * test/data-sync.sshd.test.ts, without the daemon); the Job side's rsync is the real one.
 */
const syncDirs: string[] = [];
afterAll(() => {
  for (const d of syncDirs) fs.rmSync(d, { recursive: true, force: true });
});

function runDataSync(env: Record<string, string | undefined>, change: (s: ReturnType<typeof oldServer>) => void = () => {}): SyncRun {
  const dir = tempDir('uyuni-cdk-sync-');
  syncDirs.push(dir);
  const server = oldServer(dir);
  change(server);
  const host = sourceHost(dir, server);
  const log = path.join(dir, 'job.log');
  const bin = localSshBin(dir, host, log);
  const sshDir = path.join(dir, 'job-ssh');
  fs.mkdirSync(sshDir);
  const target = path.join(dir, 'target');
  const mig = path.join(dir, 'migration-data');
  fs.mkdirSync(mig);
  writeTree(path.join(dir, 'image'), IMAGE_TREE);
  const r = run('data-sync.sh', {
    SOURCE_FQDN: 'uyuni-old.test',
    SOURCE_USER: 'root',
    SOURCE_PORT: '22',
    VOLUME_PATHS: SYNC_PATHS.join(' '),
    TARGET_ROOT: target,
    OLD_PG_VERSION: '14',
    NEW_PG_VERSION: '18',
    MIGRATION_DIR: mig,
    SSH_DIR: sshDir,
    IMAGE_ROOT: path.join(dir, 'image'),
    ...env,
  }, bin);
  const lines = (f: string) => fs.readFileSync(f, 'utf8').split('\n').filter((l) => l !== '');
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, log: lines(log), stubs: host.stubLog(), target, mig };
}

const OLD_EXPORTER = 'uyuni-data-sync: warning: /etc/sysconfig/prometheus-postgres_exporter is of a too old monitoring setup: '
  + 'not migrated, enable monitoring again after the migration\n';

describe('data-sync.sh, run against a fake old server over a local stand-in for ssh, with the real rsync', () => {
  let sync: SyncRun;
  beforeAll(() => {
    sync = runDataSync({});
  }, 60_000);
  const rsyncs = () => sync.log.filter((l) => l.startsWith('rsync '));

  it('succeeds', () => {
    expect(sync.stderr).toBe(OLD_EXPORTER);
    expect(sync.status).toBe(0);
  });

  it('stops the services on the source before copying anything, after the distributions\' export', () => {
    const services = sync.stubs.filter((l) => /^(systemctl (start|stop)|spacewalk-service|psql) /.test(l)).map((l) => l.replace(/ -X.*/, ''));
    expect(services).toEqual(['spacewalk-service stop', 'systemctl start postgresql', 'psql', 'systemctl stop postgresql']);
    const firstRsync = sync.log.findIndex((l) => l.startsWith('rsync '));
    const stopped = sync.log.findIndex((l) => l.includes('\'systemctl\' \'stop\' \'postgresql\''));
    expect(stopped).toBeGreaterThan(-1);
    expect(stopped).toBeLessThan(firstRsync);
  });

  it('quotes every word of a remote command for the source\'s shell', () => {
    expect(sync.log).toContainEqual(expect.stringMatching(/ -- uyuni-old\.test 'sh' '-c' 'cd \/ && exec sudo -u postgres psql -X -q -d "\$1" -c "\$2"' 'sh' 'susemanager' 'COPY \(SELECT MIN\(CONCAT\(org_id,'\\''-'\\'',label\)\)/));
  });

  it('copies each claim path that exists on the source with rsync -avz over one multiplexed ssh, through sudo', () => {
    const claims = rsyncs().filter((l) => l.includes('--filter=merge '));
    expect(claims.map((l) => l.split(' ').at(-2))).toEqual([
      'root@uyuni-old.test:/var/lib/pgsql/', 'root@uyuni-old.test:/var/spacewalk/', 'root@uyuni-old.test:/srv/www/',
      'root@uyuni-old.test:/var/cache/', 'root@uyuni-old.test:/var/log/', 'root@uyuni-old.test:/srv/tftpboot/',
      'root@uyuni-old.test:/etc/sysconfig/', 'root@uyuni-old.test:/var/lib/cobbler/', 'root@uyuni-old.test:/srv/salt/',
      'root@uyuni-old.test:/srv/pillar/', 'root@uyuni-old.test:/etc/rhn/', 'root@uyuni-old.test:/etc/apache2/',
      'root@uyuni-old.test:/etc/salt/', 'root@uyuni-old.test:/etc/tomcat/', 'root@uyuni-old.test:/etc/cobbler/',
      'root@uyuni-old.test:/var/spacewalk/packages/',
    ]);
    for (const l of rsyncs()) {
      expect(l).toMatch(/^rsync -avz --itemize-changes /);
      expect(l).toContain(' --rsync-path=sudo rsync ');
      expect(l).toContain(`-e ssh -i ${path.dirname(sync.mig)}/job-ssh/key -p 22 -o BatchMode=yes -o StrictHostKeyChecking=yes `
        + `-o UserKnownHostsFile=${path.dirname(sync.mig)}/job-ssh/known_hosts -o ControlMaster=auto -o ControlPath=`);
    }
    expect(claims.filter((l) => l.includes(' -L ')).map((l) => l.split(' ').at(-2))).toEqual([
      'root@uyuni-old.test:/var/lib/pgsql/', 'root@uyuni-old.test:/var/spacewalk/', 'root@uyuni-old.test:/var/cache/',
    ]);
    expect(fs.readFileSync(path.join(sync.target, 'var/spacewalk/packages/1/a.rpm'), 'utf8')).toBe('rpm');
  });

  it('builds the filter rules per path: nested claims, old-host state, package files, distributions, the pre-upgrade database', () => {
    const rules = (p: string) => sync.log[sync.log.findIndex((l) => l.startsWith('rsync ') && l.includes(` root@uyuni-old.test:${p}/ `)) + 1];
    expect(rules('/var/lib/pgsql')).toBe('rules: - /lost+found;- /data/postmaster.pid;- /data/postmaster.opts;- /data-pg*;');
    expect(rules('/var/spacewalk')).toBe('rules: - /lost+found;- /packages;');
    expect(rules('/var/cache')).toBe('rules: - /lost+found;- /zypp/**;- /rhn/reposync/**;');
    expect(rules('/var/log')).toBe('rules: - /lost+found;- /journal;- /lastlog;');
    expect(rules('/etc/sysconfig')).toBe('rules: - /lost+found;- /tomcat;- /rhn/reportdb-schema-upgrade;- /rhn/schema-upgrade;- /prometheus-postgres_exporter;');
    expect(rules('/etc/rhn')).toBe('rules: - /lost+found;- /krb5.conf.d;- /packaged.conf;');
    expect(rules('/etc/apache2')).toBe('rules: - /lost+found;- /vhosts.d/cobbler.conf;- /httpd.conf;');
    expect(rules('/etc/tomcat')).toBe('rules: - /lost+found;- /tomcat.conf;- /conf.d/tomcat_java_opts.conf;');
    expect(rules('/srv/www')).toBe('rules: - /lost+found;- /htdocs/pub/RHN-ORG-TRUSTED-SSL-CERT;- /htdocs/pub/sles15;'
      + 'P /distributions;P /distributions/1-centos7;P /distributions/2-sles15;');
  });

  it('copies no systemd unit of the old host: the claim keeps the image\'s', () => {
    // (Only the monitoring drop-in is read from there, into /etc/sysconfig.)
    expect(rsyncs().filter((l) => l.includes(':/etc/systemd/')).map((l) => l.split(' ').slice(-2))).toEqual([
      ['root@uyuni-old.test:/etc/systemd/system/prometheus-postgres_exporter.service.d/60-server.conf',
        `${sync.target}/etc/sysconfig/prometheus-postgres_exporter/systemd/`],
    ]);
    expect(fs.readdirSync(path.join(sync.target, 'etc/systemd/system/multi-user.target.wants')).sort())
      .toEqual(['prometheus-postgres_exporter.service', 'tomcat.service']);
  });

  it('moves the synced PostgreSQL 14 data aside at once, for pg_upgrade, owned by the images\' postgres (999)', () => {
    const pgsql = path.join(sync.target, 'var/lib/pgsql');
    for (const p of [pgsql, path.join(pgsql, 'data-pg14'), path.join(pgsql, 'data-pg14/base/1/1259')]) {
      expect([fs.statSync(p).uid, fs.statSync(p).gid]).toEqual([999, 999]);
    }
    expect(fs.existsSync(path.join(pgsql, 'data'))).toBe(false);
    expect(fs.readFileSync(path.join(pgsql, 'data-pg14/PG_VERSION'), 'utf8')).toBe('14\n');
    expect(fs.existsSync(path.join(pgsql, 'data-pg14/base/1/1259'))).toBe(true);
  });

  it('writes the facts to the migration data, without any password', () => {
    const data = fs.readFileSync(path.join(sync.mig, 'data'), 'utf8');
    expect(parseFacts(data)).toEqual({
      source_fqdn: 'uyuni-old.test', fqdn: 'uyuni-old.test', timezone: 'Europe/Berlin', current_pg_version: '14',
      current_libc_version: '2.31', db_user: 'spacewalk', db_name: 'susemanager', db_port: '5432',
      report_db_user: 'pythia_susemanager', has_hub: 'false', debug_java: 'true', tftp_enabled: 'true',
      ca_fingerprint_match: 'true', third_party_certs: 'false',
    });
    expect(data).not.toMatch(/s3cret|password/);
    expect(fs.readFileSync(path.join(sync.mig, 'source/susemanager-release'), 'utf8')).toBe('SUSE Manager release 4.3 (4.3.14)\n');
  });

  it('writes the credentials (0600) and the CA files, and prints no secret', () => {
    expect(modeOf(path.join(sync.mig, 'secrets'))).toBe(0o600);
    expect(fs.readFileSync(path.join(sync.mig, 'secrets'), 'utf8')).toContain(`db_password=${OLD_SECRETS.db}\n`);
    expect(fs.readdirSync(path.join(sync.mig, 'ca')).sort()).toEqual(['RHN-ORG-PRIVATE-SSL-KEY', 'RHN-ORG-TRUSTED-SSL-CERT', 'deployed-ca.crt']);
    for (const s of Object.values(OLD_SECRETS)) expect(sync.stdout + sync.stderr).not.toContain(s);
  });

  it('rewrites rhn.conf for the db Deployment (db, reportdb), the name, no SSL, the mirror', () => {
    const conf = fs.readFileSync(path.join(sync.target, 'etc/rhn/rhn.conf'), 'utf8');
    expect(conf).toBe(OLD_RHN_CONF.replace('db_host = localhost', 'db_host = db').replace('report_db_host = localhost', 'report_db_host = reportdb')
      .replace('server.jabber_server', 'java.hostname').replace('/srv/mirror', '/mirror').concat('server.no_ssl = 1\n'));
    expect(fs.readFileSync(path.join(sync.target, 'etc/cobbler/settings.yaml'), 'utf8')).toContain('client_use_localhost: true');
  });

  it('marks the copied server as set up where current images look (var/spacewalk), after the copy', () => {
    expect(fs.statSync(path.join(sync.target, 'var/spacewalk/.MANAGER_SETUP_COMPLETE')).isFile()).toBe(true);
    expect(fs.existsSync(path.join(sync.target, 'root'))).toBe(false);
    expect(sync.stdout.trim().split('\n').slice(-2)).toEqual(['uyuni-data-sync: marking the copied server as set up', 'uyuni-data-sync: done']);
  });
});

describe('data-sync.sh on other old servers', () => {
  it('appends db_host, report_db_host and server.no_ssl to a bare rhn.conf, keeps the data in place when the PostgreSQL major stays', () => {
    const bare = runDataSync({ NEW_PG_VERSION: '14' }, (s) => {
      s.tree['/etc/rhn/rhn.conf'] = 'db_user = spacewalk\ndb_name = susemanager\n  report_db_host=old\nserver.jabber_server = uyuni-old.test';
    });
    expect(bare.status).toBe(0);
    expect(fs.readFileSync(path.join(bare.target, 'etc/rhn/rhn.conf'), 'utf8').split('\n')).toEqual([
      'db_user = spacewalk', 'db_name = susemanager', '  report_db_host= reportdb', 'java.hostname = uyuni-old.test',
      'db_host = db', 'server.no_ssl = 1', '',
    ]);
    expect(bare.stderr).toContain('uyuni-data-sync: warning: the old rhn.conf has no db_password\n');
    expect(fs.readFileSync(path.join(bare.target, 'var/lib/pgsql/data/PG_VERSION'), 'utf8')).toBe('14\n');
    expect(fs.existsSync(path.join(bare.target, 'var/lib/pgsql/data-pg14'))).toBe(false);
  });

  it('turns SSL off for the internal connections after the split, where the old rhn.conf had it on (M1)', () => {
    const ssl = runDataSync({}, (s) => {
      s.tree['/etc/rhn/rhn.conf'] = `${s.tree['/etc/rhn/rhn.conf']}db_ssl_enabled = 1\nreport_db_ssl_enabled = 1\nreport_db_sslrootcert = /etc/pki/trust/anchors/LOCAL-RHN-ORG-TRUSTED-SSL-CERT\n`;
    });
    expect(ssl.status).toBe(0);
    const conf = fs.readFileSync(path.join(ssl.target, 'etc/rhn/rhn.conf'), 'utf8').split('\n');
    expect(conf).toContain('db_ssl_enabled = 0');
    expect(conf).toContain('report_db_ssl_enabled = 0');
    expect(conf.filter((l) => /ssl_enabled/.test(l))).toHaveLength(2);
  });

  it('takes third-party certificates (no /root/ssl-build) with the server\'s key and certificate, and reads hub and tftp', () => {
    const other = runDataSync({}, (s) => {
      delete s.tree['/root/ssl-build/RHN-ORG-TRUSTED-SSL-CERT'];
      delete s.tree['/root/ssl-build/RHN-ORG-PRIVATE-SSL-KEY'];
      s.enabledUnits = [];
      s.packages = ['hub-xmlrpc-api'];
    });
    expect(other.status).toBe(0);
    const ca = path.join(other.mig, 'ca');
    expect(fs.readdirSync(ca).sort()).toEqual(['deployed-ca.crt', 'spacewalk.crt', 'spacewalk.key']);
    expect(modeOf(path.join(ca, 'spacewalk.key'))).toBe(0o600);
    expect(fs.readFileSync(path.join(ca, 'spacewalk.key'), 'utf8')).toBe('server key\n');
    expect(parseFacts(fs.readFileSync(path.join(other.mig, 'data'), 'utf8'))).toMatchObject({
      ca_fingerprint_match: 'false', third_party_certs: 'true', has_hub: 'true', tftp_enabled: 'false',
    });
    expect(fs.readdirSync(path.join(other.target, 'etc/systemd/system/multi-user.target.wants'))).toEqual(['tomcat.service']);
  });

  it('refuses a source of another PostgreSQL version before it stops or copies anything', () => {
    const other = runDataSync({ OLD_PG_VERSION: '13' });
    expect(other.status).toBe(1);
    expect(other.stderr).toBe('uyuni-data-sync: uyuni-old.test runs PostgreSQL 14, the configuration says migration.postgresql.from: 13\n');
    expect(other.stubs.filter((l) => /^(systemctl|spacewalk-service) /.test(l))).toEqual([]);
    expect(other.log.filter((l) => l.startsWith('rsync '))).toEqual([]);
  });

  it('refuses a source that is no Uyuni nor SUSE Manager server before it stops anything', () => {
    const plain = runDataSync({}, (s) => {
      delete s.tree['/etc/susemanager-release'];
    });
    expect(plain.status).toBe(1);
    expect(plain.stderr).toBe('uyuni-data-sync: uyuni-old.test has neither /etc/susemanager-release nor /etc/uyuni-release: '
      + 'not a non-container Uyuni or SUSE Manager server\n');
    expect(plain.stubs.filter((l) => /^(systemctl|spacewalk-service) /.test(l))).toEqual([]);
  });

  it.each([
    ['SOURCE_FQDN', 'old-server.example.com;touch /tmp/pwned'],
    ['SOURCE_FQDN', '-oProxyCommand=sh'],
    ['SOURCE_USER', 'root -o ProxyCommand=sh'],
    ['SOURCE_PORT', '22 -o ProxyCommand=sh'],
    ['SSH_DIR', '/root/.ssh -o ProxyCommand=sh'],
    ['PREPARE', 'yes'],
  ])('refuses a hostile or wrong %s (%s) before any ssh', (name, value) => {
    const bad = runDataSync({ [name]: value });
    expect(bad.status).toBe(1);
    expect(bad.stderr).toMatch(new RegExp(`^uyuni-data-sync: ${name} (is not|must be)`));
    expect(bad.log).toEqual([]);
  });

  it('uses /root/.ssh by default', () => {
    const r = runDataSync({ SSH_DIR: undefined, OLD_PG_VERSION: '13' });
    expect(r.log[0]).toMatch(/^ssh -i \/root\/\.ssh\/key -p 22 -o BatchMode=yes -o StrictHostKeyChecking=yes -o UserKnownHostsFile=\/root\/\.ssh\/known_hosts /);
  });
});

describe('inspect.sh on the volumes of an installed server', () => {
  function inspect(opts: { image?: [string, string]; recorded?: [string, string]; conf?: string } = {}) {
    const dir = tempDir('uyuni-cdk-inspect-');
    const image = path.join(dir, 'image-etc');
    const releases = path.join(dir, 'etc-rhn/uyuni-cdk');
    fs.mkdirSync(image);
    fs.mkdirSync(releases, { recursive: true });
    if (opts.image) put(path.join(image, opts.image[0]), `${opts.image[1]}\n`);
    if (opts.recorded) put(path.join(releases, opts.recorded[0]), `${opts.recorded[1]}\n`);
    const conf = path.join(dir, 'etc-rhn/rhn.conf');
    if (opts.conf !== undefined) put(conf, opts.conf);
    return run('inspect.sh', { RELEASE_DIR: releases, IMAGE_ETC: image, RHN_CONF: conf });
  }
  const RHN_CONF = [
    'db_backend = postgresql', 'db_user = spacewalk', 'db_password = s3cret-pw', 'db_name = susemanager',
    'db_host = db', 'db_port = 5432', 'javaXhostname = wrong', 'java.hostname = uyuni.internal  ', '',
  ].join('\n');

  it('prints the image\'s product and release, the data\'s recorded ones and rhn.conf\'s values, nothing secret', () => {
    const r = inspect({ image: ['uyuni-release', 'Uyuni release 2026.01'], recorded: ['uyuni-release', 'Uyuni release 2025.10'], conf: RHN_CONF });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(parseFacts(r.stdout)).toEqual({
      product: 'uyuni', uyuni_release: '2026.01', current_product: 'uyuni', current_release: '2025.10',
      fqdn: 'uyuni.internal', db_user: 'spacewalk', db_name: 'susemanager', db_port: '5432',
    });
    expect(r.stdout).not.toContain('s3cret');
  });

  it('prints no PostgreSQL facts: inspect-db.sh does', () => {
    const r = inspect({ image: ['uyuni-release', 'Uyuni release 2026.01'], conf: RHN_CONF });
    expect(Object.keys(parseFacts(r.stdout)).filter((k) => k.includes('pg'))).toEqual([]);
    expect(readScript('inspect.sh')).not.toMatch(/PG_VERSION|rpm -q/);
  });

  it('reads SUSE Manager releases, and leaves out what is missing so the gates refuse', () => {
    const r = inspect({ image: ['susemanager-release', 'SUSE Multi-Linux Manager release 5.1 (5.1.1)'] });
    expect(r.status).toBe(0);
    expect(parseFacts(r.stdout)).toEqual({ product: 'suse-manager', uyuni_release: '5.1.1' });
    expect(r.stderr).toContain('rhn.conf is missing');
    expect(r.stderr).toContain('uyuni-inspect: no release file in');
    const none = inspect({ conf: RHN_CONF });
    expect(none.status).toBe(0);
    expect(parseFacts(none.stdout).product).toBeUndefined();
  });
});

function runInspect(release: { file: string; text: string } | undefined, data: string) {
  const dir = tempDir('uyuni-cdk-inspect-');
  fs.mkdirSync(path.join(dir, 'source'));
  put(path.join(dir, 'image-etc/uyuni-release'), 'Uyuni release 2026.01\n');
  if (release) fs.writeFileSync(path.join(dir, 'source', release.file), release.text);
  fs.writeFileSync(path.join(dir, 'data'), data);
  put(path.join(dir, 'rhn.conf'), 'db_user = not-from-here\n');
  return run('inspect.sh', {
    RELEASE_DIR: path.join(dir, 'none'), IMAGE_ETC: path.join(dir, 'image-etc'), RHN_CONF: path.join(dir, 'rhn.conf'),
    MIGRATION_DATA: path.join(dir, 'data'),
  });
}

describe('inspect.sh on an upgrade: the setup marker and the CA of uyuni-cert', () => {
  function inspect(files: Record<string, string>, env: Record<string, string> = {}) {
    const dir = tempDir('uyuni-cdk-inspect-up-');
    put(path.join(dir, 'image-etc/uyuni-release'), 'Uyuni release 2026.08\n');
    put(path.join(dir, 'etc-rhn/uyuni-cdk/uyuni-release'), 'Uyuni release 2026.01\n');
    for (const [f, text] of Object.entries(files)) put(path.join(dir, f), text);
    const r = run('inspect.sh', {
      RELEASE_DIR: path.join(dir, 'etc-rhn/uyuni-cdk'), IMAGE_ETC: path.join(dir, 'image-etc'), RHN_CONF: path.join(dir, 'etc-rhn/rhn.conf'),
      SETUP_MARKER: path.join(dir, 'var/spacewalk/.MANAGER_SETUP_COMPLETE'), LEGACY_SETUP_MARKER: path.join(dir, 'root/.MANAGER_SETUP_COMPLETE'),
      ...Object.fromEntries(Object.entries(env).map(([k, v]) => [k, path.join(dir, v)])),
    });
    return { ...r, dir, facts: parseFacts(r.stdout) };
  }

  it('names where the marker is: var-spacewalk first, else the legacy root claim, else nothing (the gate refuses)', () => {
    const both = inspect({ 'var/spacewalk/.MANAGER_SETUP_COMPLETE': '', 'root/.MANAGER_SETUP_COMPLETE': '' });
    expect(both.facts.setup_marker).toBe(path.join(both.dir, 'var/spacewalk/.MANAGER_SETUP_COMPLETE'));
    const legacy = inspect({ 'root/.MANAGER_SETUP_COMPLETE': '' });
    expect(legacy.facts.setup_marker).toBe(path.join(legacy.dir, 'root/.MANAGER_SETUP_COMPLETE'));
    const none = inspect({});
    expect(none.status).toBe(0);
    expect(none.facts).not.toHaveProperty('setup_marker');
    expect(none.stderr).toContain('no setup marker at');
  });

  it('prints the SHA-256 fingerprint of uyuni-cert\'s CA, and nothing when the Secret has none', () => {
    const dir = tempDir('uyuni-cdk-inspect-ca-');
    const key = path.join(dir, 'ca.key');
    const crt = path.join(dir, 'ca.crt');
    const made = spawnSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', crt, '-days', '1', '-subj', '/CN=uyuni-ca'], { encoding: 'utf8' });
    expect(made.status).toBe(0);
    const fp = spawnSync('openssl', ['x509', '-in', crt, '-noout', '-fingerprint', '-sha256'], { encoding: 'utf8' }).stdout.trim().split('=')[1];
    const r = inspect({ 'uyuni-cert/ca.crt': fs.readFileSync(crt, 'utf8') }, { CA_CERT: 'uyuni-cert/ca.crt' });
    expect(r.facts.ca_fingerprint).toBe(fp);
    expect(fp).toMatch(/^([0-9A-F]{2}:){31}[0-9A-F]{2}$/);
    const missing = inspect({}, { CA_CERT: 'uyuni-cert/ca.crt' });
    expect(missing.facts).not.toHaveProperty('ca_fingerprint');
    expect(missing.stderr).toContain('no CA certificate in');
  });
});

describe('setup-marker.sh, then a stand-in for the current server image\'s setup check', () => {
  /**
   * Stands in for uyuni server-image root/usr/lib/entrypoint-lib.sh @ 18abb310
   * (check_current_installation: move /root/.MANAGER_SETUP_COMPLETE to /var/spacewalk/ when /root
   * holds it; exit when /var/spacewalk/.MANAGER_SETUP_COMPLETE exists) and the start of
   * 00-mgrSetup.sh @ 1a7da357 (else it runs spacewalk-setup --clear-db), with every path under the
   * container's root `$1`. The new Deployment mounts no /root: its /root is the image's, empty.
   */
  const SETUP_CHECK = `set -eu
legacy="$1/root/.MANAGER_SETUP_COMPLETE"
marker="$1/var/spacewalk/.MANAGER_SETUP_COMPLETE"
if [ -e "$legacy" ]; then mv "$legacy" "$marker"; fi
if [ -e "$marker" ]; then echo "Server appears to be already configured."; exit 0; fi
echo "spacewalk-setup --clear-db"
`;
  function scene(legacy: boolean) {
    const dir = tempDir('uyuni-cdk-marker-');
    const claims = { root: path.join(dir, 'claim-root'), spacewalk: path.join(dir, 'claim-var-spacewalk') };
    fs.mkdirSync(claims.root);
    fs.mkdirSync(claims.spacewalk);
    if (legacy) fs.writeFileSync(path.join(claims.root, '.MANAGER_SETUP_COMPLETE'), '');
    // The new server pod: var-spacewalk mounted, /root the image's own (empty).
    const pod = path.join(dir, 'new-pod');
    fs.mkdirSync(path.join(pod, 'root'), { recursive: true });
    fs.mkdirSync(path.join(pod, 'var'), { recursive: true });
    fs.symlinkSync(claims.spacewalk, path.join(pod, 'var/spacewalk'));
    const newServerStarts = () => spawnSync('sh', ['-c', SETUP_CHECK, 'sh', pod], { encoding: 'utf8' }).stdout;
    const move = () => run('setup-marker.sh', {
      SETUP_MARKER: path.join(claims.spacewalk, '.MANAGER_SETUP_COMPLETE'), LEGACY_SETUP_MARKER: path.join(claims.root, '.MANAGER_SETUP_COMPLETE'),
    });
    return { claims, newServerStarts, move };
  }

  it('without the move, the new server of a pre-5.2.5 install sets itself up again on the live database', () => {
    expect(scene(true).newServerStarts()).toBe('spacewalk-setup --clear-db\n');
  });

  it('after the move, it finds the marker on var-spacewalk and skips the setup; the root claim keeps no marker', () => {
    const s = scene(true);
    const r = s.move();
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('moving');
    expect(fs.existsSync(path.join(s.claims.root, '.MANAGER_SETUP_COMPLETE'))).toBe(false);
    expect(s.newServerStarts()).toBe('Server appears to be already configured.\n');
    // A re-run (the marker already moved) is fine.
    expect(s.move().status).toBe(0);
  });

  it('fails, changing nothing, when neither claim holds a marker', () => {
    const s = scene(false);
    const r = s.move();
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('would set itself up again on the live database');
    expect(fs.readdirSync(s.claims.spacewalk)).toEqual([]);
  });
});

describe('inspect.sh on migration data', () => {
  it('prints the migration facts and the image\'s release, and never a password-like line', () => {
    const r = runInspect({ file: 'uyuni-release', text: 'Uyuni release 2024.10\n' },
      'current_pg_version=14\nfqdn=old-server.example.com\ndb_password=oops\nca_key=oops\nmy_secret_x=oops\nnot a fact\n');
    expect(r.status).toBe(0);
    expect(parseFacts(r.stdout)).toEqual({
      product: 'uyuni', uyuni_release: '2026.01',
      current_pg_version: '14', fqdn: 'old-server.example.com',
      current_product: 'uyuni', current_release: '2024.10',
    });
    expect(r.stdout).not.toContain('oops');
  });

  it.each([
    ['uyuni-release', 'Uyuni release 2025.10', 'uyuni', '2025.10'],
    ['susemanager-release', 'SUSE Manager release 4.3 (4.3.14)', 'suse-manager', '4.3.14'],
    ['susemanager-release', 'SUSE Manager release 5.0 (5.0.3)', 'suse-manager', '5.0.3'],
    ['susemanager-release', 'SUSE Multi-Linux Manager release 5.1.0 Alpha1', 'suse-manager', '5.1.0 Alpha1'],
  ])('reads %s "%s" as %s %s', (file, text, product, release) => {
    const facts = parseFacts(runInspect({ file, text: `${text}\n` }, 'current_pg_version=14\n').stdout);
    expect(facts.current_product).toBe(product);
    expect(facts.current_release).toBe(release);
  });

  it('prints no release fact when the source had no release file, so the gates refuse', () => {
    const r = runInspect(undefined, 'current_pg_version=14\n');
    expect(r.status).toBe(0);
    expect(parseFacts(r.stdout).current_release).toBeUndefined();
    expect(r.stderr).toContain('no release file');
  });

  it('fails when the data sync wrote no data', () => {
    const dir = tempDir('uyuni-cdk-inspect-');
    const r = run('inspect.sh', { RELEASE_DIR: dir, IMAGE_ETC: dir, MIGRATION_DATA: path.join(dir, 'missing') });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('did uyuni-data-sync run?');
  });
});

describe('inspect-db.sh, over a claim in a temp dir with a fake postgres', () => {
  function inspectDb(layout: 'root' | 'data' | 'data-pg' | 'none', postgres: string, libs: string[] = []) {
    const dir = tempDir('uyuni-cdk-inspect-db-');
    const data = path.join(dir, 'claim');
    fs.mkdirSync(data);
    if (layout === 'root') put(path.join(data, 'PG_VERSION'), '16\n');
    if (layout === 'data') put(path.join(data, 'data/PG_VERSION'), '14\n');
    if (layout === 'data-pg') put(path.join(data, 'data-pg14/PG_VERSION'), '14\n');
    const lib = path.join(dir, 'usr-lib');
    for (const l of libs) put(path.join(lib, l), '#!/bin/sh\n', 0o755);
    const bin = binWith(dir, { postgres: `#!/bin/sh\n${postgres}\n` });
    return run('inspect-db.sh', { DATA_DIR: `${data}/`, PG_LIB_DIR: lib }, bin);
  }

  it('reads the version of a migrated database the data sync moved to data-pg<from>', () => {
    const r = inspectDb('data-pg', '[ "$1" = -V ] && echo "postgres (PostgreSQL) 18.1"');
    expect(r.status).toBe(0);
    expect(parseFacts(r.stdout)).toEqual({ current_pg_version: '14', image_pg_version: '18' });
  });

  it('reads the data\'s version at the claim\'s root, and the image\'s from postgres -V', () => {
    const r = inspectDb('root', '[ "$1" = -V ] && echo "postgres (PostgreSQL) 18.1"');
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(parseFacts(r.stdout)).toEqual({ current_pg_version: '16', image_pg_version: '18' });
  });

  it('reads the older layout\'s data/PG_VERSION', () => {
    const r = inspectDb('data', 'echo "postgres (PostgreSQL) 18.1 (SUSE)"');
    expect(parseFacts(r.stdout)).toEqual({ current_pg_version: '14', image_pg_version: '18' });
  });

  it('prints no current version, and says so, when the claim holds no data', () => {
    const r = inspectDb('none', 'echo "postgres (PostgreSQL) 18.1"');
    expect(r.status).toBe(0);
    expect(parseFacts(r.stdout)).toEqual({ image_pg_version: '18' });
    expect(r.stderr).toMatch(/^uyuni-inspect-db: none of .*PG_VERSION, .*data\/PG_VERSION, .*data-pg\*\/PG_VERSION exists/);
  });

  it('falls back to the highest PG_LIB_DIR/postgresql<N>/bin/postgres when postgres -V tells nothing', () => {
    const libs = ['postgresql16/bin/postgres', 'postgresql18/bin/postgres', 'postgresql9/bin/postgres', 'postgresql-common/bin/postgres'];
    expect(parseFacts(inspectDb('root', 'exit 127', libs).stdout)).toEqual({ current_pg_version: '16', image_pg_version: '18' });
    expect(parseFacts(inspectDb('root', 'echo garbage', libs).stdout).image_pg_version).toBe('18');
    const none = inspectDb('root', 'exit 127');
    expect(parseFacts(none.stdout)).toEqual({ current_pg_version: '16' });
    expect(none.stderr).toContain('cannot tell the image\'s PostgreSQL version');
  });
});

describe('db-migrate.sh, with a fake upgrade script', () => {
  /**
   * Stands in for server-database-migration-image root/docker-entrypoint-initdb.d/
   * 00-pgsqlVersionUpgrade.sh @ 90890532 (its paths /migration/source and /migration/target are
   * SOURCE_LINK and TARGET here): the old version from source/PG_VERSION; the target emptied with
   * `rm -rf target/*` (an ext4 lost+found goes too, dot files stay) and made anew (initdb and
   * pg_upgrade as postgres, which chowns only the target: the source must be postgres's already,
   * what data-sync.sh sees to, shown on a real PostgreSQL in test/scripts.postgres.test.ts).
   */
  const FAKE_UPGRADE = `#!/bin/sh
echo "ran $(cat "$SOURCE_LINK/PG_VERSION") -> $NEW_PG_VERSION from $(readlink "$SOURCE_LINK") lang=\${POSTGRES_LANG:-unset}" >>"$FAKE_LOG"
[ -z "\${FAKE_FAIL:-}" ] || exit 3
rm -rf "\${TARGET:?}"/*
[ -n "\${FAKE_NO_RESULT:-}" ] || echo "$NEW_PG_VERSION" >"$TARGET/PG_VERSION"
echo "converted" >"$TARGET/base"
`;
  function scene(layout: 'root' | 'data' | 'data-pg' | 'none', version = '16') {
    const dir = tempDir('uyuni-cdk-db-migrate-');
    const old = path.join(dir, 'migration/old');
    const where = { root: old, data: path.join(old, 'data'), 'data-pg': path.join(old, `data-pg${version}`), none: old }[layout];
    fs.mkdirSync(old, { recursive: true });
    if (layout !== 'none') {
      put(path.join(where, 'PG_VERSION'), `${version}\n`);
      put(path.join(where, 'base/1/1259'), 'table');
      put(path.join(where, 'postgresql.conf'), 'ssl = on\n');
    }
    fs.mkdirSync(path.join(dir, 'migration/target'));
    put(path.join(dir, 'upgrade.sh'), FAKE_UPGRADE, 0o755);
    fs.writeFileSync(path.join(dir, 'log'), '');
    return { dir, old, where, target: path.join(dir, 'migration/target'), link: path.join(dir, 'migration/source') };
  }
  const migrate = (s: ReturnType<typeof scene>, env: Record<string, string | undefined> = {}) => {
    const r = run('db-migrate.sh', {
      OLD_DATA: s.old, SOURCE_LINK: s.link, TARGET: s.target, OLD_PG_VERSION: '16', NEW_PG_VERSION: '18',
      UPGRADE_SCRIPT: path.join(s.dir, 'upgrade.sh'), FAKE_LOG: path.join(s.dir, 'log'), ...env,
    });
    return { ...r, log: fs.readFileSync(path.join(s.dir, 'log'), 'utf8') };
  };
  /** Every file below a directory with its content: to show the old data stays as it was. */
  const snapshot = (d: string) => (fs.readdirSync(d, { recursive: true }) as string[]).sort()
    .map((f) => [f, fs.statSync(path.join(d, f)).isFile() ? fs.readFileSync(path.join(d, f), 'utf8') : 'dir']);

  it('upgrades data at the claim\'s root: links the source, runs the script once, marks the target', () => {
    const s = scene('root');
    const before = snapshot(s.old);
    const r = migrate(s, { POSTGRES_LANG: 'en_US.UTF-8' });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.log).toBe(`ran 16 -> 18 from ${s.old} lang=en_US.UTF-8\n`);
    expect(fs.readlinkSync(s.link)).toBe(s.old);
    expect(fs.readFileSync(path.join(s.target, 'PG_VERSION'), 'utf8')).toBe('18\n');
    expect(fs.existsSync(path.join(s.target, '.uyuni-cdk-migrated'))).toBe(true);
    expect(parseFacts(r.stdout)).toEqual({ migrated_pg_version: '18' });
    expect(snapshot(s.old)).toEqual(before);
  });

  it('puts the db certificate where the old cluster\'s postgresql.conf expects it, the key readable by its owner only', () => {
    const s = scene('root');
    const certs = path.join(s.dir, 'db-cert');
    put(path.join(certs, 'tls.crt'), 'CERT');
    put(path.join(certs, 'tls.key'), 'KEY');
    const pki = path.join(s.dir, 'pki');
    const r = migrate(s, { CERT_DIR: certs, PKI_DIR: pki });
    expect(r.status).toBe(0);
    expect(fs.readFileSync(path.join(pki, 'tls/certs/spacewalk.crt'), 'utf8')).toBe('CERT');
    expect(fs.readFileSync(path.join(pki, 'tls/private/pg-spacewalk.key'), 'utf8')).toBe('KEY');
    expect(fs.statSync(path.join(pki, 'tls/private/pg-spacewalk.key')).mode & 0o777).toBe(0o600);
    const missing = migrate(scene('root'), { CERT_DIR: path.join(s.dir, 'nowhere'), PKI_DIR: pki });
    expect(missing.status).toBe(1);
    expect(missing.stderr).toContain('no tls.crt and tls.key in');
    expect(missing.log).toBe('');
  });

  it('upgrades the older layout\'s data/ (and data-pg<old>, where the data sync moves it)', () => {
    for (const layout of ['data', 'data-pg'] as const) {
      const s = scene(layout);
      const before = snapshot(s.old);
      const r = migrate(s);
      expect(r.status).toBe(0);
      expect(r.log).toBe(`ran 16 -> 18 from ${s.where} lang=unset\n`);
      expect(fs.readlinkSync(s.link)).toBe(s.where);
      expect(snapshot(s.old)).toEqual(before);
    }
  });

  it('replaces an earlier link and an empty source directory, and needs none when the source is the link', () => {
    const s = scene('data');
    fs.symlinkSync(s.dir, s.link);
    expect(migrate(s).status).toBe(0);
    expect(fs.readlinkSync(s.link)).toBe(s.where);
    const e = scene('root');
    fs.mkdirSync(e.link);
    expect(migrate(e).status).toBe(0);
    expect(fs.readlinkSync(e.link)).toBe(e.old);
    const full = scene('data');
    put(path.join(full.link, 'something'), 'x');
    const r = migrate(full);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('is a directory that is not empty');
    expect(r.log).toBe('');
    const same = scene('root');
    const direct = migrate(same, { SOURCE_LINK: same.old });
    expect(direct.status).toBe(0);
    expect(direct.log).toContain(`ran 16 -> 18 from  lang`);
  });

  it('refuses data of another version than postgresql.from before touching anything', () => {
    const s = scene('root', '14');
    const r = migrate(s);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('postgresql.from');
    expect(r.stderr).toContain(`${s.old} holds PostgreSQL 14, but the configuration says postgresql.from: 16`);
    expect(r.log).toBe('');
    expect(fs.existsSync(s.link)).toBe(false);
    expect(fs.readdirSync(s.target)).toEqual([]);
  });

  it('does nothing on a re-run after success', () => {
    const s = scene('root');
    expect(migrate(s).status).toBe(0);
    const again = migrate(s);
    expect(again.status).toBe(0);
    expect(again.log.split('\n').filter((l) => l.startsWith('ran '))).toHaveLength(1);
    expect(again.stdout).toContain('already holds the PostgreSQL 18 upgrade');
    expect(parseFacts(again.stdout)).toEqual({ migrated_pg_version: '18' });
  });

  it('starts over after an interrupted try (new version there, no marker)', () => {
    const s = scene('root');
    put(path.join(s.target, 'PG_VERSION'), '18\n');
    const r = migrate(s);
    expect(r.status).toBe(0);
    expect(r.log).toContain('ran 16 -> 18');
  });

  it('stops when the upgrade script fails or leaves no new database, without a marker', () => {
    for (const env of [{ FAKE_FAIL: '1' }, { FAKE_NO_RESULT: '1' }]) {
      const s = scene('root');
      const before = snapshot(s.old);
      const r = migrate(s, env);
      expect(r.status).toBe(1);
      expect(r.log).toContain('ran 16 -> 18');
      expect(r.stderr).toContain('the old claim var-pgsql is untouched and this step can be re-run');
      expect(fs.existsSync(path.join(s.target, '.uyuni-cdk-migrated'))).toBe(false);
      expect(parseFacts(r.stdout)).toEqual({});
      expect(snapshot(s.old)).toEqual(before);
    }
  });

  it('fails naming the claim when it holds no PostgreSQL data, and refuses what is no upgrade', () => {
    const s = scene('none');
    const r = migrate(s);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('uyuni-db-migrate: var-pgsql holds no PostgreSQL data');
    expect(r.log).toBe('');
    for (const env of [{ NEW_PG_VERSION: '16' }, { NEW_PG_VERSION: '18 ' }, { OLD_PG_VERSION: '' }]) {
      const bad = migrate(scene('root'), env);
      expect(bad.status).not.toBe(0);
      expect(bad.log).toBe('');
    }
  });

  it('fails when the upgrade script is not there', () => {
    const s = scene('root');
    const r = migrate(s, { UPGRADE_SCRIPT: path.join(s.dir, 'missing.sh') });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('is this the server-database-migration image?');
    expect(readScript('db-migrate.sh')).toContain('upgrade=${UPGRADE_SCRIPT:-/docker-entrypoint-initdb.d/00-pgsqlVersionUpgrade.sh}');
  });
});

describe('db-finalize.sh, with a stand-in for the image\'s finalize script', () => {
  /**
   * Stands in for uyuni server-image root/docker-entrypoint-init.d/90-pgsqlFinalize.sh @ 17708150:
   * it reads no switch (no RUN_REINDEX, RUN_SCHEMA_UPDATE nor MIGRATION) and decides by itself
   * from the collation versions of MANAGER_DB_NAME; this one logs what it was given and exits
   * with `status`. The real rewrite against PostgreSQL is in test/scripts.postgres.test.ts.
   */
  function finalize(env: Record<string, string | undefined>, status = 0) {
    const dir = tempDir('uyuni-cdk-finalize-');
    const script = path.join(dir, '90-pgsqlFinalize.sh');
    put(script, `#!/bin/sh\necho "collation check of $MANAGER_DB_NAME; switches: \${RUN_REINDEX-}\${RUN_SCHEMA_UPDATE-}\${MIGRATION-}" >>"$FAKE_LOG"\nexit ${status}\n`, 0o755);
    const log = path.join(dir, 'log');
    fs.writeFileSync(log, '');
    const r = run('db-finalize.sh', { FINALIZE_SCRIPT: script, FAKE_LOG: log, MANAGER_DB_NAME: 'susemanager', ...env });
    return { ...r, dir, log: fs.readFileSync(log, 'utf8') };
  }

  it('runs the image\'s finalize script once, passing it no switch, between start and end messages', () => {
    const r = finalize({});
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.log).toBe('collation check of susemanager; switches: \n');
    expect(r.stdout).toMatch(/^uyuni-db-finalize: running .*90-pgsqlFinalize\.sh \(it reindexes when the collation versions changed\)\nuyuni-db-finalize: done\n$/);
    expect(readScript('db-finalize.sh')).toContain('finalize=${FINALIZE_SCRIPT:-/docker-entrypoint-init.d/90-pgsqlFinalize.sh}');
    expect(readScript('db-finalize.sh')).not.toMatch(/RUN_REINDEX|RUN_SCHEMA_UPDATE|\bMIGRATION=/);
  });

  it('exits with the finalize script\'s status when it fails', () => {
    const r = finalize({}, 4);
    expect(r.status).toBe(4);
    expect(r.stderr).toContain('failed (status 4)');
    expect(r.stdout).not.toContain('done');
  });

  it('fails when the finalize script is not there', () => {
    const r = finalize({ FINALIZE_SCRIPT: '/nonexistent/90-pgsqlFinalize.sh' });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('is this the server image?');
  });

  it('for a migration, fails before anything runs when the data sync left no distributions list', () => {
    const mig = tempDir('uyuni-cdk-finalize-mig-');
    const r = finalize({
      MIGRATION_DIR: mig, MANAGER_DB_HOST: 'db', MANAGER_DB_PORT: '5432', MANAGER_USER: 'spacewalk', MANAGER_PASS: 'x',
    });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`${mig}/distributions.csv is missing: did uyuni-data-sync run?`);
    expect(r.log).toBe('');
  });
});

describe('lib/marked-block.sh, the block db-pods-cidr.sh and db-archiving.sh write', () => {
  const BEGIN = '# BEGIN test block';
  const END = '# END test block';
  /** Calls write_marked_block on `file` with `body`; its stdout is the state it reports. */
  const write = (file: string, body: string) => spawnSync('sh', ['-c',
    `${fs.readFileSync(path.join(SCRIPTS_DIR, 'lib', 'marked-block.sh'), 'utf8')}\nset -eu\nwrite_marked_block "$F" "$B" "$E" "$BODY"`],
  { encoding: 'utf8', env: { PATH: process.env.PATH!, F: file, B: BEGIN, E: END, BODY: body } });

  it('creates a missing file with only the block, then reports it unchanged without writing', () => {
    const file = path.join(tempDir('uyuni-cdk-block-'), 'f.conf');
    expect(write(file, 'a = 1').stdout).toBe('created\n');
    expect(fs.readFileSync(file, 'utf8')).toBe(`${BEGIN}\na = 1\n${END}\n`);
    const before = fs.statSync(file).mtimeMs;
    fs.utimesSync(file, new Date(0), new Date(0));
    expect(write(file, 'a = 1').stdout).toBe('unchanged\n');
    expect(fs.statSync(file).mtimeMs).toBe(0);
    expect(before).not.toBe(0);
  });

  it('replaces its block wherever it is, keeps every other line and the file\'s mode, and never adds a second block', () => {
    const file = path.join(tempDir('uyuni-cdk-block-'), 'f.conf');
    fs.writeFileSync(file, `first\n${BEGIN}\nold = 1\n${END}\nuser line\n`, { mode: 0o600 });
    expect(write(file, 'new = 2\nmore = 3').stdout).toBe('changed\n');
    expect(fs.readFileSync(file, 'utf8')).toBe(`first\nuser line\n${BEGIN}\nnew = 2\nmore = 3\n${END}\n`);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(write(file, 'new = 2\nmore = 3').stdout).toBe('unchanged\n');
  });

  it('fails, reporting no state, when it cannot write the file', () => {
    const r = write(path.join(tempDir('uyuni-cdk-block-'), 'missing-dir', 'f.conf'), 'a = 1');
    expect(r.status).not.toBe(0);
    expect(r.stdout).toBe('');
  });
});

describe('db-pods-cidr.sh with db.archiving', () => {
  it('adds a replication rule for the same network, scram-sha-256, only with REPLICATION=on', () => {
    const data = tempDir('uyuni-cdk-hba-');
    fs.writeFileSync(path.join(data, 'PG_VERSION'), '15\n');
    expect(run('db-pods-cidr.sh', { PGDATA: data, PODS_CIDR: '10.42.0.0/16' }).status).toBe(0);
    const file = path.join(data, 'pg_hba_custom.conf');
    expect(fs.readFileSync(file, 'utf8')).not.toContain('replication');
    const r = run('db-pods-cidr.sh', { PGDATA: data, PODS_CIDR: '10.42.0.0/16', REPLICATION: 'on' });
    expect(r.stdout).toContain('allows 10.42.0.0/16');
    const lines = fs.readFileSync(file, 'utf8').split('\n');
    expect(lines.slice(-3)).toEqual(['host replication all 10.42.0.0/16 scram-sha-256', '# END uyuni-cdk db.podsCIDR', '']);
    expect(lines.filter((l) => l.startsWith('# BEGIN'))).toHaveLength(1);
  });
});
