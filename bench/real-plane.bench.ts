/**
 * Against a real control plane (`npm run bench -- real-plane`; issue 36): kube-apiserver,
 * kube-controller-manager and kube-scheduler with the fake kubelet (test/cluster/plane). The
 * plane named by UYUNI_CDK_PLANE=DIR, else one of its own, started with `up()` (every request
 * audited, reads too) and stopped at the end.
 *
 * The installed command (bin/uyuni-cdk.js) runs `plan`, `run`, `status` and `destroy
 * --purge-volumes` of dist/install into a namespace of its own (`-n`); beside it, in another,
 * what an admin types with the plane's kubectl: per step, its generated Secrets, `kubectl apply
 * --server-side -f` of the step file, then `kubectl wait` / `rollout status` of its waits (not
 * Bound: the plane's StorageClass binds a claim only for its pod, WaitForFirstConsumer); one
 * `kubectl get` of the plan's kinds; `kubectl delete -f` of the step files, last first.
 *
 * Prints wall times, the ratios, and the requests each side sent (from the plane's audit log, as
 * user kubernetes-admin between the marks). On a plane of its own that is every request; on a
 * shared plane (UYUNI_CDK_PLANE, audit policy of writes only) only the writes into the
 * namespace, since others use the same user. No target: it reports (exit 0 unless a side fails).
 */
import { spawn } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { parseAllDocuments } from 'yaml';
import { readPlan } from '../src/plan/reader';
import { AuditEvent, auditEvents, auditSize, down, readState, up, PlaneState } from '../test/cluster/plane/plane';
import { adminStepScript } from './admin';

const ROOT = path.join(__dirname, '..');
/** The installed command; `UYUNI_CDK_BIN` names another (a build of an earlier commit, for a before/after). */
const BIN = process.env.UYUNI_CDK_BIN ?? path.join(ROOT, 'bin', 'uyuni-cdk.js');
const PLAN = path.join(ROOT, 'dist', 'install');
const tag = Math.random().toString(16).slice(2, 8);
const OURS = `bench-ours-${tag}`;
const THEIRS = `bench-admin-${tag}`;

interface Ran { ms: number; out: string; code: number | null }

function exec(cmd: string, args: string[], env: Record<string, string> = {}, okCodes = [0]): Promise<Ran> {
  const t0 = performance.now();
  const child = spawn(cmd, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d) => { out += d; });
  child.stderr.on('data', (d) => { out += d; });
  return new Promise((resolve, reject) => child.on('close', (code) => {
    const r = { ms: performance.now() - t0, out, code };
    if (okCodes.includes(code ?? -1)) resolve(r);
    else reject(new Error(`${cmd} ${args.join(' ')} exited ${code}:\n${out}`));
  }));
}

/** The step files with the plan's namespace moved to `ns` (as `-n` does for the runtime). */
function retarget(dir: string, from: string, ns: string, out: string): void {
  fs.mkdirSync(out, { recursive: true });
  for (const f of fs.readdirSync(dir).filter((x) => x.endsWith('.yaml'))) {
    const docs = parseAllDocuments(fs.readFileSync(path.join(dir, f), 'utf8')).map((d) => d.toJSON()).filter(Boolean);
    for (const o of docs) {
      if (o.metadata?.namespace === from) o.metadata.namespace = ns;
      if (o.kind === 'Namespace' && o.metadata?.name === from) o.metadata.name = ns;
    }
    fs.writeFileSync(path.join(out, f), docs.map((o) => JSON.stringify(o)).join('\n---\n') + '\n');
  }
}

