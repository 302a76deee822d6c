/**
 * `uyuni-cdk agent run` as its own long-running process, as a node runs it: its log records are
 * collected as they come, a test waits for a record, and the process is stopped by its PID.
 */
import { ChildProcess, spawn } from 'child_process';
import { UYUNI_CDK } from '../../helpers/entry';

const BIN = UYUNI_CDK;

export interface AgentProcess {
  readonly child: ChildProcess;
  /** Everything written to stderr (text records) so far. */
  stderr(): string;
  /** Everything written to stdout (JSON records with --output json) so far. */
  stdout(): string;
  /** Waits until stderr+stdout match `pattern` (after `from` characters of the combined output). */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  /** Sends `signal` and waits for the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  readonly exited: Promise<number | null>;
}

/** `bin`: the command to run, the sources by default (a benchmark runs the installed bin/uyuni-cdk.js). */
export function startAgent(args: string[], env: NodeJS.ProcessEnv, bin = BIN): AgentProcess {
  const child = spawn(process.execPath, [bin, 'agent', 'run', ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  const waiters = new Set<() => void>();
  const notify = (): void => waiters.forEach((w) => w());
  child.stdout!.on('data', (d) => { out += d; notify(); });
  child.stderr!.on('data', (d) => { err += d; notify(); });
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => { notify(); resolve(code); }));
  return {
    child,
    stderr: () => err,
    stdout: () => out,
    exited,
    waitFor(pattern, timeoutMs = 20_000) {
      return new Promise((resolve, reject) => {
        const check = (): void => {
          const m = (err + out).match(pattern);
          if (m) {
            waiters.delete(check);
            clearTimeout(timer);
            resolve(m);
          } else if (child.exitCode !== null) {
            waiters.delete(check);
            clearTimeout(timer);
            reject(new Error(`the agent exited (${child.exitCode}) before ${pattern}:\n${err}${out}`));
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`timed out waiting for ${pattern}:\n${err}${out}`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null && child.pid) process.kill(child.pid, signal);
      const t = setTimeout(() => child.pid && child.exitCode === null && process.kill(child.pid, 'SIGKILL'), 15_000);
      const code = await exited;
      clearTimeout(t);
      return code;
    },
  };
}
