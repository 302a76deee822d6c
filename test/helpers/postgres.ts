import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

/**
 * Debian's PostgreSQL 15 (package postgresql-15, installed by .ci/run), run for real: initdb,
 * pg_ctl and psql as the `postgres` user (the tests run as root), in temp dirs, listening on a
 * unix socket only, stopped by the postmaster's PID.
 */
export const PG_BIN = '/usr/lib/postgresql/15/bin';

export function pgInstalled(): void {
  if (!fs.existsSync(path.join(PG_BIN, 'initdb'))) {
    throw new Error(`${PG_BIN}/initdb is missing: install Debian's postgresql-15 (apt-get install -y postgresql-15; .ci/run does)`);
  }
}

function idOf(flag: '-u' | '-g'): number {
  const r = spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error('no postgres user: install Debian\'s postgresql-15');
  return Number(r.stdout.trim());
}

/** The postgres user's uid and gid on this host. */
export function postgresIds(): { uid: number; gid: number } {
  return { uid: idOf('-u'), gid: idOf('-g') };
}

/** A temp dir the postgres user can enter (mkdtemp makes 0700 dirs of root). */
export function pgTempDir(prefix: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  fs.chmodSync(dir, 0o755);
  return dir;
}

export interface Run { status: number | null; stdout: string; stderr: string }

/** Runs a PostgreSQL program as the postgres user. */
export function asPostgres(program: string, args: string[], input?: string): Run {
  const r = spawnSync('runuser', ['-u', 'postgres', '--', path.join(PG_BIN, program), ...args], {
    encoding: 'utf8', input, env: { PATH: process.env.PATH!, LANG: 'C.UTF-8' },
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** initdb as postgres into `data` (created and handed to postgres when missing). */
export function initdb(data: string, extra: string[] = []): Run {
  if (!fs.existsSync(data)) {
    fs.mkdirSync(data, { recursive: true });
    const { uid, gid } = postgresIds();
    fs.chownSync(data, uid, gid);
  }
  return asPostgres('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '--no-sync', '--locale=C.UTF-8', ...extra]);
}

export interface Server {
  /** The unix socket directory (PGHOST). */
  readonly socketDir: string;
  readonly data: string;
  /** Runs psql as postgres against `db`. */
  psql(db: string, sql: string): Run;
  stop(): void;
}

/**
 * Starts the server on `data` (unix socket in `socketDir`; TCP only on `tcp`'s addresses and
 * port), as postgres. Returns the failure instead of throwing when it does not start.
 */
export function startServer(data: string, socketDir: string, tcp?: { listen: string; port: number; options?: string }): { server?: Server; run: Run } {
  const { uid, gid } = postgresIds();
  fs.mkdirSync(socketDir, { recursive: true });
  fs.chownSync(socketDir, uid, gid);
  const log = path.join(socketDir, 'server.log');
  const network = tcp ? `-c listen_addresses='${tcp.listen}' -p ${tcp.port} ${tcp.options ?? ''}` : "-c listen_addresses=''";
  const run = asPostgres('pg_ctl', ['-D', data, '-l', log, '-w', '-t', '30', '-o', `${network} -c unix_socket_directories='${socketDir}'`, 'start']);
  if (run.status !== 0) {
    const logged = fs.existsSync(log) ? fs.readFileSync(log, 'utf8') : '';
    return { run: { ...run, stderr: `${run.stderr}${logged}` } };
  }
  const pid = Number(fs.readFileSync(path.join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
  const server: Server = {
    socketDir,
    data,
    // The socket's name carries the port.
    psql: (db, sql) => asPostgres('psql', ['-X', '-q', '-A', '-t', '-v', 'ON_ERROR_STOP=1', '-h', socketDir, ...(tcp ? ['-p', String(tcp.port)] : []), '-d', db, '-c', sql]),
    stop() {
      try {
        process.kill(pid, 'SIGINT');
      } catch {
        return;
      }
      const until = Date.now() + 30_000;
      for (;;) {
        try {
          process.kill(pid, 0);
        } catch {
          return;
        }
        if (Date.now() > until) {
          process.kill(pid, 'SIGKILL');
          return;
        }
        spawnSync('sleep', ['0.1']);
      }
    },
  };
  return { server, run };
}
