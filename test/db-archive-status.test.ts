/**
 * The db pod's container archive-status (src/scripts/db-archive-status.sh) stops on SIGTERM with
 * nothing of it left: its sleep between two lines goes with it. The pod's stop sends the TERM
 * at any moment; the one that hurt came while the script was starting its sleep, right after a
 * line (where this test sends it): the forked child took the TERM in the shell's own handler
 * before it became `sleep`, the exec dropped it, and the sleep outlived the script (8 of 150
 * stops with the machine loaded, as below; it held jest open for an hour in CI). No database
 * is needed: while PostgreSQL does not answer, the script prints its error line and sleeps the same.
 */
import { ChildProcess, spawn } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import { readScript } from '../src/constructs/script-job';

const SCRIPT = readScript('db-archive-status.sh');
const STOPS = 150;

/** Processes of process group `pgid` that still run (not zombies). */
function leftIn(pgid: number): number[] {
  return fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p)).map(Number).filter((pid) => {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return Number(pgrp) === pgid && state !== 'Z';
    } catch {
      return false;
    }
  });
}

/** One start, a TERM once its first line is out, its exit: what of its process group still runs then. */
async function stopAfterFirstLine(dir: string): Promise<number[]> {
  const child = spawn('sh', ['-c', SCRIPT], {
    env: { PATH: process.env.PATH, PGHOST: `${dir}/no-server`, PGPORT: '5432', POSTGRES_USER: 'postgres', ARCHIVE_DIR: dir, STATUS_INTERVAL: '3600' },
    detached: true, stdio: ['ignore', 'pipe', 'ignore'],
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => {
    out += d.toString();
    if (out.includes('\n')) child.kill('SIGTERM');
  });
  const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
  expect(code).toBe(0);
  expect(out).toMatch(/^archive-status checked=\S+ .*error=/);
  // the parent of what is left is gone: give the kernel a moment to reparent and reap the rest
  await new Promise((r) => setTimeout(r, 30));
  const left = leftIn(child.pid!);
  try {
    process.kill(-child.pid!, 'SIGKILL');
  } catch {
    // nothing of it left
  }
  return left;
}

describe('db-archive-status.sh stops with its sleep', () => {
  const load: ChildProcess[] = [];
  let dir: string;
  beforeAll(() => {
    dir = fs.mkdtempSync(`${os.tmpdir()}/uyuni-cdk-archive-status-`);
    // a loaded machine widens the window between the sleep's fork and its exec (niced: the other
    // suites running beside this one go first)
    for (let i = 0; i < 3; i++) load.push(spawn('nice', ['-n', '19', 'sh', '-c', 'while :; do :; done'], { stdio: 'ignore' }));
  });
  afterAll(() => {
    for (const p of load) p.kill('SIGKILL');
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it(`leaves nothing running after a TERM right after a line, ${STOPS} times`, async () => {
    const leaks: number[][] = [];
    for (let i = 0; i < STOPS; i++) {
      const left = await stopAfterFirstLine(dir);
      if (left.length) leaks.push(left);
    }
    expect(leaks).toEqual([]);
  }, 120_000);
});
