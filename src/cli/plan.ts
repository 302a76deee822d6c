import type { Command } from 'commander';
import type { CommonOptions } from '../runtime/commands';
import { addClusterOptions, EXIT_CODES_HELP, exitWith, loadRuntime, processIo } from './options';

export function register(program: Command): void {
  addClusterOptions(program.command('plan')
    .argument('<planDir>', 'a synthesized plan directory, e.g. dist/install')
    .description('Show what `run` would do, changing nothing: per step its objects and the action each gets (create, unchanged, update, blocked-immutable, skip-complete), its waits and timeout'))
    .addHelpText('after', `${EXIT_CODES_HELP}

Examples:
  uyuni-cdk plan dist/install
  uyuni-cdk plan dist/upgrade --output json`)
    .action((planDir: string, opts: CommonOptions) => exitWith(loadRuntime().then((m) => m.planCommand(planDir, opts, processIo))));
}
