/**
 * The CLI beside kubectl, against the API simulator over HTTP (`npm run bench -- kubectl`), each
 * side in its own processes, interleaved round by round so that background load hits both alike:
 * - `uyuni-cdk run dist/install` against the plain script an admin would write from the same
 *   plan: per step, create its missing credential Secrets, `kubectl apply --server-side -f` the
 *   step file, then one batched `kubectl wait` / `rollout status` for its waits. Fresh simulator
 *   per run. Target: median ratio ≤ 0.2 (issue 36; 0.4 before it).
 * - `uyuni-cdk status dist/install` against one `kubectl get` of the plan's kinds, both with a
 *   warm discovery cache (each its own KUBECACHEDIR). Target: median ratio ≤ 2 (issue 36; 3 before it).
 * - peak RSS (VmHWM) of the `run` and `status` processes: no higher than measured here before
 *   the bundles (highest of 5 rounds: run 145 MB, status 132 MB).
 * Exits 1 when a target is missed.
 */
import { spawn } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { readPlan } from '../src/plan/reader';
import { startSimulator, Simulator } from '../test/sim';
import { adminStepScript } from './admin';
import { median } from './stats';

const ROOT = path.join(__dirname, '..');
const BIN = path.join(ROOT, 'bin', 'uyuni-cdk.js');
const PLAN = path.join(ROOT, 'dist', 'install');
const KUBECTL = '/usr/bin/kubectl';
const ROUNDS = Number(process.env.BENCH_RUNS ?? 5);
const STATUS_CALLS = 3;
const TARGET = { run: 0.2, status: 2, runRssMb: 145, statusRssMb: 132 };

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'uyuni-cdk-bench-kubectl-'));
const rssFile = path.join(work, 'rss');
const preload = path.join(work, 'report-rss.js');
fs.writeFileSync(preload, `process.on('exit', () => { const fs = require('fs'); fs.writeFileSync(${JSON.stringify(rssFile)}, /VmHWM:\\s+(\\d+)/.exec(fs.readFileSync('/proc/self/status', 'utf8'))[1]); });\n`);

interface Ran { ms: number; out: string }

/** Runs a process to its end (asynchronously: the simulator lives in this process). */
function exec(cmd: string, args: string[], env: Record<string, string> = {}): Promise<Ran> {
  const t0 = performance.now();
  const child = spawn(cmd, args, { cwd: work, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d) => { out += d; });
  child.stderr.on('data', (d) => { out += d; });
  return new Promise((resolve, reject) => child.on('close', (code) => {
    const ms = performance.now() - t0;
    if (code === 0) resolve({ ms, out });
    else reject(new Error(`${cmd} ${args.join(' ')} exited ${code}:\n${out}`));
  }));
}

/** The CLI under the RSS preload; its wall time and peak RSS. */
async function cli(args: string[], cacheDir: string): Promise<Ran & { rssMb: number }> {
  // The round's caches: discovery (KUBECACHEDIR) and the compiled bundle (XDG_CACHE_HOME): cold
  // for the run, warm for the status calls after it.
  const r = await exec(process.execPath, ['-r', preload, BIN, ...args], { KUBECACHEDIR: cacheDir, XDG_CACHE_HOME: cacheDir });
  return { ...r, rssMb: Number(fs.readFileSync(rssFile, 'utf8')) / 1024 };
}

const plan = readPlan(PLAN);
const script = path.join(work, 'install.sh');
fs.writeFileSync(script, ['set -eu', `k="${KUBECTL} --kubeconfig $KC"`, ...plan.steps.flatMap((s) => adminStepScript(s, PLAN))].join('\n') + '\n');
/**
 * Every kind of the plan listed in one `kubectl get` (what `status` reads, and what an admin
 * types). Not the objects by name: kubectl then GETs them one by one, 50 ms each here.
 */
