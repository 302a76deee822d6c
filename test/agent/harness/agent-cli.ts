import { spawn } from 'child_process';
import { UYUNI_CDK } from '../../helpers/entry';

const BIN = UYUNI_CDK;

export interface CliResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `uyuni-cdk <args>` as its own process, as a node would run the agent. */
export function runCli(args: string[], env: NodeJS.ProcessEnv): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Log records with their `[time LEVEL target]` header's time replaced by `T`. */
export function withoutTimes(stderr: string): string {
  return stderr.replace(/^\[\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ /gm, '[T ');
}
