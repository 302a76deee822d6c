import { Command, CommanderError } from 'commander';
import { EndingSignal, EXIT, SIGNAL_EXIT } from '../plan/exit-codes';
import { printable } from '../plan/printable';

/**
 * Runs a program to its exit code, for the whole CLI and the agent's own entry alike: `--help`
 * and `--version` exit 0, every usage error is bad input (but 1 under `--detailed-exitcode`,
 * where 2 means "changes", as Terraform has it), and an error no verb reported is one line (its
 * stack only with --debug).
 */
export async function parseToExit(program: Command, argv: string[]): Promise<void> {
  hintAfterErrors(program);
  endQuietlyOnEpipe();
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (e) {
    if (e instanceof CommanderError) {
      process.exitCode = e.exitCode === 0 ? EXIT.ok : argv.some((a) => a === '--detailed-exitcode' || a === '--exit-code') ? EXIT.stepFailed : EXIT.badInput;
      return;
    }
    // the verbs report their own errors; this is one nobody expected
    process.stderr.write(process.env.UYUNI_CDK_DEBUG === '1' || program.opts().debug
      ? `uyuni-cdk: ${(e as Error)?.stack ?? e}\n`
      : `uyuni-cdk: ${printable(String((e as Error)?.message ?? e))} (an unexpected error: --debug shows where)\n`);
    process.exitCode = EXIT.stepFailed;
  }
}

/**
 * A usage error is its line (and commander's "Did you mean"), then where the help is, as kubectl
 * has it (`See 'kubectl get --help' for usage.`): not the whole help, which hides the error.
 */
export function hintAfterErrors(cmd: Command, parents: readonly string[] = []): void {
  const words = [...parents, cmd.name()];
  cmd.showHelpAfterError(`See '${words.join(' ')} --help' for usage.`);
  for (const sub of cmd.commands) hintAfterErrors(sub, words);
}

/** Set by a verb that writes to the cluster (`run`): a closed stdout does not end it. */
let keepGoing = false;
let stdoutClosed = false;

/** Whether stdout's reader has gone (a run that goes on writes nothing more to it). */
export const stdoutGone = (): boolean => stdoutClosed;

/**
 * For `run`: `uyuni-cdk run -o json | head` must not stop a migration halfway when `head` has
 * read enough. Once stdout's reader has gone, the run goes on, writing nothing more to stdout
 * (its events go on into the run directory's events.jsonl, as always), and says so on stderr.
 */
export function keepGoingWhenStdoutCloses(): void {
  keepGoing = true;
}

/**
 * `uyuni-cdk plan -o json | head -3`: once the reader has gone, the process ends at the next write
 * with 141 (128 + SIGPIPE, what the shell reports for kubectl there), without a stack trace.
 * `run` goes on instead (keepGoingWhenStdoutCloses): what runs in the cluster is not left halfway.
 */
function endQuietlyOnEpipe(): void {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (e: NodeJS.ErrnoException) => {
      if (e.code !== 'EPIPE') throw e;
      if (!keepGoing) process.exit(128 + 13);
      if (stream === process.stdout && !stdoutClosed) {
        stdoutClosed = true;
        if (!process.stderr.destroyed) process.stderr.write('uyuni-cdk: stdout was closed (the reader of the pipe ended); the run goes on, its events in events.jsonl of its run directory\n');
      }
    });
  }
}

/**
 * Ctrl-C, SIGTERM (a service manager, `kill`) and SIGHUP (the terminal or the ssh session went
 * away): the first of them runs `cleanup` once, then the process exits with 128 + the signal's
 * number (src/plan/exit-codes.ts SIGNAL_EXIT). A second signal while cleaning up ends it at once.
 */
export function onEndingSignals(cleanup: (signal: EndingSignal) => Promise<void>): void {
  const signals = Object.keys(SIGNAL_EXIT) as EndingSignal[];
  let ending = false;
  const handler = (signal: EndingSignal) => {
    if (ending) process.exit(SIGNAL_EXIT[signal]);
    ending = true;
    void cleanup(signal).catch(() => undefined).finally(() => process.exit(SIGNAL_EXIT[signal]));
  };
  for (const s of signals) process.on(s, handler);
}
