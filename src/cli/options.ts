import { Command, InvalidArgumentError, Option } from 'commander';
import { EXIT } from '../plan/exit-codes';
import type { Io } from '../runtime/commands';

/** How a verb reaches the cluster, named as kubectl names them. */
export function addConnectionOptions(cmd: Command): Command {
  return cmd
    .option('--kubeconfig <file>', 'kubeconfig file (default: $KUBECONFIG, a colon-separated list merged like kubectl does, then ~/.kube/config)')
    .option('--context <name>', 'kubeconfig context to use (default: its current-context)')
    .option('-n, --namespace <ns>', "use this namespace instead of the plan's");
}

/** Options every cluster verb takes: the connection and the output format. */
export function addClusterOptions(cmd: Command): Command {
  return addConnectionOptions(cmd)
    .addOption(new Option('-o, --output <format>', 'text (a live line per step on a terminal, plain lines otherwise) or json (one event per line)').choices(['text', 'json']).default('text'));
}

/** Bad input and an unreachable cluster: the same for every cluster verb. */
const INPUT_AND_CLUSTER = `  ${EXIT.badInput}  bad input: plan, kubeconfig, credentials the cluster refuses, a user it forbids, arguments
  ${EXIT.unreachable}  the cluster is unreachable before any step: connection refused, DNS, TLS, no answer, an API server failing
Errors are one line saying what to check; --debug also prints where they happened.`;

export const EXIT_CODES_HELP = `
Exit codes:
  ${EXIT.ok}  done
  ${EXIT.stepFailed}  a step failed or was refused (gate, requirement, changed Job, timeout)
${INPUT_AND_CLUSTER}`;

/** `status` tells a finished plan from one still to do, for scripts (`until uyuni-cdk status ...; do sleep 60; done`). */
export const STATUS_EXIT_CODES_HELP = `
Exit codes:
  ${EXIT.ok}  every step done
  ${EXIT.stepFailed}  a step failed
  ${EXIT.incomplete}  not finished: no step failed, but one is not-applied, partly-applied, waiting, running or changed
${INPUT_AND_CLUSTER}`;

/** An option value that must be a positive number (seconds, a count): anything else is a usage error, exit 2. */
export function positiveNumber(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError('must be a positive number');
  return n;
}

/** A repeatable option whose values may also be comma-separated. */
export function collectList(value: string, previous: readonly string[] = []): string[] {
  return [...previous, ...value.split(',').filter(Boolean)];
}

/** The process as the runtime's verbs see it: its output streams and whether stdout is a terminal. */
export const processIo: Io = {
  out: (t) => process.stdout.write(t),
  err: (t) => process.stderr.write(t),
  isTTY: Boolean(process.stdout.isTTY),
};

/** Loads the runtime, only when a verb runs (so `--help` never loads the Kubernetes client). */
export async function loadRuntime(): Promise<typeof import('../runtime/commands')> {
  return import('../runtime/commands');
}

/** Runs a lazily loaded command and sets the process exit code. */
export async function exitWith(code: Promise<number>): Promise<void> {
  process.exitCode = await code;
}
