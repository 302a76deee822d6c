import type { Command } from 'commander';
import { EXIT } from '../plan/exit-codes';
import type { SupportCommandOptions } from '../runtime/verbs/commands';
import { addConnectionOptions, exitWith, processIo } from './options';
import { loadRuntime } from './runtime';

type SupportFlags = Omit<SupportCommandOptions, 'output'> & { output?: string };

export function register(program: Command): void {
  addConnectionOptions(program.command('support')
    .argument('<planDir>', 'a synthesized plan directory, e.g. dist/install')
    .description('Write one .tar.gz with what someone helping needs: the plan, its objects, events, pod logs, run records, nodes and the server\'s supportconfig; nothing secret')
    .option('-o, --output <file>', 'the bundle (default: ./uyuni-support-<plan>-<time>.tar.gz)')
    .option('--no-exec', 'do not run supportconfig in the server pod (through the API\'s exec)')
    .option('--without-logs', 'leave out every log and event text (pod logs, Events, run logs, supportconfig): for a user who may not read the namespace\'s Secrets'))
    .addHelpText('after', `
What goes in: the plan directory; every object the plan's labels select (YAML; Secrets as names
and key sizes only); the namespace's Events; each pod's description and container logs (current
and previous, the last 1 MiB of each); the run directories of this plan; the cluster's version
and nodes; the files of the server's own supportconfig, as a plain directory, when its pod
runs (minutes).
Nothing secret: no Secret value, no token, no password. Every text but the plan copy is scrubbed
of the values of the namespace's Secret keys that hold secrets (passwords, tokens, private keys;
not user or database names, not certificates, not values under 8 characters) and of your
kubeconfig credentials, as whole words, also URL-encoded, JSON-escaped, base64, hex and line by
line; and of password=..., --password ..., Authorization: ..., Bearer ... and private key blocks.
redactions.txt says which Secret key was scrubbed how often in which files (never a value).
supportconfig's text files are scrubbed the same way, its other files are as it writes them:
review them before you share them, or use --no-exec. What could not be read (RBAC, a missing CRD) is listed in notes.txt.

Secrets that cannot be read (e.g. the built-in view role) cannot be scrubbed: support then
refuses (exit 1) and says which permission is missing (get/list secrets in the namespace);
--without-logs writes a bundle without any log or event text instead.

Exit codes:
  ${EXIT.ok}  written (what could not be read is listed in notes.txt)
  ${EXIT.stepFailed}  refused: the namespace's Secrets cannot be read (see --without-logs)
  ${EXIT.badInput}  bad input: plan directory, kubeconfig, arguments
  ${EXIT.unreachable}  the cluster is unreachable

Examples:
  uyuni-cdk support dist/install                # ./uyuni-support-install-<time>.tar.gz
  uyuni-cdk support dist/migrate -o migration-failure.tar.gz --no-exec`)
    .action((planDir: string, flags: SupportFlags) => exitWith(loadRuntime().then((m) => m.supportCommand(planDir, { ...flags, file: flags.output, output: undefined }, processIo))));
}
