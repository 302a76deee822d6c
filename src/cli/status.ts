import type { Command } from 'commander';
import type { CommonOptions } from '../runtime/commands';
import { addClusterOptions, STATUS_EXIT_CODES_HELP, exitWith, loadRuntime, processIo } from './options';

export function register(program: Command): void {
  addClusterOptions(program.command('status')
    .argument('<planDir>', 'a synthesized plan directory, e.g. dist/install')
    .description('Show each step\'s state read from the cluster: done, not-applied, partly-applied, waiting, running, failed, changed'))
    .addHelpText('after', `${STATUS_EXIT_CODES_HELP}

Examples:
  uyuni-cdk status dist/install
  uyuni-cdk status dist/install --namespace uyuni-test --output json`)
    .action((planDir: string, opts: CommonOptions) => exitWith(loadRuntime().then((m) => m.statusCommand(planDir, opts, processIo))));
}
