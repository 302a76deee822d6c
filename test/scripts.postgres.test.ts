import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { readScript } from '../src/constructs/script-job';
import {
  asPostgres, initdb, PG_BIN, pgInstalled, pgTempDir, postgresIds, Server, startServer,
} from './helpers/postgres';
import {
  IMAGE_TREE, localSshBin, oldServer, sourceHost, writeTree,
} from './helpers/sshd';

/**
 * What the step scripts assume of PostgreSQL, shown with Debian's real PostgreSQL 15 (initdb,
 * pg_ctl, psql as the postgres user, unix socket only): the ownership a copied data directory
 * needs, initdb on a new ext4 volume, and the migration's rewrite of the distributions' paths.
 */

const dirs: string[] = [];
const servers: Server[] = [];
afterAll(() => {
  for (const s of servers) s.stop();
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});
function tmp(prefix: string): string {
  const d = pgTempDir(prefix);
  dirs.push(d);
  return d;
}

/** Runs a step script as its Job does (sh -c, src/scripts/lib/ inlined), with only PATH and env. */
function run(script: string, env: Record<string, string>, bin?: string) {
  return spawnSync('sh', ['-c', readScript(script)], {
    encoding: 'utf8',
    env: { PATH: `${bin ? `${bin}:` : ''}${PG_BIN}:${process.env.PATH}`, ...env },
  });
}

beforeAll(() => pgInstalled());

describe('data-sync.sh hands the copied PostgreSQL data to the images\' postgres (S2)', () => {
  // The old host's data, as a real cluster owned by its postgres (UID 26 on SUSE), copied with
  // the real rsync through the fake old server of test/helpers/sshd.ts.
  let dir: string;
  let source: string;
  let status: number | null;
  let stderr: string;
  beforeAll(() => {
    dir = tmp('uyuni-cdk-pgsync-');
    const server = oldServer(dir);
    for (const key of Object.keys(server.tree)) if (key.startsWith('/var/lib/pgsql/')) delete server.tree[key];
    const host = sourceHost(dir, server);
    source = path.join(host.root, 'var/lib/pgsql/data');
    expect(initdb(source).status).toBe(0);
    fs.writeFileSync(path.join(source, 'PG_VERSION'), '15\n');
    spawnSync('chown', ['-R', '26:26', source]);
    const bin = localSshBin(dir, host, path.join(dir, 'job.log'));
    fs.mkdirSync(path.join(dir, 'job-ssh'));
    fs.mkdirSync(path.join(dir, 'migration-data'));
    writeTree(path.join(dir, 'image'), IMAGE_TREE);
    const { uid, gid } = postgresIds();
    const r = run('data-sync.sh', {
      SOURCE_FQDN: 'uyuni-old.test', SOURCE_USER: 'root', SOURCE_PORT: '22',
      VOLUME_PATHS: '/var/lib/pgsql /etc/rhn /var/spacewalk /srv/www/', TARGET_ROOT: path.join(dir, 'target'),
      OLD_PG_VERSION: '15', NEW_PG_VERSION: '15', MIGRATION_DIR: path.join(dir, 'migration-data'),
      SSH_DIR: path.join(dir, 'job-ssh'), IMAGE_ROOT: path.join(dir, 'image'),
      // The postgres of this host stands for the images' (999 there).
      PG_OWNER: `${uid}:${gid}`,
    }, bin);
    status = r.status;
    stderr = r.stderr;
  }, 120_000);

  it('the old host\'s data directory, owned by another UID, does not start as postgres', () => {
    const refused = startServer(source, path.join(dir, 'sock-source'));
    if (refused.server) servers.push(refused.server);
    expect(refused.server).toBeUndefined();
    expect(refused.run.stderr).toMatch(/Permission denied|wrong ownership/);
  });

  it('its copy starts after the sync, with the copied data', () => {
    expect(stderr).not.toMatch(/fail/);
    expect(status).toBe(0);
    const copy = path.join(dir, 'target/var/lib/pgsql/data');
    const { uid } = postgresIds();
    expect(fs.statSync(copy).uid).toBe(uid);
    expect(fs.statSync(path.join(copy, 'base')).uid).toBe(uid);
    const started = startServer(copy, path.join(dir, 'sock-copy'));
    expect(started.run.stderr).toBe('');
    servers.push(started.server!);
    expect(started.server!.psql('postgres', 'SELECT 1').stdout.trim()).toBe('1');
    started.server!.stop();
  });
});

