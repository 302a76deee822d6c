// Trace of plan's requests at a latency, with each request's depth in the chain.
import * as path from 'path';
import { spawn } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import { startSimulator, Simulator } from '/work/wt/perf/test/sim';
const ROOT = '/work/wt/perf';
const BIN = path.join(ROOT, 'bin', 'uyuni-cdk.js');
function cli(sim: Simulator, args: string[]): Promise<{ ms: number; code: number | null; out: string }> {
  const t0 = performance.now();
  const child = spawn(process.execPath, [BIN, ...args, '--kubeconfig', sim.kubeconfigPath], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d) => { out += d; });
  child.stderr.on('data', (d) => { out += d; });
  return new Promise((resolve) => child.on('exit', (code) => resolve({ ms: performance.now() - t0, code, out })));
}
async function main() {
  const install = path.join(ROOT, 'dist', 'install');
  const sim = await startSimulator();
  const rd = fs.mkdtempSync(path.join(os.tmpdir(), 'perf-'));
  const setup = await cli(sim, ['run', install, '--run-dir', rd]);
  if (setup.code !== 0) throw new Error(setup.out);
  sim.setLatency(Number(process.env.LAT ?? 250));
  const verb = process.argv[2] ?? 'plan';
  const mark = sim.requests.length;
  const r = await cli(sim, verb === 'run' ? ['run', install, '--run-dir', rd] : [verb, install]);
  const rs = sim.requests.slice(mark).sort((a, b) => a.at - b.at);
  const t0 = rs[0].at;
  const depth: number[] = [];
  rs.forEach((q, i) => { let d = 1; for (let j = 0; j < i; j++) if (rs[j].done !== undefined && rs[j].done! <= q.at) d = Math.max(d, depth[j] + 1); depth.push(d); });
  rs.forEach((q, i) => console.log(String(depth[i]).padStart(3), String(q.at - t0).padStart(6), q.method.padEnd(6), q.path, q.query.slice(0, 60)));
  console.log(`${verb}: code ${r.code} ${r.ms.toFixed(0)} ms, ${rs.length} requests, ${Math.max(...depth)} round trips`);
  if (process.env.OUT) fs.writeFileSync(process.env.OUT, r.out);
  await sim.stop();
}
main().catch((e) => { console.error(e); process.exit(1); });
