import type { Command } from 'commander';
import { EXIT } from '../plan/exit-codes';
import type { SupportCommandOptions } from '../runtime/commands';
import { addConnectionOptions, exitWith, loadRuntime, processIo } from './options';

type SupportFlags = Omit<SupportCommandOptions, 'output'> & { output?: string };

export function register(program: Command): void {
  addConnectionOptions(program.command('support')
    .argument('<planDir>', 'a synthesized plan directory, e.g. dist/install')
    .description('Write one .tar.gz with what someone helping needs: the plan, its objects, events, pod logs, run records, nodes and the server\'s supportconfig; nothing secret')
    .option('-o, --output <file>', 'the bundle (default: ./uyuni-support-<plan>-<time>.tar.gz)')
    .option('--no-exec', 'do not run supportconfig in the server pod (through the API\'s exec)'))
    .addHelpText('after', `
What goes in: the plan directory; every object the plan's labels select (YAML; Secrets as names
and key sizes only); the namespace's Events; each pod's description and container logs (current
and previous, the last 1 MiB of each); the run directories of this plan; the cluster's version
and nodes; the server's own supportconfig archive when its pod runs (minutes).
Nothing secret: no Secret value, no token, no password. Every text in the bundle is scrubbed
of every Secret value of the namespace and of your kubeconfig credentials. The supportconfig
archive is as supportconfig writes it: review it before you share it, or use --no-exec.
What could not be read (RBAC, a missing CRD) is listed in notes.txt; the rest is collected.

Exit codes:
  ${EXIT.ok}  written (what could not be read is listed in notes.txt)
  ${EXIT.badInput}  bad input: plan directory, kubeconfig, arguments
  ${EXIT.unreachable}  the cluster is unreachable

Examples:
  uyuni-cdk support dist/install                # ./uyuni-support-install-<time>.tar.gz
  uyuni-cdk support dist/migrate -o migration-failure.tar.gz --no-exec`)
    .action((planDir: string, flags: SupportFlags) => exitWith(loadRuntime().then((m) => m.supportCommand(planDir, { ...flags, file: flags.output, output: undefined }, processIo))));
}