describe('db-data-dir.sh lets initdb use a new ext4 volume (S5)', () => {
  /** A new ext4 claim: its root holds an empty lost+found of root, mode 0700. */
  function ext4Claim(): string {
    const claim = path.join(tmp('uyuni-cdk-ext4-'), 'data');
    fs.mkdirSync(path.join(claim, 'lost+found'), { recursive: true, mode: 0o700 });
    const { uid, gid } = postgresIds();
    fs.chownSync(claim, uid, gid);
    return claim;
  }

  it('initdb refuses the claim while it holds lost+found, and makes the cluster after db-data-dir.sh ran', () => {
    const claim = ext4Claim();
    const refused = initdb(claim);
    expect(refused.status).not.toBe(0);
    expect(refused.stderr).toContain('lost+found');
    const r = run('db-data-dir.sh', { PGDATA: claim });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('removed the empty lost+found');
    const made = initdb(claim);
    expect(made.stderr).not.toContain('lost+found');
    expect(made.status).toBe(0);
    expect(fs.readFileSync(path.join(claim, 'PG_VERSION'), 'utf8')).toBe('15\n');
  });

  it('never touches a claim that holds a database, and stops on a lost+found with files in it', () => {
    const claim = ext4Claim();
    fs.rmdirSync(path.join(claim, 'lost+found'));
    expect(initdb(claim).status).toBe(0);
    fs.mkdirSync(path.join(claim, 'lost+found'));
    const kept = run('db-data-dir.sh', { PGDATA: claim });
    expect(kept.status).toBe(0);
    expect(kept.stdout).toContain('holds PostgreSQL 15, left as it is');
    expect(fs.existsSync(path.join(claim, 'lost+found'))).toBe(true);

    const repaired = ext4Claim();
    fs.writeFileSync(path.join(repaired, 'lost+found', '#1234'), 'a repaired file');
    const stopped = run('db-data-dir.sh', { PGDATA: repaired });
    expect(stopped.status).toBe(1);
    expect(stopped.stderr).toContain('lost+found holds files');
    expect(fs.existsSync(path.join(repaired, 'lost+found', '#1234'))).toBe(true);
  });
});