async function main(): Promise<void> {
  const shared = process.env.UYUNI_CDK_PLANE;
  const dir = shared ?? fs.mkdtempSync(path.join(os.tmpdir(), 'uyuni-cdk-bench-plane-'));
  const state: PlaneState = shared ? readState(dir) : await up(dir, { auditAllVerbs: true });
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'uyuni-cdk-bench-real-'));
  const kubectl = path.join(state.bin, 'kubectl');
  const env = { KUBECONFIG: state.kubeconfig, KUBECACHEDIR: path.join(work, 'cache-kubectl'), XDG_CACHE_HOME: path.join(work, 'cache') };
  const plan = readPlan(PLAN);
  const files = path.join(work, 'admin-plan');
  retarget(PLAN, plan.namespace, THEIRS, files);
  const k = `${kubectl} --kubeconfig ${state.kubeconfig}`;
  const script = (lines: string[]) => {
    const f = path.join(work, `s-${Math.random().toString(16).slice(2)}.sh`);
    fs.writeFileSync(f, ['set -eu', `k="${k}"`, ...lines].join('\n') + '\n');
    return f;
  };
  const install = script(plan.steps.flatMap((s) => adminStepScript(s, files, plan.namespace, THEIRS, { waitBound: false })));
  const kinds = [...new Set(plan.steps.flatMap((s) => s.objects.map((o) => o.kind.toLowerCase())))];
  const remove = script([...plan.steps].reverse().map((s) => `$k delete --ignore-not-found --wait=true --timeout=600s -f ${path.join(files, s.file)}`));

  /** The requests (as kubernetes-admin) since `mark`: all on an own plane; on a shared one, the writes into `ns`. */
  const sent = (mark: number, ns: string): AuditEvent[] => auditEvents(dir, mark)
    .filter((e) => e.user.username === 'kubernetes-admin')
    .filter((e) => !shared || e.objectRef?.namespace === ns || (e.objectRef?.resource === 'namespaces' && e.objectRef?.name === ns));
  const writes = (ev: AuditEvent[]) => ev.filter((e) => !['get', 'list', 'watch'].includes(e.verb) && !/[?&]dryRun=/.test(e.requestURI)).length;
  const rows: Array<[string, Ran, number, number, Ran | undefined, number, number]> = [];
  // `counted: false`: the calls ran before (a median of earlier runs): their requests are those of the row above
  const measure = async (what: string, ours: () => Promise<Ran>, theirs?: () => Promise<Ran>, counted = true) => {
    let m = auditSize(dir);
    const a = await ours();
    const ea = sent(m, OURS);
    m = auditSize(dir);
    const b = theirs ? await theirs() : undefined;
    const eb = theirs ? sent(m, THEIRS) : [];
    rows.push([what, a, counted ? ea.length : -1, writes(ea), b, counted ? eb.length : -1, writes(eb)]);
    const n = (ev: AuditEvent[]) => (counted ? `${ev.length} requests (${writes(ev)} writes)` : 'requests as above');
    console.log(`${what}: uyuni-cdk ${a.ms.toFixed(0)} ms, ${n(ea)}${b ? `; kubectl ${b.ms.toFixed(0)} ms, ${n(eb)}; ratio ${(a.ms / b.ms).toFixed(2)}` : ''}`);
  };
  const ours = (args: string[], ok = [0]) => () => exec(process.execPath, [BIN, ...args, '-n', OURS, '--kubeconfig', state.kubeconfig], env, ok);
  try {
    console.log(`plane ${state.version} at ${state.server} (${shared ? `shared, ${dir}: writes counted only` : 'its own: every request counted'}); namespaces ${OURS}, ${THEIRS}`);
    await measure('plan (fresh namespace)', ours(['plan', PLAN]));
    await measure('run (install)', ours(['run', PLAN, '--yes', '--run-dir', path.join(work, 'run-1')]), () => exec('sh', [install], env));
    await measure('plan (installed)', ours(['plan', PLAN]));
    await measure('run (installed: a no-op)', ours(['run', PLAN, '--yes', '--run-dir', path.join(work, 'run-2')]), () => exec('sh', [install], env));
    // status and kubectl get start in a fraction of a second: the first of each is a cold start
    // (this bench's own cache directories: status compiles its bundle with no code cache yet),
    // then the median of 5 each, interleaved, as the same command run again (issue 36)
    const get = () => exec(kubectl, ['--kubeconfig', state.kubeconfig, 'get', '-n', THEIRS, kinds.join(',')], env);
    await measure('status / kubectl get (first: cold caches)', ours(['status', PLAN]), get);
    const again: Ran[][] = [[], []];
    for (let i = 0; i < 5; i++) {
      again[0].push(await ours(['status', PLAN])());
      again[1].push(await get());
    }
    const median = (r: Ran[]): Ran => [...r].sort((x, y) => x.ms - y.ms)[2];
    await measure('status / kubectl get (again: median of 5)', async () => median(again[0]), async () => median(again[1]), false);
    await measure('destroy --purge-volumes / kubectl delete -f', ours(['destroy', PLAN, '--yes', '--purge-volumes']), () => exec('sh', [remove], env));
    console.log('\n| what | uyuni-cdk | kubectl | ratio | requests (writes) uyuni-cdk | kubectl |\n|---|---|---|---|---|---|');
    for (const [what, a, na, wa, b, nb, wb] of rows) {
      console.log(`| ${what} | ${(a.ms / 1000).toFixed(2)} s | ${b ? `${(b.ms / 1000).toFixed(2)} s` : '–'} | ${b ? (a.ms / b.ms).toFixed(2) : '–'} | ${na < 0 ? 'as above' : `${na} (${wa})`} | ${!b ? '–' : nb < 0 ? 'as above' : `${nb} (${wb})`} |`);
    }
  } finally {
    await exec(kubectl, ['--kubeconfig', state.kubeconfig, 'delete', 'namespace', OURS, THEIRS, '--ignore-not-found', '--wait=false'], env).catch(() => undefined);
    fs.rmSync(work, { recursive: true, force: true });
    if (!shared) await down(dir);
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
