/**
 * What every verb's entry point shares (src/runtime/verbs/commands.ts, src/runtime/verbs/status-command.ts):
 * the process as options and `Io`, the output mode and the views' options, the connection, and the one-line failure.
 * Kept apart from commands.ts so that a verb that only reads (`status`) loads none of `run`'s,
 * `plan`'s or `destroy`'s modules (issue 36: status start-up).
 */
import { EndingSignal, EXIT } from '../../plan/exit-codes';
import { printable } from '../../plan/printable';
import { Cluster } from '../../kube/cluster';
import { RuntimeError } from '../../kube/api-errors';
import { loadKubeConfig } from '../../kube/load-kubeconfig';
import { paletteFor, Palette } from '../report/colour';
import type { OutputMode } from '../report/reporter';
import type { ViewOptions } from '../report/view';

export interface CommonOptions {
  readonly kubeconfig?: string;
  readonly context?: string;
  readonly namespace?: string;
  /** @default text */
  readonly output?: 'text' | 'json' | 'yaml';
  /** `--no-color` sets it false: no colour even on a terminal (NO_COLOR does the same). @default true */
  readonly color?: boolean;
}

export interface Io {
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
  readonly isTTY: boolean;
  /**
   * Called once a run has started, with what to do when the user interrupts it (Ctrl-C) or a
   * signal ends it (SIGTERM, SIGHUP: src/cli/parse.ts `onEndingSignals`) before the process
   * ends; absent: nobody interrupts (tests).
   */
  readonly onInterrupt?: (cleanup: (signal?: EndingSignal) => Promise<void>) => void;
  /** Asks a question on the terminal and returns the answer; absent: no terminal to ask on (a pipe, CI, tests). */
  readonly ask?: (question: string) => Promise<string>;
}

export function outputMode(o: CommonOptions, io: Io): OutputMode {
  if (o.output === 'json' || o.output === 'yaml') return 'json';
  return io.isTTY ? 'tty' : 'plain';
}

/** What a verb's view is made of (src/runtime/report/view.ts): `-o` read here, once, for the view the verb chooses. */
export function viewOptions(o: CommonOptions & { readonly verbose?: boolean }, io: Io): ViewOptions {
  return { format: o.output ?? 'text', out: io.out, palette: paletteOf(o, io), verbose: o.verbose };
}

/** Colour only for text on a terminal, never with `--no-color` or NO_COLOR (src/runtime/colour.ts). */
export function paletteOf(o: CommonOptions, io: Io): Palette {
  return paletteFor({ isTTY: io.isTTY, format: o.output ?? 'text', color: o.color });
}

/** The cluster of the kubeconfig; an API server that stops answering, and answers again, is said on stderr. */
export function connect(o: CommonOptions, io?: Io): Cluster {
  const cluster = new Cluster(loadKubeConfig({ kubeconfig: o.kubeconfig, context: o.context }));
  if (io) cluster.onAvailability = (_answers, detail) => io.err(`uyuni-cdk: ${detail}\n`);
  return cluster;
}

/**
 * Every verb's failure: one line saying what failed and what to check, the error's exit code;
 * the stack only with `--debug` (the CLI sets UYUNI_CDK_DEBUG=1).
 */
export const debugging = () => process.env.UYUNI_CDK_DEBUG === '1';

export function reportFailure(io: Io, e: unknown): number {
  const debug = debugging();
  const expected = e instanceof RuntimeError;
  // what a kubeconfig or an argument carried: no terminal escapes, no 100 kB value
  const message = printable(e instanceof Error ? e.message : String(e));
  io.err(`uyuni-cdk: ${message}${expected || debug ? '' : ' (an unexpected error: --debug shows where)'}\n`);
  if (debug && e instanceof Error && e.stack) io.err(`${e.stack}\n`);
  return expected ? e.exitCode : EXIT.stepFailed;
}

export async function guarded(io: Io, fn: () => Promise<number>): Promise<number> {
  // Last resort: should the command ever wait on something that can no longer happen (the event
  // loop empties), the process must not exit 0 without a result.
  const silent = () => {
    io.err('uyuni-cdk: internal error: the command stopped before it finished (no pending request or timer); nothing was reported\n');
    process.exitCode = EXIT.stepFailed;
  };
  process.once('beforeExit', silent);
  try {
    return await fn();
  } catch (e) {
    return reportFailure(io, e);
  } finally {
    process.removeListener('beforeExit', silent);
  }
}
