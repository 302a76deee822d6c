/**
 * Runtime benchmark (`npm run bench -- runtime`), against the API simulator over HTTP, the
 * runtime being the real CLI in its own process:
 * - step-transition latency: a step's Job Complete in the simulator → the first request of the
 *   next step; median over 20 transitions; target ≤ 50 ms (Helm's --wait-for-jobs polls every 2 s);
 * - a 10-step plan of instant Jobs, from the run's first event to its last; target ≤ 2 s
 *   (process start to exit printed too);
 * - peak RSS of the runtime process (VmHWM); target ≤ 150 MB.
 * Exits 1 when a target is missed.
 */
import { spawn } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { startSimulator, Simulator } from '../test/sim';
import { job, namespace, writePlan } from '../test/runtime/plans';
import { median } from './stats';

const BIN = path.join(__dirname, '..', 'bin', 'uyuni-cdk.js');
const TARGET = { latencyMs: 50, tenStepsMs: 2000, rssMb: 150 };

function jobNames(prefix: string, n: number): string[] {
  return Array.from({ length: n }, (_, i) => `${prefix}-${String(i).padStart(2, '0')}`);
}

function plan(names: string[]): string {
  return writePlan([{ name: 'namespace', objects: [namespace()] }, ...names.map((n) => ({ name: n, objects: [job(n)] }))], { name: 'bench' });
}

function peakRssKb(pid: number): number | undefined {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

/** Runs the CLI; returns its wall time, exit code and the highest VmHWM seen. */
function runCli(sim: Simulator, dir: string): Promise<{ ms: number; code: number | null; rssKb: number; out: string }> {
  const runDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-run-'));
  const t0 = performance.now();
  const child = spawn(process.execPath, [BIN, 'run', dir, '--kubeconfig', sim.kubeconfigPath, '--run-dir', runDir, '--output', 'json'], { stdio: ['ignore', 'pipe', 'inherit'] });
  let rssKb = 0;
  let out = '';
  child.stdout.on('data', (d) => { out += d; });
  const poll = setInterval(() => { rssKb = Math.max(rssKb, peakRssKb(child.pid!) ?? 0); }, 5);
  return new Promise((resolve) => child.on('exit', (code) => {
    clearInterval(poll);
    resolve({ ms: performance.now() - t0, code, rssKb, out });
  }));
}

async function main(): Promise<void> {
  const misses: string[] = [];

  // 1. Transition latency over 20 transitions (21 Job steps).
  const names = jobNames('lat', 21);
  let sim = await startSimulator({ jobs: Object.fromEntries(names.map((n) => [n, { durationMs: 0 }])) });
  const lat = await runCli(sim, plan(names));
  if (lat.code !== 0) throw new Error(`latency run exited ${lat.code}:\n${lat.out}`);
  const latencies: number[] = [];
  for (let i = 0; i + 1 < names.length; i++) {
    const complete = sim.events.find((e) => e.kind === 'Job' && e.name === names[i] && e.what === 'Complete');
    const next = sim.requests.find((r) => complete && r.at >= complete.at && r.path.includes(`/jobs/${names[i + 1]}`));
    if (!complete || !next) throw new Error(`no Complete event or next request for ${names[i]}`);
    latencies.push(next.at - complete.at);
  }
  await sim.stop();
  const med = median(latencies);
  console.log(`step-transition latency: median ${med.toFixed(1)} ms over ${latencies.length} transitions (min ${Math.min(...latencies)}, max ${Math.max(...latencies)}; target ≤ ${TARGET.latencyMs} ms)`);
  if (med > TARGET.latencyMs) misses.push('latency');

  // 2. A 10-step plan of instant Jobs (plus its namespace step), process start to exit.
  const ten = jobNames('ten', 10);
  sim = await startSimulator({ jobs: Object.fromEntries(ten.map((n) => [n, { durationMs: 0 }])) });
  const run = await runCli(sim, plan(ten));
  await sim.stop();
  if (run.code !== 0) throw new Error(`10-step run exited ${run.code}:\n${run.out}`);
  const events = run.out.trim().split('\n').map((l) => JSON.parse(l));
  const inRun = Date.parse(events[events.length - 1].at) - Date.parse(events[0].at);
  // The target is on the run itself (first event to last); the process start (Node loading
  // @kubernetes/client-node, about 0.6 s on an idle machine) is printed beside it.
  console.log(`10-step plan of instant Jobs: ${inRun} ms from run-start to run-done (target ≤ ${TARGET.tenStepsMs} ms); ${run.ms.toFixed(0)} ms process start to exit`);
  if (inRun > TARGET.tenStepsMs) misses.push('10-step wall time');

  const rssMb = Math.max(lat.rssKb, run.rssKb) / 1024;
  console.log(`peak RSS of the runtime process: ${rssMb.toFixed(1)} MB (target ≤ ${TARGET.rssMb} MB; latency run ${(lat.rssKb / 1024).toFixed(1)} MB, 10-step run ${(run.rssKb / 1024).toFixed(1)} MB)`);
  if (rssMb > TARGET.rssMb) misses.push('RSS');

  if (misses.length) {
    console.log(`missed: ${misses.join(', ')}`);
    process.exit(1);
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