const kinds = [...new Set(plan.steps.flatMap((s) => s.objects.map((o) => o.kind.toLowerCase())))];
const objects = plan.steps.reduce((n, s) => n + s.objects.length, 0);
const getArgs = ['get', '-n', plan.namespace, kinds.join(',')];

async function main(): Promise<number> {
  const runMs: number[] = [];
  const scriptMs: number[] = [];
  const statusMs: number[] = [];
  const getMs: number[] = [];
  let runRss = 0;
  let statusRss = 0;
  for (let round = 1; round <= ROUNDS; round++) {
    const ours: Simulator = await startSimulator();
    const theirs: Simulator = await startSimulator();
    const cacheOurs = fs.mkdtempSync(path.join(work, 'cache-ours-'));
    const cacheKubectl = fs.mkdtempSync(path.join(work, 'cache-kubectl-'));
    try {
      const run = await cli(['run', PLAN, '--kubeconfig', ours.kubeconfigPath, '--run-dir', path.join(work, `run-${round}`)], cacheOurs);
      const sh = await exec('sh', [script], { KC: theirs.kubeconfigPath, KUBECACHEDIR: cacheKubectl });
      runMs.push(run.ms);
      scriptMs.push(sh.ms);
      runRss = Math.max(runRss, run.rssMb);
      // Both sides have read discovery once (the run, the script); status calls alternate.
      for (let i = 0; i < STATUS_CALLS; i++) {
        const st = await cli(['status', PLAN, '--kubeconfig', ours.kubeconfigPath], cacheOurs);
        if (!/done/.test(st.out)) throw new Error(`status after the run does not say done:\n${st.out}`);
        const get = await exec(KUBECTL, ['--kubeconfig', ours.kubeconfigPath, ...getArgs], { KUBECACHEDIR: cacheKubectl });
        statusMs.push(st.ms);
        getMs.push(get.ms);
        statusRss = Math.max(statusRss, st.rssMb);
      }
      console.log(`round ${round}: run ${run.ms.toFixed(0)} ms, kubectl script ${sh.ms.toFixed(0)} ms; status ${statusMs.slice(-STATUS_CALLS).map((x) => x.toFixed(0)).join('/')} ms, kubectl get ${getMs.slice(-STATUS_CALLS).map((x) => x.toFixed(0)).join('/')} ms`);
    } finally {
      await ours.stop();
      await theirs.stop();
    }
  }
  fs.rmSync(work, { recursive: true, force: true });

  const runRatio = median(runMs) / median(scriptMs);
  const statusRatio = median(statusMs) / median(getMs);
  console.log(`uyuni-cdk run dist/install: median ${median(runMs).toFixed(0)} ms over ${ROUNDS} runs; the kubectl script (${plan.steps.length} applies, batched waits): ${median(scriptMs).toFixed(0)} ms`);
  console.log(`ratio run / script: ${runRatio.toFixed(2)} (target ≤ ${TARGET.run})`);
  console.log(`uyuni-cdk status dist/install: median ${median(statusMs).toFixed(0)} ms over ${statusMs.length} calls; kubectl get of the plan's ${kinds.length} kinds (${objects} objects): ${median(getMs).toFixed(0)} ms`);
  console.log(`ratio status / get: ${statusRatio.toFixed(2)} (target ≤ ${TARGET.status})`);
  console.log(`peak RSS: run ${runRss.toFixed(1)} MB (target ≤ ${TARGET.runRssMb}), status ${statusRss.toFixed(1)} MB (target ≤ ${TARGET.statusRssMb})`);
  const missed = [
    runRatio > TARGET.run && 'run ratio', statusRatio > TARGET.status && 'status ratio',
    runRss > TARGET.runRssMb && 'run RSS', statusRss > TARGET.statusRssMb && 'status RSS',
  ].filter(Boolean);
  if (missed.length) console.log(`missed: ${missed.join(', ')}`);
  return missed.length ? 1 : 0;
}

main().then((code) => process.exit(code), (e) => {
  console.error(e);
  process.exit(2);
});
