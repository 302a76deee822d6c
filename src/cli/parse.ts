import { Command, CommanderError } from 'commander';
import { EXIT } from '../plan/exit-codes';

/**
 * Runs a program to its exit code, for the whole CLI and the agent's own entry alike: `--help`
 * and `--version` exit 0, every usage error is bad input, and an error no verb reported is one
 * line (its stack only with --debug).
 */
export async function parseToExit(program: Command, argv: string[]): Promise<void> {
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (e) {
    if (e instanceof CommanderError) {
      process.exitCode = e.exitCode === 0 ? EXIT.ok : EXIT.badInput;
      return;
    }
    // the verbs report their own errors; this is one nobody expected
    process.stderr.write(process.env.UYUNI_CDK_DEBUG === '1' || program.opts().debug
      ? `uyuni-cdk: ${(e as Error)?.stack ?? e}\n`
      : `uyuni-cdk: ${(e as Error)?.message ?? e} (an unexpected error: --debug shows where)\n`);
    process.exitCode = EXIT.stepFailed;
  }
}