describe('db-finalize.sh rewrites the distributions\' paths in a real rhnKickstartableTree (S1)', () => {
  let server: Server;
  let dir: string;
  const db = 'susemanager';
  const query = (sql: string) => {
    const r = server.psql(db, sql);
    expect(r.stderr).toBe('');
    return r.stdout.trim();
  };

  beforeAll(() => {
    dir = tmp('uyuni-cdk-finalize-pg-');
    const data = path.join(dir, 'data');
    expect(initdb(data).status).toBe(0);
    const started = startServer(data, path.join(dir, 'sock'));
    expect(started.run.stderr).toBe('');
    server = started.server!;
    servers.push(server);
    expect(asPostgres('createdb', ['-h', server.socketDir, db]).status).toBe(0);
    // The table's shape: uyuni schema/spacewalk/common/tables/rhnKickstartableTree.sql @ 25f9d889
    // (the foreign keys left out), and the tables the system overview refresh reads and fills.
    query(`CREATE TABLE rhnKickstartableTree (
      id NUMERIC NOT NULL PRIMARY KEY, org_id NUMERIC, label VARCHAR(64) NOT NULL, base_path VARCHAR(256) NOT NULL,
      channel_id NUMERIC NOT NULL, cobbler_id VARCHAR(64), cobbler_xen_id VARCHAR(64), boot_image VARCHAR(128) DEFAULT ('spacewalk-koan'),
      kstree_type NUMERIC NOT NULL, install_type NUMERIC NOT NULL, kernel_options VARCHAR(2048), kernel_options_post VARCHAR(2048),
      last_modified TIMESTAMPTZ DEFAULT (current_timestamp) NOT NULL, created TIMESTAMPTZ DEFAULT (current_timestamp) NOT NULL,
      modified TIMESTAMPTZ DEFAULT (current_timestamp) NOT NULL);
      CREATE UNIQUE INDEX rhn_kstree_oid_label_uq ON rhnKickstartableTree (org_id, label);
      CREATE SEQUENCE rhn_task_queue_id_seq;
      CREATE TABLE rhnTaskQueue (id NUMERIC NOT NULL, org_id NUMERIC NOT NULL, task_name VARCHAR(64) NOT NULL, task_data NUMERIC);
      CREATE TABLE rhnServer (id NUMERIC NOT NULL PRIMARY KEY);
      CREATE TABLE rhnTaskoBunch (id NUMERIC NOT NULL PRIMARY KEY, name VARCHAR(80) NOT NULL);
      CREATE TABLE rhnTaskoTemplate (id NUMERIC NOT NULL PRIMARY KEY, bunch_id NUMERIC NOT NULL);
      CREATE TABLE rhnTaskoRun (id NUMERIC NOT NULL PRIMARY KEY, template_id NUMERIC NOT NULL);
      INSERT INTO rhnKickstartableTree (id, org_id, label, base_path, channel_id, kstree_type, install_type) VALUES
        (1, 1, 'centos7', '/var/distros/centos7', 10, 1, 1),
        (2, 2, 'sles15', '/srv/www/htdocs/pub/sles15/', 11, 1, 1),
        (3, 1, 'centos7-copy', '/var/distros/centos7', 10, 1, 1),
        (4, 1, 'gone', '/var/distros/missing', 12, 1, 1);
      INSERT INTO rhnServer (id) VALUES (1000010000), (1000010001);`);
  }, 60_000);

  /**
   * Stands in for uyuni server-image root/docker-entrypoint-init.d/90-pgsqlFinalize.sh @ 17708150:
   * no switch; it asks the database whether the collation versions of MANAGER_DB_NAME differ from
   * the library's (through psql instead of spacewalk-sql) and reindexes only then.
   */
  function finalizeStandIn(): string {
    const script = path.join(dir, '90-pgsqlFinalize.sh');
    fs.writeFileSync(script, `#!/bin/sh
set -e
changed=$(psql -X -q -A -t -U "$MANAGER_USER" -h "$MANAGER_DB_HOST" -d "$MANAGER_DB_NAME" -c "SELECT c.collversion <> pg_collation_actual_version(c.oid) FROM pg_collation c, pg_database d WHERE c.collname = d.datcollate AND d.datname = '$MANAGER_DB_NAME'")
if [ "$changed" != f ]; then echo "Reindexing database."; psql -X -q -U "$MANAGER_USER" -h "$MANAGER_DB_HOST" -d "$MANAGER_DB_NAME" -c "REINDEX DATABASE \\"$MANAGER_DB_NAME\\""; fi
`, { mode: 0o755 });
    return script;
  }

  function finalize(mig: string) {
    return run('db-finalize.sh', {
      FINALIZE_SCRIPT: finalizeStandIn(), MIGRATION_DIR: mig,
      MANAGER_DB_HOST: server.socketDir, MANAGER_DB_PORT: '5432', MANAGER_DB_NAME: db, MANAGER_USER: 'postgres', MANAGER_PASS: 'unused',
    });
  }

  it('points each distribution the data sync copied at /srv/www/distributions/<target>, leaves the others, queues the overview refresh once', () => {
    const mig = tmp('uyuni-cdk-finalize-mig-');
    // What data-sync.sh writes: its CSV line (target, old base_path as the database has it) and the new path.
    fs.writeFileSync(path.join(mig, 'distributions.csv'),
      '1-centos7,/var/distros/centos7,/srv/www/distributions/1-centos7\n'
      + '2-sles15,/srv/www/htdocs/pub/sles15/,/srv/www/distributions/2-sles15\n');
    const r = finalize(mig);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('distributions rewritten, system overview refresh queued');
    expect(query('SELECT id, base_path FROM rhnKickstartableTree ORDER BY id').split('\n')).toEqual([
      '1|/srv/www/distributions/1-centos7', '2|/srv/www/distributions/2-sles15', '3|/srv/www/distributions/1-centos7',
      '4|/var/distros/missing',
    ]);
    expect(query("SELECT task_name, task_data FROM rhnTaskQueue ORDER BY task_data").split('\n'))
      .toEqual(['update_system_overview|1000010000', 'update_system_overview|1000010001']);

    // Once: a second run (a retried step) changes nothing.
    const again = finalize(mig);
    expect(again.status).toBe(0);
    expect(again.stdout).toContain('nothing to do');
    expect(query('SELECT count(*) FROM rhnTaskQueue')).toBe('2');
  });

  it('changes nothing when the rewrite fails midway (one transaction)', () => {
    const mig = tmp('uyuni-cdk-finalize-bad-');
    fs.writeFileSync(path.join(mig, 'distributions.csv'), '9-x,/var/distros/missing,/srv/www/distributions/9-x,an extra column\n');
    const r = finalize(mig);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('could not be rewritten in susemanager (nothing was changed)');
    expect(query("SELECT base_path FROM rhnKickstartableTree WHERE id = 4")).toBe('/var/distros/missing');
    expect(fs.existsSync(path.join(mig, '.db-finalized'))).toBe(false);
  });
});
