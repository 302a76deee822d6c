import type { Command } from 'commander';
import type { CommonOptions } from '../runtime/verbs/verb';
import { addClusterOptions, STATUS_EXIT_CODES_HELP, exitWith, processIo } from './options';

/** `status`'s command on the CLI's program (src/cli/status.ts) and on its own bundle's (src/cli/status-main.ts). */
export type StatusAction = (planDir: string, opts: CommonOptions, io: typeof processIo) => Promise<number>;

/** The `status` verb: its arguments, options and help, running `action`. */
export function defineStatus(program: Command, action: StatusAction): void {
  addClusterOptions(program.command('status')
    .argument('<planDir>', 'a synthesized plan directory, e.g. dist/install')
    .description('Show each step\'s state read from the cluster: done, not-applied, partly-applied, waiting, running, failed, changed'),
  'text (a line per step), json (one JSON document: the plan, its namespace and each step with its state) or yaml (the same document)')
    .addHelpText('after', `
It reads only; it takes no lock and may run beside a run (watch a long migration from a second
terminal). A step is done when its objects are there, what it waits for holds (rollouts, bound
claims, certificates) and its Jobs are Complete; changed: a Job was made from another spec.
${STATUS_EXIT_CODES_HELP}

Examples:
  uyuni-cdk status dist/install
  while uyuni-cdk status dist/install >/dev/null; [ $? = 4 ]; do sleep 60; done   # wait while not finished
  uyuni-cdk status dist/install --namespace uyuni-test --output json   # exit 4: nothing there yet`)
    .action((planDir: string, opts: CommonOptions) => exitWith(action(planDir, opts, processIo)));
}
