import * as fs from 'fs';
import * as path from 'path';
import { checkCidr } from '../src/config/schema';
import {
  initdb, pgInstalled, pgTempDir, Server, startServer,
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
