/**
 * Synth speed: the wall time of the synth app (what cdk8s.yaml's `app` runs) on the default
 * configuration, against merely loading cdk8s + cdk8s-plus-28 + constructs in node, and of
 * `npx cdk8s synth` as a whole. Targets: ratio ≤ 1.3 (issue 36; 1.5 before it), whole synth ≤ 3 s. Runs are interleaved
 * so that background load hits both sides alike; medians are reported.
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

const ROOT = path.join(__dirname, '..');
const RUNS = Number(process.env.BENCH_RUNS ?? 9);
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'uyuni-cdk-bench-'));
fs.writeFileSync(path.join(work, 'cdk8s.yaml'), `language: typescript\napp: node ${path.join(ROOT, 'bin', 'synth.js')}\noutput: .cdk8s.out\n`);
// XDG_CACHE_HOME: the compiled code of the bundle (bin/code-cache.js), warmed by the first synth below.
const env = { ...process.env, UYUNI_CONFIG: path.join(ROOT, 'uyuni.yaml'), UYUNI_DIST: path.join(work, 'dist'), CDK8S_OUTDIR: '', XDG_CACHE_HOME: path.join(work, 'cache') };

function time(cmd: string, args: string[], cwd = work): number {
  const start = process.hrtime.bigint();
  const r = spawnSync(cmd, args, { cwd, env, stdio: ['ignore', 'ignore', 'pipe'] });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed: ${r.stderr}`);
  return ms;
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const baseline = ['-e', "require('cdk8s'); require('cdk8s-plus-28'); require('constructs')"];
const app = [path.join(ROOT, 'bin', 'synth.js')];
time(process.execPath, app); // warms the caches (transpiled sources, compiled code), as any second synth finds them
const base: number[] = [];
const synth: number[] = [];
for (let i = 0; i < RUNS; i++) {
  base.push(time(process.execPath, baseline, ROOT));
  synth.push(time(process.execPath, app));
}
const cli: number[] = [];
for (let i = 0; i < 3; i++) cli.push(time(path.join(ROOT, 'node_modules', '.bin', 'cdk8s'), ['synth', '--no-check-upgrade']));
fs.rmSync(work, { recursive: true, force: true });

const ratio = median(synth) / median(base);
console.log(`load cdk8s + cdk8s-plus-28 + constructs: median ${median(base).toFixed(0)} ms over ${RUNS} runs`);
console.log(`synth app (node bin/synth.js, default config): median ${median(synth).toFixed(0)} ms over ${RUNS} runs`);
console.log(`ratio synth / load: ${ratio.toFixed(2)} (target ≤ 1.30)`);
console.log(`npx cdk8s synth as a whole: median ${median(cli).toFixed(0)} ms over 3 runs (target ≤ 3000 ms)`);
process.exit(ratio <= 1.3 && median(cli) <= 3000 ? 0 : 1);
