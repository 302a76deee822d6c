import { Command, InvalidArgumentError, Option } from 'commander';
// Static, not a dynamic import of the readline module: bin/code-cache.js runs the bundle as a vm.Script, which
// has no dynamic-import callback, so an `import()` of a builtin crashed the question on a terminal
// (ERR_VM_DYNAMIC_IMPORT_CALLBACK_MISSING). eslint.config.js and scripts/build.js keep it so.
import * as readline from 'readline';
import { EXIT } from '../plan/exit-codes';
import type { Io } from '../runtime/verbs/verb';
import { stdoutGone } from './parse';

/** How a verb reaches the cluster, named as kubectl names them. */
export function addConnectionOptions(cmd: Command): Command {
  return cmd
    .option('--kubeconfig <file>', 'kubeconfig file (default: $KUBECONFIG, a colon-separated list merged like kubectl does, then ~/.kube/config)')
    .option('--context <name>', 'kubeconfig context to use (default: its current-context)')
    .option('-n, --namespace <ns>', "use this namespace instead of the plan's");
}

/** `run`'s output formats; plan, status and destroy name their own (one document, not events). */
export const RUN_OUTPUT_HELP = 'text (a live line per step on a terminal, plain lines otherwise), json (one event per line, as events.jsonl) or yaml (one document per event)';

/** Options every cluster verb takes: the connection, the output format (what `-o` prints: the verb's own words), colour. */
export function addClusterOptions(cmd: Command, outputHelp = RUN_OUTPUT_HELP): Command {
  return addConnectionOptions(cmd)
    .addOption(new Option('-o, --output <format>', outputHelp).choices(['text', 'json', 'yaml']).default('text'))
    .option('--no-color', 'no colour on a terminal either (as NO_COLOR=1); pipes, files, json and yaml never get colour');
}

/** Bad input and an unreachable cluster: the same for every cluster verb. */
export const INPUT_AND_CLUSTER = `  ${EXIT.badInput}  bad input: plan, kubeconfig, credentials the cluster refuses, a user it forbids, arguments
  ${EXIT.unreachable}  the cluster is unreachable before any step: connection refused, DNS, TLS, no answer, an API server failing
Errors are one line saying what to check; --debug also prints where they happened.`;

export const EXIT_CODES_HELP = `
Exit codes:
  ${EXIT.ok}  done
  ${EXIT.stepFailed}  a step failed or was refused (gate, requirement, changed Job, timeout)
  ${EXIT.incomplete}  not finished, nothing failed: out of time while the server is still starting (its
     startup probe; a first start can take hours): the same command waits on
${INPUT_AND_CLUSTER}
  ${EXIT.interrupted}  interrupted (Ctrl-C): the same command resumes`;

/** `status` tells a finished plan from one still to do, for scripts (`until uyuni-cdk status ...; do sleep 60; done`). */
export const STATUS_EXIT_CODES_HELP = `
Exit codes:
  ${EXIT.ok}  every step done
  ${EXIT.stepFailed}  a step failed
  ${EXIT.incomplete}  not finished: no step failed, but one is not-applied, partly-applied, waiting, running or changed
${INPUT_AND_CLUSTER}`;

/** An option value that must be a positive number (seconds, a count): anything else is a usage error, exit 2. */
export function positiveNumber(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError('must be a positive number');
  return n;
}

/** A repeatable option whose values may also be comma-separated. */
export function collectList(value: string, previous: readonly string[] = []): string[] {
  return [...previous, ...value.split(',').filter(Boolean)];
}

/** A question on the terminal (on stderr, so `-o json` output stays clean), the answer from stdin. */
async function askOnTerminal(question: string): Promise<string> {
  const rl = readline.createInterface({ input: process.stdin, output: process.stderr });
  try {
    return await new Promise<string>((resolve) => {
      rl.question(question, resolve);
      // Ctrl-D: no answer, which is not yes
      const eof = () => resolve('');
      rl.once('close', eof);
      // Ctrl-C (the terminal is raw while readline asks, so it reaches us as a key): the signal it
      // stands for, so the verb ends as interrupted (run: exit 130, its lock released) and
      // nothing is written; the answer never comes
      rl.once('SIGINT', () => {
        rl.off('close', eof);
        rl.close();
        process.stderr.write('\n');
        // the verb's handler (src/cli/parse.ts onEndingSignals) at once: a signal sent to
        // ourselves may come after the event loop ran empty; without one, the default: ended by it
        if (process.listenerCount('SIGINT') > 0) process.emit('SIGINT', 'SIGINT');
        else process.kill(process.pid, 'SIGINT');
      });
    });
  } finally {
    rl.close();
  }
}

/** The process as the runtime's verbs see it: its output streams, whether stdout is a terminal, and one to ask on. */
export const processIo: Io = {
  // nothing more once stdout's reader has gone (a run goes on: src/cli/parse.ts)
  out: (t) => { if (!stdoutGone()) process.stdout.write(t); },
  err: (t) => { if (!process.stderr.destroyed) process.stderr.write(t); },
  isTTY: Boolean(process.stdout.isTTY),
  ...(process.stdin.isTTY ? { ask: askOnTerminal } : {}),
};

/** The flags that allow a change of the server's recorded identity (docs/runtime.md, "Safety"). */
export function addIdentityOptions(cmd: Command, verb: 'run' | 'plan'): Command {
  const how = verb === 'plan' ? 'predict `run --allow-…`: ' : '';
  return cmd
    .option('--allow-fqdn-change', `${how}allow a plan whose fqdn differs from the server's recorded one (asks first)`)
    .option('--allow-downgrade', `${how}allow a plan with an older image generation than the server's recorded one (asks first)`)
    .option('--allow-new-ca', `${how}allow a plan that replaces the server's CA (another tls.mode, or Secret uyuni-ca gone) (asks first)`);
}

/** What `run` asks about, and how it is answered: said by `run --help` and docs/runtime.md "Safety". */
export const SAFETY_HELP = `
Safety: before its first write run decides as \`plan\` does. It refuses (exit 1, nothing written)
a data step of a finished migration or upgrade (the record in ConfigMap uyuni-cdk-history
decides, not the Jobs: --rerun STEP repeats one, asking first) and a change of the server's
recorded fqdn, image generation (older) or CA without --allow-fqdn-change, --allow-downgrade,
--allow-new-ca. A record that cannot be read (cut short, edited, emptied) refuses every run it
protects, whatever the flags (uyuni-cdk repair-record rebuilds it, asking first); with no record
left, a server set up in the namespace refuses as a record would. Destructive changes (deletes and pruning, scale-downs of running workloads,
data steps such as the data sync that stops the old host, re-created finished Jobs, new
credentials beside existing data, allowed identity changes) are listed and need an answer:
"yes" on a terminal, or --yes (anything else stops the run: exit 1; Ctrl-C at the question:
exit 130; both write nothing). Without a terminal and without --yes such a run exits 2 and
writes nothing. A run with nothing destructive (a first install) asks nothing.`;

/** Runs a lazily loaded command and sets the process exit code. */
export async function exitWith(code: Promise<number>): Promise<void> {
  process.exitCode = await code;
}
