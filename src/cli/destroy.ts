import type { Command } from 'commander';
import type { DestroyCommandOptions } from '../runtime/commands';
import { addClusterOptions, EXIT_CODES_HELP, exitWith, loadRuntime, processIo } from './options';

export function register(program: Command): void {
  addClusterOptions(program.command('destroy')
    .argument('<planDir>', 'the plan directory whose objects to remove (it names the namespace and the labels)')
    .description('Delete everything carrying the plan\'s labels, last step first; a dry run unless --yes; volumes (PVCs, and the namespace holding them) only with --purge-volumes')
    .option('--yes', 'really delete (without it: list what would be deleted)')
    .option('--purge-volumes', 'also delete PersistentVolumeClaims (the data!) and their namespace'))
    .addHelpText('after', `${EXIT_CODES_HELP}

Examples:
  uyuni-cdk destroy dist/install                 # dry run: lists, deletes nothing
  uyuni-cdk destroy dist/install --yes           # keeps the volumes
  uyuni-cdk destroy dist/install --yes --purge-volumes`)
    .action((planDir: string, opts: DestroyCommandOptions) => exitWith(loadRuntime().then((m) => m.destroyCommand(planDir, opts, processIo))));
}
