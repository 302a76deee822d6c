import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as net from 'net';
import * as path from 'path';
import { checkCidr } from '../src/config/schema';
import { readScript } from '../src/constructs/script-job';
import {
  initdb, PG_BIN, pgInstalled, pgTempDir, postgresIds, Server, startServer,
} from './helpers/postgres';

/**
 * db.podsCIDR ends up as the address of a `host all all <network> scram-sha-256` rule of the
 * database's pg_hba.conf (the rule 01-pg_hba.sh @ 5387ff36 writes for the pod network it derives
 * itself). Debian's real PostgreSQL 15 reads such rules here: every network the configuration
 * accepts must be one PostgreSQL takes, IPv6 included, or the database would refuse them all.
 */

const ACCEPTED = ['10.42.0.0/16', '10.8.0.0/14', '0.0.0.0/0', '192.168.1.128/25', 'fd00:10:42::/56', '2001:db8::/48', '::/0', '::ffff:10.42.0.0/112'];

let dir: string;
let server: Server | undefined;
beforeAll(() => {
  pgInstalled();
  dir = pgTempDir('uyuni-cdk-podscidr-');
  const data = path.join(dir, 'data');
  expect(initdb(data).status).toBe(0);
  const rules = ['local all all trust', ...ACCEPTED.map((n) => `host all all ${n} scram-sha-256`)];
  fs.writeFileSync(path.join(data, 'pg_hba.conf'), `${rules.join('\n')}\n`);
  const started = startServer(data, path.join(dir, 'sock'));
  if (!started.server) throw new Error(`PostgreSQL did not start with the rules: ${started.run.stderr}`);
  server = started.server;
}, 60_000);
afterAll(() => {
  server?.stop();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

describe('db.podsCIDR values in a real pg_hba.conf (PostgreSQL 15)', () => {
  it('accepts each of them in the configuration', () => {
    for (const n of ACCEPTED) expect([n, checkCidr(n)]).toEqual([n, true]);
  });

  it('are all host rules PostgreSQL reads without error, with the prefix as netmask', () => {
    const r = server!.psql('postgres', "SELECT address || ' ' || netmask || ' ' || coalesce(error, 'ok') FROM pg_hba_file_rules WHERE type = 'host' ORDER BY line_number");
    expect(r.status).toBe(0);
    expect(r.stdout.trim().split('\n')).toEqual([
      '10.42.0.0 255.255.0.0 ok',
      '10.8.0.0 255.252.0.0 ok',
      '0.0.0.0 0.0.0.0 ok',
      '192.168.1.128 255.255.255.128 ok',
      'fd00:10:42:: ffff:ffff:ffff:ff00:: ok',
      '2001:db8:: ffff:ffff:ffff:: ok',
      ':: :: ok',
      '::ffff:10.42.0.0 ffff:ffff:ffff:ffff:ffff:ffff:ffff:0 ok',
    ]);
  });

  it('refuses what PostgreSQL would not take as an address (a bare host, a hostname, a bad prefix)', () => {
    for (const n of ['10.42.0.0', 'db.uyuni.svc.cluster.local/16', '10.42.0.0/33', 'fd00::/129']) expect(checkCidr(n)).not.toBe(true);
  });
});

/**
 * src/scripts/db-pods-cidr.sh, the db pod's init container, against a real PostgreSQL 15 whose
 * pg_hba.conf has the shape 01-pg_hba.sh @ 5387ff36 gives it (`include_if_exists
 * pg_hba_custom.conf` first, then the image's rules), minus the image's own loopback rules, so
 * that only the written rule can let a TCP client in. One host: 127.0.0.1 is "inside"
 * db.podsCIDR 127.0.0.0/8, ::1 is "outside" it. PostgreSQL 15 has no `include` in pg_hba.conf
 * (16 added it; the image runs 18), so the test puts the file's lines where the directive
 * stands, which is what `include_if_exists` does. SSL is on, as in the image (its `hostssl`
 * rules, and ours, are refused by a server without SSL).
 */
describe('db-pods-cidr.sh lets the pod network in with scram-sha-256 (PostgreSQL 15)', () => {
  const USER_RULE = 'host all all 192.0.2.0/24 scram-sha-256 # the admin\'s own';
  let root: string;
  let data: string;
  let port: number;
  let pg: Server | undefined;
  const custom = () => path.join(data, 'pg_hba_custom.conf');
  const write = (cidr: string, dir = data) => spawnSync('sh', ['-c', readScript('db-pods-cidr.sh')], {
    encoding: 'utf8', env: { PATH: process.env.PATH!, PGDATA: dir, PODS_CIDR: cidr },
  });
  /** A client over TCP, as the server's pods connect (no SSL: the plain-text rule). */
  const connect = (host: string, password = 'secret') => spawnSync(path.join(PG_BIN, 'psql'), ['-X', '-A', '-t', '-h', host, '-p', String(port), '-U', 'app', '-d', 'postgres', '-c', 'SELECT 1'], {
    encoding: 'utf8', env: { PATH: process.env.PATH!, PGPASSWORD: password, PGSSLMODE: 'disable', PGCONNECT_TIMEOUT: '10' },
  });
  const log = () => fs.readFileSync(path.join(root, 'sock', 'server.log'), 'utf8');
  /** pg_hba.conf as 01-pg_hba.sh writes it, the include_if_exists line replaced by the file (PostgreSQL 15). */
  const assemble = () => fs.writeFileSync(path.join(data, 'pg_hba.conf'), [
    fs.readFileSync(custom(), 'utf8').trimEnd(),
    'local all all peer',
    'hostssl reportdb all all scram-sha-256',
    '',
  ].join('\n'));

  beforeAll(async () => {
    root = pgTempDir('uyuni-cdk-podscidr-hba-');
    data = path.join(root, 'data');
    expect(initdb(data).status).toBe(0);
    const { uid, gid } = postgresIds();
    const key = spawnSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=db',
      '-keyout', path.join(data, 'server.key'), '-out', path.join(data, 'server.crt')], { encoding: 'utf8' });
    expect(key.status).toBe(0);
    for (const f of ['server.key', 'server.crt']) {
      fs.chownSync(path.join(data, f), uid, gid);
      fs.chmodSync(path.join(data, f), 0o600);
    }
    fs.appendFileSync(path.join(data, 'postgresql.conf'), "ssl = on\nssl_cert_file = 'server.crt'\nssl_key_file = 'server.key'\n");
    fs.writeFileSync(custom(), `${USER_RULE}\n`, { mode: 0o640 });
    fs.chownSync(custom(), uid, gid);
    port = await new Promise<number>((resolve, reject) => {
      const s = net.createServer();
      s.on('error', reject);
      s.listen(0, '127.0.0.1', () => {
        const { port: p } = s.address() as net.AddressInfo;
        s.close(() => resolve(p));
      });
    });
  }, 60_000);
  afterAll(() => {
    pg?.stop();
    if (root) fs.rmSync(root, { recursive: true, force: true });
  });

  it('appends its marked block to pg_hba_custom.conf, keeping the admin\'s rule, owner and mode, and changes nothing when run again', () => {
    const first = write('127.0.0.0/8');
    expect(first.stderr).toBe('');
    expect(first.status).toBe(0);
    const text = fs.readFileSync(custom(), 'utf8');
    expect(text.split('\n')).toEqual([
      USER_RULE,
      expect.stringMatching(/^# BEGIN uyuni-cdk db\.podsCIDR/),
      // 01-pg_hba.sh's order: Traefik (kube-system) is refused plain text before the pod network is allowed.
      'hostssl reportdb all .kube-system.svc.cluster.local scram-sha-256',
      'host all all .kube-system.svc.cluster.local reject',
      'host all all 127.0.0.0/8 scram-sha-256',
      '# END uyuni-cdk db.podsCIDR',
      '',
    ]);
    const stat = fs.statSync(custom());
    expect([stat.uid, stat.mode & 0o777]).toEqual([postgresIds().uid, 0o640]);
    const again = write('127.0.0.0/8');
    expect(again.status).toBe(0);
    expect(again.stdout).toContain('already allows 127.0.0.0/8');
    expect(fs.readFileSync(custom(), 'utf8')).toBe(text);
  });

  it('lets a client from the network in with scram-sha-256 and refuses one outside it', () => {
    assemble();
    const started = startServer(data, path.join(root, 'sock'), { listen: '127.0.0.1,::1', port, options: '-c log_connections=on' });
    if (!started.server) throw new Error(`PostgreSQL did not start: ${started.run.stderr}`);
    pg = started.server;
    expect(pg.psql('postgres', "SET password_encryption = 'scram-sha-256'; CREATE ROLE app LOGIN PASSWORD 'secret'").status).toBe(0);

    const inside = connect('127.0.0.1');
    expect(inside.stderr).toBe('');
    expect(inside.stdout.trim()).toBe('1');
    expect(log()).toMatch(/connection authenticated: identity="app" method=scram-sha-256 \(.*pg_hba\.conf:5\)/);
    expect(connect('127.0.0.1', 'wrong').stderr).toContain('password authentication failed for user "app"');

    const outside = connect('::1');
    expect(outside.status).not.toBe(0);
    expect(outside.stderr).toContain('no pg_hba.conf entry for host "::1", user "app", database "postgres", no encryption');
  });

  it('replaces its rule when db.podsCIDR changes, never adding a second block', () => {
    expect(write('::1/128').status).toBe(0);
    const text = fs.readFileSync(custom(), 'utf8');
    expect(text.match(/# BEGIN uyuni-cdk/g)).toHaveLength(1);
    expect(text).toContain('host all all ::1/128 scram-sha-256');
    expect(text).not.toContain('127.0.0.0/8');
    expect(text.startsWith(`${USER_RULE}\n`)).toBe(true);
    assemble();
    expect(pg!.psql('postgres', 'SELECT pg_reload_conf()').status).toBe(0);
    expect(connect('::1').stdout.trim()).toBe('1');
    expect(connect('127.0.0.1').stderr).toContain('no pg_hba.conf entry for host "127.0.0.1"');
  });

  it('with db.archiving (REPLICATION=on) lets pg_basebackup of a REPLICATION role in from the network with scram-sha-256, as plan db-basebackup connects', () => {
    const backup = (user: string, dir: string) => spawnSync('runuser', ['-u', 'postgres', '--', path.join(PG_BIN, 'pg_basebackup'),
      '-w', '-h', '::1', '-p', String(port), '-U', user, '-D', dir, '-Ft', '-X', 'fetch', '-c', 'fast'], {
      encoding: 'utf8', env: { PATH: process.env.PATH!, PGPASSWORD: 'secret', PGSSLMODE: 'disable', PGCONNECT_TIMEOUT: '10' },
    });
    expect(pg!.psql('postgres', "SET password_encryption = 'scram-sha-256'; CREATE ROLE repl LOGIN REPLICATION PASSWORD 'secret'").status).toBe(0);
    /** An empty directory of PostgreSQL's user for a backup. */
    const target = (n: string) => {
      const dir = path.join(root, `base-${n}`);
      fs.mkdirSync(dir, { recursive: true });
      fs.chownSync(dir, postgresIds().uid, postgresIds().gid);
      return dir;
    };
    // Without it: the network's `host all all` rule does not cover replication connections.
    expect(backup('repl', target('before')).stderr).toContain('no pg_hba.conf entry for replication connection from host "::1", user "repl"');
    const r = spawnSync('sh', ['-c', readScript('db-pods-cidr.sh')], {
      encoding: 'utf8', env: { PATH: process.env.PATH!, PGDATA: data, PODS_CIDR: '::1/128', REPLICATION: 'on' },
    });
    expect(r.status).toBe(0);
    assemble();
    expect(pg!.psql('postgres', 'SELECT pg_reload_conf()').status).toBe(0);
    const ok = backup('repl', target('after'));
    expect({ status: ok.status, stderr: ok.stderr }).toEqual({ status: 0, stderr: '' });
    expect(fs.readdirSync(target('after'))).toContain('base.tar');
    expect(log()).toMatch(/replication connection authorized: user=repl/);
    // A role without REPLICATION gets no further.
    expect(backup('app', target('app')).stderr).toContain('must be superuser or replication role to start walsender');
  });

  it('writes nothing on a claim without a database (initdb needs it empty), and a new file is the cluster owner\'s, 0600', () => {
    const empty = path.join(root, 'empty');
    fs.mkdirSync(empty);
    const r = write('10.42.0.0/16', empty);
    expect(r.status).toBe(0);
    expect(fs.readdirSync(empty)).toEqual([]);

    fs.writeFileSync(path.join(empty, 'PG_VERSION'), '18\n');
    fs.chownSync(path.join(empty, 'PG_VERSION'), 999, 999);
    expect(write('10.42.0.0/16', empty).status).toBe(0);
    const stat = fs.statSync(path.join(empty, 'pg_hba_custom.conf'));
    expect([stat.uid, stat.gid, stat.mode & 0o777]).toEqual([999, 999, 0o600]);
    expect(fs.readdirSync(empty).sort()).toEqual(['PG_VERSION', 'pg_hba_custom.conf']);
  });

  it('refuses what is not a CIDR (a second rule smuggled in), writing nothing', () => {
    const before = fs.readFileSync(custom(), 'utf8');
    for (const bad of ['10.42.0.0/16 trust\nhost all all 0.0.0.0/0', '10.42.0.0', 'all']) {
      const r = write(bad);
      expect(r.status).toBe(1);
      expect(r.stderr).toContain('is not a network in CIDR notation');
    }
    expect(fs.readFileSync(custom(), 'utf8')).toBe(before);
  });
});
