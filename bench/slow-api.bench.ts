/**
 * A slow API (`npm run bench -- slow-api`; issue 25): every request answered LATENCY_MS late
 * (default 1000, as the issue measured), against the simulator with dist/install installed, the
 * runtime being the real CLI in its own process. Measures `plan dist/install` (with its diffs),
 * a no-op re-run of `run dist/install`, and `status dist/install`: wall time, requests, the
 * sequential round trips (requests that waited on an earlier answer: test/sim/round-trips.ts,
 * a count that does not depend on the machine's load), and the most reads and dry runs in flight
 * at once (each parallel within its bound: at most 8 reads, 16 dry runs; issue 36).
 * Targets at 1 s per request: plan ≤ 40 s, run ≤ 120 s (its writes stay one at a time in step
 * order, and each step's waits start after its writes: ~70 applies), status ≤ 10 s; never more
 * than 8 reads in flight (+1: a step's waits list while the lock renews) nor more than 16 dry
 * runs. Exits 1 when a target is missed. Measured on main before the parallel reads: plan
 * 140.7 s, run 168.6 s, status 3.9 s; plan's figures at 250 ms before and after issue 36 are in
 * docs/runtime.md ("Performance: round trips").
 */
import { spawn } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { DRY_RUN_CONCURRENCY, READ_CONCURRENCY } from '../src/kube/limit';
import { peakInFlight, roundTrips, startSimulator, Simulator } from '../test/sim';

const ROOT = path.join(__dirname, '..');
const BIN = process.env.UYUNI_CDK_BIN ?? path.join(ROOT, 'bin', 'uyuni-cdk.js');
const LATENCY_MS = Number(process.env.LATENCY_MS ?? 1000);
const scale = LATENCY_MS / 1000;
const TARGET = { planMs: 40_000 * scale, runMs: 120_000 * scale, statusMs: 10_000 * scale, reads: READ_CONCURRENCY + 1, dryRuns: DRY_RUN_CONCURRENCY };

function cli(sim: Simulator, args: string[]): Promise<{ ms: number; code: number | null; out: string }> {
  const t0 = performance.now();
  const child = spawn(process.execPath, [BIN, ...args, '--kubeconfig', sim.kubeconfigPath], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d) => { out += d; });
  child.stderr.on('data', (d) => { out += d; });
  return new Promise((resolve) => child.on('exit', (code) => resolve({ ms: performance.now() - t0, code, out })));
}

async function main(): Promise<void> {
  const install = path.join(ROOT, 'dist', 'install');
  const sim = await startSimulator();
  const runDir = () => fs.mkdtempSync(path.join(os.tmpdir(), 'bench-slow-'));
  const setup = await cli(sim, ['run', install, '--run-dir', runDir()]);
  if (setup.code !== 0) throw new Error(`install exited ${setup.code}:\n${setup.out}`);
  sim.setLatency(LATENCY_MS);
  const misses: string[] = [];
  const measure = async (what: string, args: string[], targetMs: number, ok: (code: number | null) => boolean) => {
    sim.resetInFlight();
    const mark = sim.requests.length;
    const r = await cli(sim, args);
    if (!ok(r.code)) throw new Error(`${what} exited ${r.code}:\n${r.out}`);
    const requests = sim.requests.length - mark;
    const writes = sim.requests.slice(mark).filter((q) => q.method !== 'GET' && !/dryRun=All/.test(q.query)).length;
    const sent = sim.requests.slice(mark);
    const chain = roundTrips(sent);
    const reads = peakInFlight(sent.filter((q) => q.method === 'GET' && !/watch=/.test(q.query)));
    const dryRuns = peakInFlight(sent.filter((q) => /dryRun=All/.test(q.query)));
    console.log(`${what}: ${(r.ms / 1000).toFixed(1)} s, ${requests} requests (${writes} writes) in ${chain} sequential round trips, `
      + `at most ${reads} reads and ${dryRuns} dry runs in flight (target ≤ ${(targetMs / 1000).toFixed(0)} s, ≤ ${TARGET.reads} reads, ≤ ${TARGET.dryRuns} dry runs; ${LATENCY_MS} ms per request)`);
    if (r.ms > targetMs) misses.push(`${what} time`);
    if (reads > TARGET.reads || dryRuns > TARGET.dryRuns) misses.push(`${what} concurrency`);
  };
  await measure('plan dist/install', ['plan', install], TARGET.planMs, (c) => c === 0);
  await measure('run dist/install (a no-op re-run)', ['run', install, '--run-dir', runDir()], TARGET.runMs, (c) => c === 0);
  await measure('status dist/install', ['status', install], TARGET.statusMs, (c) => c === 0);
  await sim.stop();
  if (misses.length) {
    console.log(`missed: ${misses.join(', ')}`);
    process.exit(1);
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
