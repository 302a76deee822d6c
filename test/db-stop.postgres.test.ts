import { ChildProcess, spawn, spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { DB_PRE_STOP } from '../src/constructs/db-deployment';
import {
  asPostgres, initdb, PG_BIN, pgInstalled, pgTempDir, Server, startServer,
} from './helpers/postgres';

/**
 * The db container's preStop (src/scripts/db-stop.sh, DB_PRE_STOP) against Debian's real
 * PostgreSQL 15 under load: open sessions, one of them in a long transaction. The preStop's fast
 * shutdown ends with no postmaster.pid and a cluster "shut down"; the stop without it (the image's
 * SIGTERM, PostgreSQL's smart shutdown, then SIGKILL at the end of the grace) leaves postmaster.pid
 * and a cluster "in production", which the backup and pg_upgrade refuse.
 */

const dirs: string[] = [];
const clients: ChildProcess[] = [];
const servers: Server[] = [];
beforeAll(() => pgInstalled());
afterAll(() => {
  for (const c of clients) if (c.exitCode === null && c.pid) process.kill(c.pid, 'SIGKILL');
  for (const s of servers) s.stop();
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

const pidOf = (data: string) => Number(fs.readFileSync(path.join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
const state = (data: string) => /Database cluster state:\s*(.*)/.exec(asPostgres('pg_controldata', [data]).stdout)?.[1].trim();

/** A server with a table, two idle sessions and one in a long transaction. */
function busyServer(prefix: string): { data: string; server: Server } {
  const dir = pgTempDir(prefix);
  dirs.push(dir);
  const data = path.join(dir, 'data');
  expect(initdb(data).status).toBe(0);
  const started = startServer(data, path.join(dir, 'sock'));
  if (!started.server) throw new Error(`PostgreSQL did not start: ${started.run.stderr}`);
  const server = started.server;
  servers.push(server);
  expect(server.psql('postgres', 'CREATE TABLE t (n int)').status).toBe(0);
  const psql = (sql: string) => {
    const c = spawn('runuser', ['-u', 'postgres', '--', path.join(PG_BIN, 'psql'), '-X', '-q', '-h', server.socketDir, '-d', 'postgres', '-c', sql], { stdio: 'ignore' });
    clients.push(c);
  };
  psql('BEGIN; INSERT INTO t VALUES (1); SELECT pg_sleep(600)');
  psql('SELECT pg_sleep(600)');
  psql('SELECT pg_sleep(600)');
  for (;;) {
    const r = server.psql('postgres', "SELECT count(*) FROM pg_stat_activity WHERE query LIKE '%pg_sleep(600)%' AND pid <> pg_backend_pid()");
    if (r.stdout.trim() === '3') break;
    spawnSync('sleep', ['0.1']);
  }
  return { data, server };
}

describe('the db container\'s preStop shuts a busy PostgreSQL 15 down cleanly', () => {
  it('runs pg_ctl stop -m fast as postgres: no postmaster.pid left, the cluster is "shut down"', () => {
    const { data } = busyServer('uyuni-cdk-dbstop-');
    expect(state(data)).toBe('in production');
    // As the container runs it (root, the image's PATH without PostgreSQL's bin directory).
    const [sh, flag, script, name, dataDir] = DB_PRE_STOP;
    expect(dataDir).toBe('/var/lib/pgsql/data');
    const r = spawnSync(sh, [flag, script, name, data], { encoding: 'utf8', env: { PATH: '/usr/sbin:/usr/bin:/sbin:/bin' } });
    expect([r.status, r.stderr]).toEqual([0, expect.any(String)]);
    expect(fs.existsSync(path.join(data, 'postmaster.pid'))).toBe(false);
    expect(state(data)).toBe('shut down');
  }, 120_000);

  it('without it (SIGTERM: smart shutdown waits for the sessions; SIGKILL at the end of the grace) postmaster.pid is left and the cluster is not shut down', () => {
    const { data, server } = busyServer('uyuni-cdk-dbkill-');
    const pid = pidOf(data);
    process.kill(pid, 'SIGTERM');
    const log = path.join(server.socketDir, 'server.log');
    while (!fs.readFileSync(log, 'utf8').includes('received smart shutdown request')) spawnSync('sleep', ['0.1']);
    // Still running: the sessions hold it.
    expect(() => process.kill(pid, 0)).not.toThrow();
    // The end of the grace: the container's processes are killed.
    const children = spawnSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' }).stdout.trim().split('\n').filter(Boolean).map(Number);
    process.kill(pid, 'SIGKILL');
    for (const c of children) {
      try {
        process.kill(c, 'SIGKILL');
      } catch { /* gone */ }
    }
    for (let alive = true; alive;) {
      try {
        process.kill(pid, 0);
        spawnSync('sleep', ['0.1']);
      } catch {
        alive = false;
      }
    }
    expect(fs.existsSync(path.join(data, 'postmaster.pid'))).toBe(true);
    expect(state(data)).toBe('in production');
  }, 120_000);
});
