import { Command, InvalidArgumentError } from 'commander';
import { RUN_DEFAULTS, RUNS_DIR_HELP } from '../plan/run-defaults';
import type { Io, RunCommandOptions } from '../runtime/verbs/commands';
import {
  addClusterOptions, addIdentityOptions, collectList, EXIT_CODES_HELP, exitWith, positiveNumber, processIo, SAFETY_HELP,
} from './options';
import { loadRuntime } from './runtime';
import { keepGoingWhenStdoutCloses, onEndingSignals } from './parse';
import { duration, LOCK_TIMEOUT_HELP } from './unlock';

/** `--keep-runs N`: a whole number of run series, at least 1 (the current one is always kept). */
function keepRuns(value: string): number {
  const n = positiveNumber(value);
  if (!Number.isInteger(n)) throw new InvalidArgumentError('must be a whole number of run series, 1 or more');
  return n;
}

/**
 * Ctrl-C, SIGTERM, SIGHUP: nothing to undo (each step is idempotent or resumable); the run's
 * last event says how to continue and what still runs in the cluster (src/runtime/apply/run.ts).
 */
const runIo: Io = { ...processIo, onInterrupt: (cleanup) => onEndingSignals(cleanup) };

export function register(program: Command): void {
  addIdentityOptions(addClusterOptions(program.command('run')
    .argument('<planDir>', 'a synthesized plan directory, e.g. dist/install, or a plan saved by `uyuni-cdk plan --out FILE` (applied exactly, with its flags, without a question)')
    .description('Apply a plan\'s steps in order with server-side apply, wait for each (Jobs, rollouts, certificates, volumes), stream Job logs, resume where a previous run stopped')
    .option('--rerun <step>', 're-create this step\'s Jobs (delete with propagationPolicy Background, then apply); repeatable or comma-separated', collectList)
    .option('--run-dir <dir>', `where this run's logs and events.jsonl go (default: ${RUNS_DIR_HELP})`)
    .option('--keep-runs <n>', 'after the run, keep only the newest N run series of this plan and namespace in the default run directory (never the current one)', keepRuns, RUN_DEFAULTS.keepRuns)
    .option('--timeout <seconds>', 'overall deadline (default: the plan\'s deadlineSeconds)', positiveNumber)
    .option('--stuck-grace <seconds>', 'fail a step when a Job pod stays in ImagePullBackOff, ErrImagePull, CreateContainerConfigError or Unschedulable this long', positiveNumber, RUN_DEFAULTS.stuckGraceSeconds)
    .option('--progress-interval <seconds>', 'without a terminal: print what a step waits for at least this often', positiveNumber, RUN_DEFAULTS.progressIntervalSeconds)
    .option('--no-prune', 'keep the objects of the plan\'s ApplySet that the plan no longer has (default: deleted after the last step)')
    .option('--purge-volumes', 'prune PersistentVolumeClaims too: those this plan made and no longer has (the data!)')
    .option('-y, --yes', 'approve the destructive changes without a question (scripts, CI); they are still listed')
    .option('--auto-approve', 'the same as --yes (as Terraform\'s)')
    .option('--adopt', 'take over existing objects of other owners (Helm, kubectl, mgradm; not another plan\'s namespace) instead of refusing')
    .option('--lock-timeout <duration>', LOCK_TIMEOUT_HELP, duration)
    .option('-v, --verbose', 'print every object applied, also those that changed nothing (default: a count per step)')), 'run')
    .addHelpText('after', `
Resume: a step whose Jobs are Complete with the same spec hash is skipped; a running one is
attached to; a failed one stops the run with its logs; a changed one is refused unless --rerun.
Prune: after the last step, objects this plan applied before and no longer has (the members of
its ApplySet, applyset.kubernetes.io/part-of) are deleted; claims only with --purge-volumes,
credentials and step Jobs never. \`uyuni-cdk plan\` lists them first.
Output: each object applied says created, updated or re-created; unchanged ones are counted
per step (-v lists them); the last line counts what the run changed, as terraform's:
  Run complete in 3.4s: 1 created, 2 updated, 0 deleted, 2 stopped, 1 Job run, 47 unchanged.
Run directories: one per run series, one per attempt inside: the runs that resume a stopped run
(the same command again) are attempts of its series, which ends with the run that finishes the
plan. Logs: <attempt>/<step>/<pod>.<container>.log, events: <attempt>/events.jsonl.
${SAFETY_HELP}
${EXIT_CODES_HELP}

A plan saved by \`uyuni-cdk plan --out FILE\` runs as \`uyuni-cdk run FILE\` (see plan --help).

Examples:
  uyuni-cdk run dist/install
  uyuni-cdk run dist/install --kubeconfig ~/.kube/uyuni --context prod --output json
  uyuni-cdk run dist/upgrade --yes                  # CI: the scale-downs are approved
  uyuni-cdk run dist/upgrade --rerun db-finalize --yes   # repeat one finished data step`)
    .action((planDir: string, opts: RunCommandOptions) => {
      keepGoingWhenStdoutCloses();
      return exitWith(loadRuntime().then((m) => m.runCommand(planDir, opts, runIo)));
    });
}
