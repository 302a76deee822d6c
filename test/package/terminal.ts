/**
 * A command on a real pseudo-terminal: script(1) from util-linux runs it on a pty whose master
 * side is script's stdin and stdout, so what the test writes to script's stdin is what a person
 * types (`yes` and Enter, Enter alone, Ctrl-C), with the line discipline in between.
 */
import { spawn } from 'child_process';

/** Quoted for sh. */
export const sh = (a: string) => `'${a.replace(/'/g, "'\\''")}'`;

export interface TerminalResult {
  /** The command's exit code (script -e passes it on). */
  readonly code: number;
  /** Everything the terminal showed (stdout and stderr of the command, and the typed echo). */
  readonly text: string;
}

/**
 * Runs the shell `command` (bash, pipefail) on a pty; when the terminal shows `prompt`, types
 * `keys`. Fails with what the terminal showed when the prompt does not come, or the command does
 * not end, within `timeoutMs`.
 */
export function onTerminal(command: string, prompt: string, keys: string, env: NodeJS.ProcessEnv, timeoutMs = 60_000): Promise<TerminalResult> {
  const child = spawn('script', ['-qefc', `set -o pipefail; ${command}`, '/dev/null'], {
    stdio: ['pipe', 'pipe', 'pipe'], env: { ...env, SHELL: '/bin/bash', TERM: 'xterm' },
  });
  let text = '';
  let typed = false;
  return new Promise<TerminalResult>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${typed ? 'the command did not end' : `no prompt "${prompt}"`} within ${timeoutMs} ms; the terminal showed:\n${text}`));
    }, timeoutMs);
    const seen = (d: Buffer) => {
      text += d.toString('utf8');
      if (!typed && text.includes(prompt)) {
        typed = true;
        child.stdin.write(keys);
      }
    };
    child.stdout.on('data', seen);
    child.stderr.on('data', seen);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      child.stdin.destroy();
      resolve({ code: code ?? 128 + (signal === 'SIGKILL' ? 9 : 0), text });
    });
  });
}
