import { Command, InvalidArgumentError } from 'commander';
import { EXIT } from '../plan/exit-codes';
import { RUN_DEFAULTS } from '../plan/run-defaults';
import type { DestroyCommandOptions, Io } from '../runtime/verbs/commands';
import { addClusterOptions, exitWith, INPUT_AND_CLUSTER, processIo } from './options';
import { loadRuntime } from './runtime';
import { onEndingSignals } from './parse';

const DESTROY_EXIT_CODES_HELP = `
Exit codes:
  ${EXIT.ok}  listed (without --yes), or deleted (and gone, unless --wait=false)
  ${EXIT.stepFailed}  the namespace is locked by another run or destroy (named), a delete failed, or what was
     deleted is still there after --timeout (named)
${INPUT_AND_CLUSTER}`;
import { duration, LOCK_TIMEOUT_HELP } from './unlock';

/** `--wait`, `--wait=true`, `--wait=false`: kubectl's spelling of a boolean flag. */
function boolean(value: string): boolean {
  if (value === 'true') return true;
  if (value === 'false') return false;
  throw new InvalidArgumentError('must be true or false (--wait=false)');
}

/** Ctrl-C, SIGTERM, SIGHUP: the namespace's lock is released before the process ends. */
const destroyIo: Io = { ...processIo, onInterrupt: (cleanup) => onEndingSignals(cleanup) };

export function register(program: Command): void {
  addClusterOptions(program.command('destroy')
    .argument('<planDir>', 'the plan directory whose objects to remove (it names the namespace and the labels)')
    .description('Delete everything carrying the plan\'s labels, last step first; a dry run unless --yes; the data (PVCs, the credentials and CA that open them, the namespace holding them) only with --purge-volumes')
    .option('-y, --yes', 'really delete (without it: list what would be deleted)')
    .option('--auto-approve', 'the same as --yes (as Terraform\'s, and as for run)')
    .option('--purge-volumes', 'also delete PersistentVolumeClaims (the data!), the credential and CA Secrets that open them, the run records, and their namespace')
    .option('--wait [bool]', 'with --yes: wait until what was deleted is gone, the namespace too, as kubectl delete does (--wait=false: return once the deletes are sent)', boolean, true)
    .option('--timeout <duration>', `how long --yes waits for that (30s, 5m, 1h; default ${RUN_DEFAULTS.destroyTimeoutSeconds / 60}m), then exit 1 naming what is still there`, duration)
    .option('--lock-timeout <duration>', LOCK_TIMEOUT_HELP, duration),
  'text (a line per object: deleted, would be deleted, kept and why), json (one JSON document: the plan, its namespace, dryRun and each object) or yaml (the same document)')
    .addHelpText('after', `
Kept without --purge-volumes: the claims, the credential Secrets the plan names, the CA Secret,
the records of finished runs (uyuni-cdk-history), and the namespace holding them.
Never deleted: objects without the plan's labels; a namespace the plan did not create (adopted
with run --adopt); a namespace holding objects of others (they are listed).
--yes takes the namespace's lock (Lease uyuni-cdk-lock), as run does.
${DESTROY_EXIT_CODES_HELP}

Examples:
  uyuni-cdk destroy dist/install                 # dry run: lists, deletes nothing
  uyuni-cdk destroy dist/install --yes           # keeps the data: claims, credentials, CA
  uyuni-cdk destroy dist/install --yes --purge-volumes`)
    .action((planDir: string, opts: DestroyCommandOptions & { autoApprove?: boolean }) => exitWith(loadRuntime().then((m) => m.destroyCommand(planDir, { ...opts, yes: Boolean(opts.yes || opts.autoApprove) }, destroyIo))));
}
