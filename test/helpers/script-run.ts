import { spawn } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { readScript } from '../../src/constructs/script-job';
import { tempDir } from './synth';

/** A service account directory as a pod mounts it (`SA_DIR`): a token the simulator accepts. */
export function serviceAccountDir(): string {
  const dir = tempDir('uyuni-cdk-sa-');
  fs.writeFileSync(path.join(dir, 'token'), 'test-token');
  return dir;
}

/**
 * Runs a step script as its Job's pod does (`sh -c <text>`, or its `interpreter`: `python3 -c
 * <text>`; src/scripts/lib/ inlined), with only PATH and `env` in its environment, asynchronously
 * (an in-process simulator must keep serving); killed after 30 s. Resolves with its exit code and
 * its stdout and stderr interleaved.
 */
export function runScript(name: string, env: Record<string, string>, interpreter = 'sh'): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(interpreter, ['-c', readScript(name)], { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env } });
    let out = '';
    child.stdout.on('data', (d) => { out += d; });
    child.stderr.on('data', (d) => { out += d; });
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? -1, out });
    });
  });
}
