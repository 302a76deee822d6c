import { Command, InvalidArgumentError } from 'commander';
import { EXIT } from '../plan/exit-codes';
import type { UnlockCommandOptions } from '../runtime/verbs/commands';
import { exitWith, processIo } from './options';
import { loadRuntime } from './runtime';

const UNITS: Readonly<Record<string, number>> = { '': 1, s: 1, m: 60, h: 3600 };

/** `--lock-timeout D`: `90`, `90s`, `5m`, `1h` (as terraform's -lock-timeout), in seconds; 0 fails at once. */
export function duration(value: string): number {
  const m = /^(\d+(?:\.\d+)?)(s|m|h)?$/.exec(value.trim());
  if (!m) throw new InvalidArgumentError('must be a duration: seconds, or a number with s, m or h (30s, 5m, 1h)');
  return Number(m[1]) * UNITS[m[2] ?? ''];
}

export const LOCK_TIMEOUT_HELP = 'wait this long for the namespace\'s lock held by another run or destroy (30s, 5m, 1h; default 0: fail at once, naming the holder)';

export function register(program: Command): void {
  program.command('unlock')
    .argument('<runId>', 'the run id the lock names (the holder a refused run printed)')
    .description('Remove the lock a run or destroy left behind in a namespace (as terraform force-unlock): only when that run is gone')
    .requiredOption('-n, --namespace <ns>', 'the namespace whose lock to remove')
    .option('--kubeconfig <file>', 'kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)')
    .option('--context <name>', 'kubeconfig context to use (default: its current-context)')
    .option('--force', 'also when its holder is alive on this host (its pid runs): asks first')
    .option('-y, --yes', 'with --force: remove it without asking')
    .addHelpText('after', `
One run or destroy per namespace at a time: each holds Lease uyuni-cdk-lock in the namespace,
renewed while it runs and released at the end (also on failure and Ctrl-C). A holder that died
leaves it behind; it expires by itself after its leaseDurationSeconds (60 s, or at once when the
holder ran on this host and its pid is gone). unlock removes it now, only if RUN_ID still holds it.
A holder alive on this host (its pid runs) is refused unless --force, which asks first (--yes
approves). A run whose lock was removed or taken, or could not be renewed for a lease's length,
stops before its next write.

Exit codes:
  ${EXIT.ok}  removed
  ${EXIT.stepFailed}  --force not approved on the terminal: nothing removed
  ${EXIT.badInput}  not locked, locked by another run id (named), a live holder on this host without --force, or bad arguments
  ${EXIT.unreachable}  the cluster is unreachable

Examples:
  uyuni-cdk unlock -n uyuni install-20261201T101500Z   # the run id a refused run named`)
    .action((runId: string, opts: UnlockCommandOptions) => exitWith(loadRuntime().then((m) => m.unlockCommand(runId, opts, processIo))));
}
