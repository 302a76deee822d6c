import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { readScript, SCRIPTS_DIR } from '../src/constructs/script-job';
import { SERVER_VOLUMES } from '../src/model/volumes';
import { parseFacts } from '../src/runtime/facts';
import { tempDir } from './helpers/synth';

const ALL = fs.readdirSync(SCRIPTS_DIR).filter((f) => f.endsWith('.sh')).sort();

describe('every step script', () => {
  it('is there: the foundation\'s and the migration\'s', () => {
    expect(ALL).toEqual(expect.arrayContaining(['init-volumes.sh', 'setup.sh', 'wait-for-db.sh',
      'data-sync.sh', 'inspect.sh', 'db-upgrade.sh', 'db-finalize.sh', 'post-upgrade.sh']));
  });

  it.each(ALL)('%s parses with sh -n', (file) => {
    const r = spawnSync('sh', ['-n', path.join(SCRIPTS_DIR, file)], { encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
  });

  it.each(ALL)('%s passes shellcheck -s sh', (file) => {
    const r = spawnSync('shellcheck', ['-s', 'sh', '-f', 'gcc', path.join(SCRIPTS_DIR, file)], { encoding: 'utf8' });
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
});

/** The ssl-commenting sed expression a script uses, run on a sample postgresql.conf. */
function commentSsl(script: string, conf: string): string {
  const m = /sed '(s\/\^\\\(\[\[:space:\]\]\*ssl\\\)\/#\\1\/)'/.exec(readScript(script));
  if (!m) throw new Error(`${script}: no ssl-commenting sed expression`);
  const r = spawnSync('sed', [m[1]], { input: conf, encoding: 'utf8' });
  expect(r.status).toBe(0);
  return r.stdout;
}

const SAMPLE_CONF = [
  'max_connections = 400',
  'ssl = on',
  '  ssl_cert_file = \'/etc/pki/tls/certs/spacewalk.crt\'',
  'ssl_key_file = \'/etc/pki/tls/private/pg-spacewalk.key\'',
  '#ssl_ciphers = \'HIGH\'',
  'listen_addresses = \'*\'',
  '',
].join('\n');

describe('db-upgrade.sh', () => {
  const text = readScript('db-upgrade.sh');

  it('comments out the ssl lines of the old postgresql.conf, and nothing else', () => {
    const out = commentSsl('db-upgrade.sh', SAMPLE_CONF).split('\n');
    expect(out).toEqual([
      'max_connections = 400',
      '#ssl = on',
      '#  ssl_cert_file = \'/etc/pki/tls/certs/spacewalk.crt\'',
      '#ssl_key_file = \'/etc/pki/tls/private/pg-spacewalk.key\'',
      '#ssl_ciphers = \'HIGH\'',
      'listen_addresses = \'*\'',
      '',
    ]);
    expect(text).toMatch(/>"\$old\/postgresql\.conf"/);
  });

  it('makes a new cluster with initdb, runs pg_upgrade --link with both versions\' binaries, then restores the configuration', () => {
    const initdb = text.indexOf('bin/initdb"');
    const sslOff = text.indexOf('>"$old/postgresql.conf"');
    const upgrade = text.indexOf('bin/pg_upgrade"');
    const restoreCall = text.lastIndexOf('restore_config');
    expect(sslOff).toBeGreaterThan(0);
    expect(sslOff).toBeLessThan(upgrade);
    expect(initdb).toBeLessThan(upgrade);
    expect(upgrade).toBeLessThan(restoreCall);
    expect(text).toContain('--old-bindir="/usr/lib/postgresql$OLD_PG_VERSION/bin"');
    expect(text).toContain('--new-bindir="/usr/lib/postgresql$NEW_PG_VERSION/bin"');
    expect(text).toMatch(/--new-datadir="\$data" \\\n\s+--link/);
    expect(text).toContain('cp -p "$old/postgresql.conf" "$old/pg_hba.conf" "$data/"');
    expect(text).toContain('cp -p "$old/postgresql.conf.uyuni-orig" "$old/postgresql.conf"');
  });

  it('runs PostgreSQL tools as postgres, never as root', () => {
    for (const tool of ['initdb', 'pg_upgrade']) {
      expect(text).toMatch(new RegExp(`as_postgres "/usr/lib/postgresql\\$NEW_PG_VERSION/bin/${tool}"`));
    }
  });
});

describe('db-finalize.sh', () => {
  const text = readScript('db-finalize.sh');

  it('disables SSL while PostgreSQL runs, and restores it on exit, also after a failure', () => {
    expect(commentSsl('db-finalize.sh', SAMPLE_CONF)).toContain('#ssl = on');
    const trap = text.indexOf('trap finish EXIT');
    const sslOff = text.indexOf('>"$conf"');
    const start = text.indexOf('--wait start');
    expect(trap).toBeGreaterThan(0);
    expect(trap).toBeLessThan(sslOff);
    expect(sslOff).toBeLessThan(start);
    const finish = text.slice(text.indexOf('finish() {'), text.indexOf('trap finish EXIT'));
    expect(finish).toContain('cp -p "$saved" "$conf"');
    expect(finish).toMatch(/pg_ctl --pgdata="\$data" --mode=fast --wait stop/);
    expect(finish).toContain('exit "$status"');
  });

  it('reindexes when asked (migration), then checks the database with spacewalk-startup-helper', () => {
    expect(text).toMatch(/if \[ "\$\{REINDEX:-false\}" = true \]; then[^]*reindexdb --all/);
    expect(text).toMatch(/if \[ "\$\{ANALYZE:-false\}" = true \]; then[^]*vacuumdb --all --analyze-in-stages/);
    const at = (command: string) => text.indexOf(`\n${command}`);
    expect(at('spacewalk-startup-helper check-database\n')).toBeGreaterThan(0);
    expect(at('  as_postgres reindexdb')).toBeLessThan(at('spacewalk-startup-helper check-database\n'));
    expect(at('as_postgres pg_ctl --pgdata="$data" --log')).toBeLessThan(at('  as_postgres reindexdb'));
  });
});

/** Fake commands for running data-sync.sh and inspect.sh for real, against a source tree in a temp dir. */
function fakeBin(dir: string): string {
  const bin = path.join(dir, 'bin');
  fs.mkdirSync(bin);
  const write = (name: string, text: string) => fs.writeFileSync(path.join(bin, name), text, { mode: 0o755 });
  // ssh: runs the remote command against $FAKE_SRC (absolute paths are rebased there).
  write('ssh', `#!/bin/sh
echo "ssh $*" >>"$FAKE_LOG"
while [ $# -gt 0 ]; do case $1 in --) shift; break ;; *) shift ;; esac; done
shift # the host
[ "$1" = sudo ] && shift
cmd=$1; shift
n=$#
while [ "$n" -gt 0 ]; do a=$1; shift; case $a in /*) a=$FAKE_SRC$a ;; esac; set -- "$@" "$a"; n=$((n - 1)); done
case $cmd in
  true) exit 0 ;;
  cat | test) exec "$cmd" "$@" ;;
  timedatectl) echo Europe/Berlin ;;
  rpm) exit 1 ;;
  spacewalk-service | systemctl) echo "stopped: $cmd $*" >>"$FAKE_LOG" ;;
  *) echo "fake ssh: unexpected $cmd" >&2; exit 99 ;;
esac
`);
  // rsync: logs its arguments and exclude list, copies <src path> from $FAKE_SRC to the target.
  write('rsync', `#!/bin/sh
echo "rsync $*" >>"$FAKE_LOG"
for a; do case $a in --exclude-from=*) echo "excludes: $(tr '\\n' ' ' <"\${a#--exclude-from=}")" >>"$FAKE_LOG" ;; esac; done
for a; do src=\${dst:-}; dst=$a; done
cp -a "$FAKE_SRC\${src#*:}." "$dst"
`);
  write('rpm', `#!/bin/sh
printf '%s\\n' postgresql14-server postgresql16-server postgresql16-contrib libpq5
`);
  return bin;
}

function sourceTree(dir: string, pg = '14'): string {
  const src = path.join(dir, 'src');
  const put = (p: string, text: string) => {
    fs.mkdirSync(path.dirname(path.join(src, p)), { recursive: true });
    fs.writeFileSync(path.join(src, p), text);
  };
  put('var/lib/pgsql/data/PG_VERSION', `${pg}\n`);
  put('var/lib/pgsql/data/base/1/1259', 'table');
  put('etc/rhn/rhn.conf', [
    'db_backend = postgresql', 'db_user = spacewalk', 'db_password = s3cret-pw', 'db_name = susemanager',
    'db_host = old-server.example.com', 'db_port = 5432', 'report_db_host = old-server.example.com',
    'java.hostname = old-server.example.com', '',
  ].join('\n'));
  put('etc/cobbler/settings.yaml', 'client_use_localhost: false\nserver: 127.0.0.1\n');
  put('etc/uyuni-release', 'Uyuni release 2024.10\n');
  put('var/spacewalk/packages/1/a.rpm', 'rpm');
  return src;
}

interface SyncRun { status: number | null; stdout: string; stderr: string; log: string; target: string; mig: string }

function runDataSync(env: Record<string, string>, pg = '14'): SyncRun {
  const dir = tempDir('uyuni-cdk-sync-');
  const bin = fakeBin(dir);
  const target = path.join(dir, 'target');
  const mig = path.join(dir, 'migration-data');
  fs.mkdirSync(mig);
  const log = path.join(dir, 'log');
  fs.writeFileSync(log, '');
  const r = spawnSync('sh', ['-c', readScript('data-sync.sh')], {
    encoding: 'utf8',
    env: {
      PATH: `${bin}:${process.env.PATH}`,
      FAKE_SRC: sourceTree(dir, pg),
      FAKE_LOG: log,
      SOURCE_FQDN: 'old-server.example.com',
      SOURCE_USER: 'root',
      SOURCE_PORT: '22',
      VOLUME_PATHS: [...SERVER_VOLUMES.map((v) => v.mountPath), '/var/spacewalk/packages'].join(' '),
      TARGET_ROOT: target,
      OLD_PG_VERSION: '14',
      NEW_PG_VERSION: '16',
      MIGRATION_DIR: mig,
      ...env,
    },
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, log: fs.readFileSync(log, 'utf8'), target, mig };
}

describe('data-sync.sh, run against a fake source over fake ssh and rsync', () => {
  const run = runDataSync({});
  const lines = run.log.split('\n');

  it('succeeds', () => {
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
  });

  it('stops the services on the source before copying anything', () => {
    const firstRsync = lines.findIndex((l) => l.startsWith('rsync '));
    expect(lines.findIndex((l) => l === 'stopped: spacewalk-service stop')).toBeGreaterThan(-1);
    expect(lines.findIndex((l) => l === 'stopped: spacewalk-service stop')).toBeLessThan(firstRsync);
    expect(lines.findIndex((l) => l === 'stopped: systemctl stop postgresql')).toBeLessThan(firstRsync);
  });

  it('copies each volume path that exists on the source with rsync -avz over ssh through sudo', () => {
    const rsyncs = lines.filter((l) => l.startsWith('rsync '));
    expect(rsyncs.map((l) => l.split(' ').at(-2))).toEqual([
      'root@old-server.example.com:/var/lib/pgsql/', 'root@old-server.example.com:/var/spacewalk/',
      'root@old-server.example.com:/etc/rhn/', 'root@old-server.example.com:/etc/cobbler/',
      'root@old-server.example.com:/var/spacewalk/packages/',
    ]);
    for (const l of rsyncs) {
      expect(l).toContain(' -avz ');
      expect(l).toContain(' --rsync-path=sudo rsync ');
      expect(l).toContain('-e ssh -i /root/.ssh/key -p 22 -o BatchMode=yes -o StrictHostKeyChecking=yes');
    }
    expect(fs.readFileSync(path.join(run.target, 'var/spacewalk/packages/1/a.rpm'), 'utf8')).toBe('rpm');
  });

  it('builds an exclude list per path: nested volumes, old-host state, the pre-upgrade database', () => {
    const excludes = (p: string) => lines[lines.findIndex((l) => l.includes(`:${p}/ `)) + 1];
    expect(excludes('/var/lib/pgsql')).toBe('excludes: /lost+found /data/postmaster.pid /data/postmaster.opts /data-pg* ');
    expect(excludes('/var/spacewalk')).toBe('excludes: /lost+found /packages ');
    expect(excludes('/etc/rhn')).toBe('excludes: /lost+found ');
  });

  it('moves the synced PostgreSQL 14 data aside at once, for pg_upgrade', () => {
    const pgsql = path.join(run.target, 'var/lib/pgsql');
    expect(fs.existsSync(path.join(pgsql, 'data'))).toBe(false);
    expect(fs.readFileSync(path.join(pgsql, 'data-pg14/PG_VERSION'), 'utf8')).toBe('14\n');
    expect(fs.existsSync(path.join(pgsql, 'data-pg14/base/1/1259'))).toBe(true);
  });

  it('writes the facts to the migration data, without the database password', () => {
    const data = fs.readFileSync(path.join(run.mig, 'data'), 'utf8');
    expect(parseFacts(data)).toEqual({
      source_fqdn: 'old-server.example.com', fqdn: 'old-server.example.com', timezone: 'Europe/Berlin',
      current_pg_version: '14', db_user: 'spacewalk', db_name: 'susemanager', db_port: '5432',
      has_hub: 'false', debug_java: 'false',
    });
    expect(data).not.toContain('s3cret');
    expect(fs.readFileSync(path.join(run.mig, 'source/uyuni-release'), 'utf8')).toBe('Uyuni release 2024.10\n');
  });

  it('rewrites rhn.conf and the cobbler settings for the container', () => {
    const conf = fs.readFileSync(path.join(run.target, 'etc/rhn/rhn.conf'), 'utf8');
    expect(conf).toMatch(/^db_host = localhost$/m);
    expect(conf).toMatch(/^report_db_host = localhost$/m);
    expect(conf).toMatch(/^db_password = s3cret-pw$/m);
    expect(conf).toMatch(/^java\.hostname = old-server\.example\.com$/m);
    expect(fs.readFileSync(path.join(run.target, 'etc/cobbler/settings.yaml'), 'utf8')).toContain('client_use_localhost: true');
  });

  it('leaves the data in place when the PostgreSQL major stays', () => {
    const same = runDataSync({ NEW_PG_VERSION: '14' });
    expect(same.status).toBe(0);
    expect(fs.readFileSync(path.join(same.target, 'var/lib/pgsql/data/PG_VERSION'), 'utf8')).toBe('14\n');
    expect(fs.existsSync(path.join(same.target, 'var/lib/pgsql/data-pg14'))).toBe(false);
  });

  it('refuses a source of another PostgreSQL version before it stops or copies anything', () => {
    const other = runDataSync({}, '13');
    expect(other.status).toBe(1);
    expect(other.stderr).toContain('old-server.example.com runs PostgreSQL 13, the configuration says migration.postgresql.from: 14');
    expect(other.log).not.toMatch(/^(stopped|rsync)/m);
  });

  it.each([
    ['SOURCE_FQDN', 'old-server.example.com;touch /tmp/pwned'],
    ['SOURCE_FQDN', '-oProxyCommand=sh'],
    ['SOURCE_USER', 'root -o ProxyCommand=sh'],
    ['SOURCE_PORT', '22 -o ProxyCommand=sh'],
  ])('refuses a hostile %s (%s) before any ssh', (name, value) => {
    const bad = runDataSync({ [name]: value });
    expect(bad.status).toBe(1);
    expect(bad.stderr).toContain(`${name} is not`);
    expect(bad.log).toBe('');
  });
});

function runInspect(release: { file: string; text: string } | undefined, data: string) {
  const dir = tempDir('uyuni-cdk-inspect-');
  const bin = fakeBin(dir);
  fs.mkdirSync(path.join(dir, 'source'));
  if (release) fs.writeFileSync(path.join(dir, 'source', release.file), release.text);
  fs.writeFileSync(path.join(dir, 'data'), data);
  return spawnSync('sh', ['-c', readScript('inspect.sh')], {
    encoding: 'utf8',
    env: { PATH: `${bin}:${process.env.PATH}`, RELEASE_DIR: path.join(dir, 'none'), MIGRATION_DATA: path.join(dir, 'data') },
  });
}

describe('inspect.sh on migration data', () => {
  it('prints the migration facts and the image\'s PostgreSQL, and never a password-like line', () => {
    const r = runInspect({ file: 'uyuni-release', text: 'Uyuni release 2024.10\n' },
      'current_pg_version=14\nfqdn=old-server.example.com\ndb_password=oops\nnot a fact\n');
    expect(r.status).toBe(0);
    const facts = parseFacts(r.stdout);
    expect(facts).toMatchObject({
      current_pg_version: '14', fqdn: 'old-server.example.com', image_pg_version: '16',
      current_product: 'uyuni', current_release: '2024.10',
    });
    expect(facts.db_password).toBeUndefined();
    expect(r.stdout).not.toContain('oops');
  });

  it.each([
    ['uyuni-release', 'Uyuni release 2025.10', 'uyuni', '2025.10'],
    ['susemanager-release', 'SUSE Manager release 4.3 (4.3.14)', 'suse-manager', '4.3.14'],
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
    const r = spawnSync('sh', ['-c', readScript('inspect.sh')], {
      encoding: 'utf8', env: { PATH: `${fakeBin(dir)}:${process.env.PATH}`, RELEASE_DIR: dir, MIGRATION_DATA: path.join(dir, 'missing') },
    });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('did uyuni-data-sync run?');
  });
});

describe('post-upgrade.sh', () => {
  it('keeps the image\'s release files where the next inspection reads them', () => {
    const text = readScript('post-upgrade.sh');
    expect(text).toMatch(/for release in uyuni-release susemanager-release; do/);
    expect(text).toContain('cp "/etc/$release" "$RELEASE_DIR/$release"');
    expect(readScript('inspect.sh')).toContain('describe_release "$RELEASE_DIR" current_product current_release');
  });
});
