import type { Command } from 'commander';
import { RUN_DEFAULTS, RUNS_DIR_HELP } from '../plan/run-defaults';
import type { Io, RunCommandOptions } from '../runtime/commands';
import {
  addClusterOptions, addIdentityOptions, collectList, EXIT_CODES_HELP, exitWith, loadRuntime, positiveNumber, processIo, SAFETY_HELP,
} from './options';
import { onEndingSignals } from './parse';
import { duration, LOCK_TIMEOUT_HELP } from './unlock';

/**
 * Ctrl-C, SIGTERM, SIGHUP: nothing to undo (each step is idempotent or resumable); the run's
 * last event says how to continue and what still runs in the cluster (src/runtime/run.ts).
 */
const runIo: Io = { ...processIo, onInterrupt: (cleanup) => onEndingSignals(cleanup) };

export function register(program: Command): void {
  addIdentityOptions(addClusterOptions(program.command('run')
    .argument('<planDir>', 'a synthesized plan directory, e.g. dist/install, or a plan saved by `uyuni-cdk plan --out FILE` (applied exactly, without a question)')
    .description('Apply a plan\'s steps in order with server-side apply, wait for each (Jobs, rollouts, certificates, volumes), stream Job logs, resume where a previous run stopped')
    .option('--rerun <step>', 're-create this step\'s Jobs (delete with propagationPolicy Background, then apply); repeatable or comma-separated', collectList)
    .option('--run-dir <dir>', `where logs and events.jsonl go (default: ${RUNS_DIR_HELP})`)
    .option('--timeout <seconds>', 'overall deadline (default: the plan\'s deadlineSeconds)', positiveNumber)
    .option('--stuck-grace <seconds>', 'fail a step when a Job pod stays in ImagePullBackOff, ErrImagePull, CreateContainerConfigError or Unschedulable this long', positiveNumber, RUN_DEFAULTS.stuckGraceSeconds)
    .option('--progress-interval <seconds>', 'without a terminal: print what a step waits for at least this often', positiveNumber, RUN_DEFAULTS.progressIntervalSeconds)
    .option('--no-prune', 'keep the objects of the plan\'s ApplySet that the plan no longer has (default: deleted after the last step)')
    .option('--purge-volumes', 'prune PersistentVolumeClaims too: those this plan made and no longer has (the data!)')
    .option('-y, --yes', 'approve the destructive changes without a question (scripts, CI); they are still listed')
    .option('--auto-approve', 'the same as --yes (as Terraform\'s)')
    .option('--adopt', 'take over existing objects of other owners (Helm, kubectl, mgradm; not another plan\'s namespace) instead of refusing')
    .option('--lock-timeout <duration>', LOCK_TIMEOUT_HELP, duration)), 'run')
    .addHelpText('after', `
Resume: a step whose Jobs are Complete with the same spec hash is skipped; a running one is
attached to; a failed one stops the run with its logs; a changed one is refused unless --rerun.
Prune: after the last step, objects this plan applied before and no longer has (the members of
its ApplySet, applyset.kubernetes.io/part-of) are deleted; claims only with --purge-volumes,
credentials and step Jobs never. \`uyuni-cdk plan\` lists them first.
Logs: <run dir>/<step>/<pod>.<container>.log, events: <run dir>/events.jsonl.
${SAFETY_HELP}
${EXIT_CODES_HELP}

Examples:
  uyuni-cdk run dist/install
  uyuni-cdk run dist/upgrade --yes                  # CI: the scale-downs are approved
  uyuni-cdk plan dist/upgrade --out up.plan && uyuni-cdk run up.plan   # exactly what was reviewed
  uyuni-cdk run dist/install --kubeconfig ~/.kube/uyuni --context prod --output json
  uyuni-cdk run dist/migrate --rerun import-secrets          # repeat one finished data step (asks first)`)
    .action((planDir: string, opts: RunCommandOptions) => exitWith(loadRuntime().then((m) => m.runCommand(planDir, opts, runIo))));
}
