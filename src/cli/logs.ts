import type { Command } from 'commander';
import { EXIT } from '../plan/exit-codes';
import type { Io, LogsCommandOptions } from '../runtime/verbs/commands';
import { addConnectionOptions, exitWith, positiveNumber, processIo } from './options';
import { loadRuntime } from './runtime';

/** Ctrl-C while following: the streams stop; the pods keep running. */
const logsIo: Io = {
  ...processIo,
  onInterrupt: (stop) => process.once('SIGINT', () => {
    stop();
    process.exitCode = EXIT.ok;
  }),
};

export function register(program: Command): void {
  addConnectionOptions(program.command('logs')
    .argument('<planDir>', 'a synthesized plan directory, e.g. dist/install')
    .argument('[step]', 'the step whose pods to show (its Jobs\' and Deployments\'); default: the plan\'s running services (every Deployment)')
    .description('Print the logs of a step\'s pods, or of the server\'s own pods; from the run directories when a finished step\'s pods are gone')
    .option('-f, --follow', 'keep printing the running containers\' new lines until they end (Ctrl-C stops following; the pods keep running)')
    .option('--tail <lines>', 'only the last lines of each container', positiveNumber))
    .addHelpText('after', `
Each line is prefixed [pod/container], as kubectl logs --prefix. A finished step whose pods
are gone (a Job TTL, kubectl delete) is read from the newest run attempt (of any series) that saved it.

Exit codes:
  ${EXIT.ok}  shown (with -f: every followed container ended, or Ctrl-C)
  ${EXIT.badInput}  bad input: no such step, nothing to show (no pod and no saved log), arguments
  ${EXIT.unreachable}  the cluster is unreachable

Examples:
  uyuni-cdk logs dist/install server -f         # the server's first start, as it sets itself up
  uyuni-cdk logs dist/install database --tail 50
  uyuni-cdk logs dist/install                   # every running service of the plan`)
    .action((planDir: string, step: string | undefined, opts: LogsCommandOptions) => exitWith(loadRuntime().then((m) => m.logsCommand(planDir, step, opts, logsIo))));
}
