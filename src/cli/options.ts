import { Command, Option } from 'commander';

/** Options every cluster verb takes, named as kubectl names them. */
export function addClusterOptions(cmd: Command): Command {
  return cmd
    .option('--kubeconfig <file>', 'kubeconfig file (default: $KUBECONFIG, a colon-separated list merged like kubectl does, then ~/.kube/config)')
    .option('--context <name>', 'kubeconfig context to use (default: its current-context)')
    .option('-n, --namespace <ns>', "use this namespace instead of the plan's")
    .addOption(new Option('-o, --output <format>', 'text (a live line per step on a terminal, plain lines otherwise) or json (one event per line)').choices(['text', 'json']).default('text'));
}

export const EXIT_CODES_HELP = `
Exit codes: 0 done, 1 a step failed or was refused, 2 bad input (plan, kubeconfig, arguments),
3 cluster unreachable (connection refused, DNS, TLS) before any step.`;

/**
 * Loads the runtime, only when a verb runs (so `--help` never loads the Kubernetes client),
 * with the process's heap tuned first (src/runtime/memory.ts).
 */
export async function loadRuntime(): Promise<typeof import('../runtime/commands')> {
  await import('../runtime/memory');
  return import('../runtime/commands');
}

/** Runs a lazily loaded command and sets the process exit code. */
export async function exitWith(code: Promise<number>): Promise<void> {
  process.exitCode = await code;
}
