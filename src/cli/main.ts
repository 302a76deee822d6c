import { Command, CommanderError } from 'commander';
import { EXIT } from '../plan/exit-codes';

/**
 * `uyuni-cdk`: argument parsing and output only. Each verb module registers itself and loads
 * its heavy dependencies (the Kubernetes client, D-Bus) inside its action, so `--help` stays fast.
 * The exit codes are src/plan/exit-codes.ts.
 */

/** Verb modules: each exports `register(program)`. */
const VERBS: ReadonlyArray<() => { register(program: Command): void }> = [
  () => require('./run'),
  () => require('./plan'),
  () => require('./status'),
  () => require('./destroy'),
  () => require('./agent'),
];

export function buildProgram(): Command {
  const program = new Command('uyuni-cdk')
    .description('Run the plans that `npx cdk8s synth` wrote into dist/, and the node agent.')
    .showHelpAfterError()
    .exitOverride();
  for (const load of VERBS) load().register(program);
  return program;
}

export async function main(argv: string[]): Promise<void> {
  const program = buildProgram();
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (e) {
    if (e instanceof CommanderError) {
      // --help and --version exit 0; every usage error is bad input.
      process.exitCode = e.exitCode === 0 ? EXIT.ok : EXIT.badInput;
      return;
    }
    throw e;
  }
}
