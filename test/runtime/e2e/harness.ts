/**
 * End-to-end harness: the runtime's commands run in-process (or as the real CLI process) against
 * the API simulator over HTTP, with the real @kubernetes/client-node.
 */
import { spawn, ChildProcess } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { destroyCommand, Io, planCommand, runCommand, statusCommand } from '../../../src/runtime/verbs/commands';
import { UYUNI_CDK } from '../../helpers/entry';

export const ROOT = path.join(__dirname, '..', '..', '..');
/** The CLI from the sources (test/helpers/entry.ts). */
export const BIN = UYUNI_CDK;

export interface Captured {
  code: number;
  out: string;
  err: string;
}

function io(): Io & { text: { out: string; err: string } } {
  const text = { out: '', err: '' };
  return { text, out: (t) => { text.out += t; }, err: (t) => { text.err += t; }, isTTY: false };
}

export function tmpDir(prefix = 'uyuni-run-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

type Verb = 'run' | 'plan' | 'status' | 'destroy';

/** Options the CLI parses into numbers (commander's argParser): given here as numbers or as the flag's text. */
const NUMERIC = ['timeout', 'stuckGrace', 'progressInterval'];

/** Runs a verb in-process with captured output (plain text unless `output: 'json'`). */
export async function cli(verb: Verb, planDir: string, opts: Record<string, any>): Promise<Captured> {
  const i = io();
  const fn = { run: runCommand, plan: planCommand, status: statusCommand, destroy: destroyCommand }[verb] as (d: string, o: any, io: Io) => Promise<number>;
  const parsed = Object.fromEntries(Object.entries(opts).map(([k, v]) => [k, NUMERIC.includes(k) && typeof v === 'string' ? Number(v) : v]));
  const code = await fn(planDir, { runDir: verb === 'run' ? tmpDir() : undefined, ...parsed }, i);
  return { code, ...i.text };
}

/** The real CLI as a child process. */
export function spawnCli(args: string[], env: Record<string, string> = {}): { child: ChildProcess; done: Promise<Captured> } {
  const child = spawn(process.execPath, [BIN, ...args], { cwd: tmpDir('uyuni-cwd-'), env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d) => { out += d; });
  child.stderr!.on('data', (d) => { err += d; });
  const done = new Promise<Captured>((resolve) => child.on('close', (code, signal) => resolve({ code: code ?? (signal ? 128 : -1), out, err })));
  return { child, done };
}

export async function until(what: string, cond: () => boolean, timeoutMs = 40_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Every file under a directory, with its content. */
export function filesUnder(dir: string): Array<{ file: string; text: string }> {
  const out: Array<{ file: string; text: string }> = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...filesUnder(p));
    else out.push({ file: p, text: fs.readFileSync(p, 'utf8') });
  }
  return out;
}

/** Requests that wrote (POST/PUT/PATCH/DELETE, not a dry run) to a path containing `fragment`. */
export function writesTo<R extends { method: string; path: string; query?: string }>(requests: readonly R[], fragment: string): R[] {
  return requests.filter((r) => r.method !== 'GET' && r.path.includes(fragment) && !(r.query ?? '').includes('dryRun'));
}

/** The install plan the lead synthesizes, when it exists; otherwise our small fixture. */
export function installPlanDir(): string {
  const dist = path.join(ROOT, 'dist', 'install');
  return fs.existsSync(path.join(dist, 'uyuni.plan')) ? dist : path.join(ROOT, 'test', 'runtime', 'fixtures', 'mini-install');
}

/**
 * Requests that change the cluster: not reads, not dry runs, and not the run's own lock (the
 * Lease `run` and `destroy` take before deciding and release at the end: bookkeeping, not a change),
 * nor the access reviews `run` asks before its first write (a question, nothing stored).
 */
export function changes<R extends { method: string; path: string; query?: string }>(requests: readonly R[]): R[] {
  return requests.filter((r) => r.method !== 'GET' && !/\/leases(\/|$)/.test(r.path) && !r.path.endsWith('/selfsubjectaccessreviews') && !(r.query ?? '').includes('dryRun'));
}
