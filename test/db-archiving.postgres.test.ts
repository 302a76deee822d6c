import { spawn, spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { archiveSettingLines } from '../src/constructs/db-deployment';
import { readScript } from '../src/constructs/script-job';
import { archiveCommand } from '../src/model/db';
import { parseArchiveLine } from '../src/runtime/verbs/archive-status';
import {
  initdb, PG_BIN, pgInstalled, pgTempDir, postgresIds, Server, startServer,
} from './helpers/postgres';

/**
 * db.archiving in Debian's real PostgreSQL 15: the db pod's init container
 * (src/scripts/db-archiving.sh) writes the product's settings, with the product's archive_command
 * (src/model/db.ts archiveCommand, only the directory is the test's), into postgresql.conf; a base
 * backup without WAL of its own (pg_basebackup -X none: every segment comes from the archive),
 * rows, a timestamp, more rows, a WAL switch; then the base backup restored with a
 * restore_command (upstream's `cp <dir>/%f %p`, uyuni-tools b6ad4452
 * mgradm/cmd/backup/db/types.go RestoreCommand) and recovery_target_time: the rows before the
 * timestamp are there, the ones after it are not.
 */

let root: string;
let archive: string;
let base: string;
let primary: Server | undefined;
let restored: Server | undefined;
const { uid, gid } = postgresIds();

/** A directory of the postgres user's. */
const pgDir = (p: string): string => {
  fs.mkdirSync(p, { recursive: true });
  fs.chownSync(p, uid, gid);
  return p;
};

/** Polls `check` (a query's answer) until it holds; fails with the last answer after 60 s. */
function until(what: string, check: () => boolean): void {
  const deadline = Date.now() + 60_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`);
    spawnSync('sleep', ['0.2']);
  }
}

/**
 * Starts the db pod's container archive-status (src/scripts/db-archive-status.sh) against the
 * server at `socketDir`, takes its first line, then stops it with SIGTERM (as the pod's stop
 * does): the line, and how it ended.
 */
function firstReport(socketDir: string): Promise<{ line: string; code: number | null; signal: NodeJS.Signals | null }> {
  const child = spawn('sh', ['-c', readScript('db-archive-status.sh')], {
    env: {
      PATH: `${PG_BIN}:${process.env.PATH}`, PGHOST: socketDir, PGPORT: '5432', POSTGRES_USER: 'postgres', POSTGRES_PASSWORD: '',
      ARCHIVE_DIR: archive, STATUS_INTERVAL: '3600',
    },
    // a process group of its own: what is left of it once it exited is killed, as a container's
    // processes die with it (a sleep that outlived it held the test runner open for an hour)
    detached: true,
  });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('\n')) child.kill('SIGTERM');
    });
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // nothing of it left
      }
      resolve({ line: out.split('\n')[0], code, signal });
    });
  });
}

beforeAll(() => {
  pgInstalled();
  root = pgTempDir('uyuni-cdk-archiving-');
  pgDir(path.join(root, 'work'));
  archive = path.join(root, 'work', 'archive');
  fs.mkdirSync(archive);
});
afterAll(() => {
  restored?.stop();
  primary?.stop();
  if (root) fs.rmSync(root, { recursive: true, force: true });
});

describe('db-archiving.sh and the product archive_command (PostgreSQL 15)', () => {
  let data: string;
  const run = (dir: string) => spawnSync('sh', ['-c', readScript('db-archiving.sh')], {
    encoding: 'utf8', env: { PATH: process.env.PATH!, PGDATA: dir, ARCHIVE_DIR: archive, ARCHIVE_SETTINGS: archiveSettingLines(archive) },
  });

  it('writes nothing on a claim without a database', () => {
    const empty = pgDir(path.join(root, 'empty'));
    const r = run(empty);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('holds no database yet');
    expect(fs.readdirSync(empty)).toEqual([]);
  });

  it('writes the settings once at the end of postgresql.conf and gives the archive to PostgreSQL\'s user', () => {
    data = path.join(root, 'primary');
    expect(initdb(data).status).toBe(0);
    const before = fs.readFileSync(path.join(data, 'postgresql.conf'), 'utf8');
    expect(run(data).status).toBe(0);
    expect(run(data).stdout).toContain('already archives');
    const conf = fs.readFileSync(path.join(data, 'postgresql.conf'), 'utf8');
    expect(conf.startsWith(before)).toBe(true);
    expect(conf.slice(before.length).split('\n').filter(Boolean)).toEqual([
      expect.stringMatching(/^# BEGIN uyuni-cdk db.archiving/),
      'wal_level = replica',
      'archive_mode = on',
      `archive_command = '${archiveCommand(archive)}'`,
      '# END uyuni-cdk db.archiving',
    ]);
    expect(fs.statSync(archive).uid).toBe(uid);
  });

  it('is what PostgreSQL runs: archive_mode on and the product\'s archive_command', () => {
    const started = startServer(data, path.join(root, 'sock-primary'));
    if (!started.server) throw new Error(`PostgreSQL did not start with the archiving settings: ${started.run.stderr}`);
    primary = started.server;
    expect(primary.psql('postgres', 'SHOW archive_mode').stdout.trim()).toBe('on');
    expect(primary.psql('postgres', 'SHOW archive_command').stdout.trim()).toBe(archiveCommand(archive));
  });

  it('archive-status reports that nothing was archived yet, with the archive claim\'s use, and ends at once on SIGTERM', async () => {
    const r = await firstReport(primary!.socketDir);
    expect({ code: r.code, signal: r.signal }).toEqual({ code: 0, signal: null });
    const now = new Date();
    const parsed = parseArchiveLine(r.line, now);
    expect(parsed).toEqual({
      checked: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
      failedCount: 0,
      usedBytes: expect.any(Number),
      sizeBytes: expect.any(Number),
    });
    expect(parsed!.sizeBytes!).toBeGreaterThan(parsed!.usedBytes!);
  });

  it('restores a base backup to a point in time from the archive: the rows before it are there, the ones after it are gone', async () => {
    const pg = primary!;
    expect(pg.psql('postgres', 'CREATE TABLE t (id int, phase text)').status).toBe(0);
    // Older WAL and an older base backup in the archive: what the new base backup makes useless.
    for (let i = 0; i < 3; i++) pg.psql('postgres', 'SELECT pg_switch_wal()');
    const older = pg.psql('postgres', 'SELECT pg_walfile_name(pg_switch_wal())').stdout.trim();
    until(`segment ${older} in the archive`, () => fs.existsSync(path.join(archive, older)));
    pgDir(path.join(archive, 'base'));
    pgDir(path.join(archive, 'base', '20260101T000000Z'));
    // The base backup of plan db-basebackup (src/scripts/db-basebackup.sh), as PostgreSQL's user.
    const take = spawnSync('runuser', ['-u', 'postgres', '--', 'sh', '-c', readScript('db-basebackup.sh')], {
      encoding: 'utf8',
      env: {
        PATH: `${PG_BIN}:${process.env.PATH}`, PGHOST: pg.socketDir, PGPORT: '5432', POSTGRES_USER: 'postgres', POSTGRES_PASSWORD: '',
        ARCHIVE_DIR: archive,
      },
    });
    if (take.status !== 0) throw new Error(`db-basebackup.sh failed: ${take.stdout}${take.stderr}`);
    const facts = Object.fromEntries(take.stdout.split('\n').filter((l) => /^[a-z_]+=/.test(l)).map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]));
    expect(facts).toEqual({
      base_backup: expect.stringMatching(/^\d{8}T\d{6}Z$/), base_start_wal: expect.stringMatching(/^[0-9A-F]{24}$/),
      pruned_wal: expect.stringMatching(/^[1-9]\d*$/), pruned_base: '20260101T000000Z', archive_wal: expect.stringMatching(/^\d+$/),
    });
    expect(fs.readdirSync(path.join(archive, 'base'))).toEqual([facts.base_backup]);
    expect(fs.readdirSync(path.join(archive, 'base', facts.base_backup)).sort()).toEqual(['backup_manifest', 'base.tar.gz']);
    // Every segment left is the backup's first or newer; the older ones are gone.
    const segments = fs.readdirSync(archive).filter((f) => /^[0-9A-F]{24}$/.test(f));
    expect(fs.existsSync(path.join(archive, older))).toBe(false);
    expect(segments.every((f) => f.slice(8) >= facts.base_start_wal.slice(8))).toBe(true);

    expect(pg.psql('postgres', "INSERT INTO t SELECT g, 'before' FROM generate_series(1, 100) g").status).toBe(0);
    const target = pg.psql('postgres', 'SELECT clock_timestamp()').stdout.trim();
    expect(pg.psql('postgres', "INSERT INTO t SELECT g, 'after' FROM generate_series(101, 150) g").status).toBe(0);
    expect(pg.psql('postgres', 'SELECT phase, count(*) FROM t GROUP BY phase ORDER BY phase').stdout.trim().split('\n')).toEqual(['after|50', 'before|100']);
    const last = pg.psql('postgres', 'SELECT pg_walfile_name(pg_switch_wal())').stdout.trim();
    expect(last).toMatch(/^[0-9A-F]{24}$/);
    until(`segment ${last} in the archive`, () => fs.existsSync(path.join(archive, last)));
    // What `status` shows: pg_stat_archiver's newest archived segment, the one just switched
    // (archiving is sequential: it is reported once archived), its time, no failure.
    until(`pg_stat_archiver to report ${last}`, () => pg.psql('postgres', 'SELECT last_archived_wal FROM pg_stat_archiver').stdout.trim() === last);
    const report = parseArchiveLine((await firstReport(pg.socketDir)).line, new Date());
    expect(report).toMatchObject({ lastArchivedWal: last, failedCount: 0 });
    expect(report!.error).toBeUndefined();
    expect(Date.parse(report!.lastArchivedTime!)).toBeLessThanOrEqual(Date.parse(report!.checked!));
    expect(report!.ageSeconds).toBeGreaterThanOrEqual(0);
    pg.stop();
    primary = undefined;
    const down = parseArchiveLine((await firstReport(pg.socketDir)).line, new Date());
    expect(down).toMatchObject({ error: expect.stringContaining('connection to server on socket') });
    expect(down!.lastArchivedWal).toBeUndefined();
    // Whole segments only, none half-copied.
    const files = fs.readdirSync(archive);
    expect(files.filter((f) => f.endsWith('.tmp'))).toEqual([]);
    expect(files).toContain(last);

    // Plan db-pitr's restore (src/scripts/db-pitr-restore.sh) over a data directory holding
    // another database: its content goes, the base backup before the target comes.
    base = pgDir(path.join(root, 'work', 'restored'));
    fs.writeFileSync(path.join(base, 'PG_VERSION'), 'stale\n');
    const pitr = (time: string) => spawnSync('sh', ['-c', readScript('db-pitr-restore.sh')], {
      encoding: 'utf8', env: { PATH: process.env.PATH!, PGDATA: base, ARCHIVE_DIR: archive, TARGET_TIME: time },
    });
    const early = pitr('2020-01-01T00:00:00Z');
    expect({ status: early.status, err: early.stderr.trim() }).toEqual({
      status: 1, err: 'db-pitr-restore: no base backup in ' + archive + '/base was taken before 2020-01-01T00:00:00Z; nothing was changed',
    });
    expect(fs.readFileSync(path.join(base, 'PG_VERSION'), 'utf8')).toBe('stale\n');
    const restore = pitr(target);
    if (restore.status !== 0) throw new Error(`db-pitr-restore.sh failed: ${restore.stdout}${restore.stderr}`);
    expect(restore.stdout).toContain(`pitr_base=${facts.base_backup}\npitr_target=${target}\n`);
    expect(fs.existsSync(path.join(base, 'recovery.signal'))).toBe(true);
    expect(fs.statSync(path.join(base, 'PG_VERSION')).uid).toBe(uid);
    const started = startServer(base, path.join(root, 'sock-restored'));
    if (!started.server) throw new Error(`the restored PostgreSQL did not start: ${started.run.stderr}`);
    restored = started.server;
    until('the end of recovery', () => restored!.psql('postgres', 'SELECT pg_is_in_recovery()').stdout.trim() === 'f');
    expect(restored.psql('postgres', 'SELECT phase, count(*), min(id), max(id) FROM t GROUP BY phase ORDER BY phase').stdout.trim().split('\n'))
      .toEqual(['before|100|1|100']);
    const log = fs.readFileSync(path.join(root, 'sock-restored', 'server.log'), 'utf8');
    expect(log).toMatch(/recovery stopping before commit of transaction \d+, time /);
  });
});

describe('the archive_command never overwrites an archived segment', () => {
  const cmd = (dir: string, p: string, f: string) => spawnSync('sh', ['-c', archiveCommand(dir).split('%p').join(p).split('%f').join(f)], { encoding: 'utf8' });

  it('copies a new segment, accepts the same one again, and refuses a different one of the same name, keeping the archived copy', () => {
    const dir = fs.mkdtempSync(path.join(root, 'cmd-'));
    const seg = path.join(dir, 'src');
    fs.writeFileSync(seg, 'segment one');
    const dest = fs.mkdtempSync(path.join(root, 'dest-'));
    expect(cmd(dest, seg, '000000010000000000000001').status).toBe(0);
    expect(fs.readFileSync(path.join(dest, '000000010000000000000001'), 'utf8')).toBe('segment one');
    expect(cmd(dest, seg, '000000010000000000000001').status).toBe(0);
    fs.writeFileSync(seg, 'segment two');
    expect(cmd(dest, seg, '000000010000000000000001').status).not.toBe(0);
    expect(fs.readFileSync(path.join(dest, '000000010000000000000001'), 'utf8')).toBe('segment one');
    expect(fs.readdirSync(dest)).toEqual(['000000010000000000000001']);
  });

  it('leaves no segment under its own name when the copy fails', () => {
    const dest = fs.mkdtempSync(path.join(root, 'dest-'));
    expect(cmd(dest, path.join(root, 'missing'), '000000010000000000000002').status).not.toBe(0);
    expect(fs.readdirSync(dest)).toEqual([]);
  });
});
