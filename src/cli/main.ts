import { Command } from 'commander';
import { parseToExit } from './parse';
import { newProgram } from './program';

/**
 * `uyuni-cdk`: argument parsing and output only. Each verb module registers itself and loads
 * its heavy dependencies (the Kubernetes client, D-Bus) inside its action, so `--help` stays fast.
 * The exit codes are src/plan/exit-codes.ts.
 */

/** Verb modules: each exports `register(program)`. */
const VERBS: ReadonlyArray<() => { register(program: Command): void }> = [
  () => require('./init'),
  () => require('./synth'),
  () => require('./run'),
  () => require('./plan'),
  () => require('./status'),
  () => require('./destroy'),
  () => require('./logs'),
  () => require('./support'),
  () => require('./unlock'),
  () => require('./repair-record'),
  () => require('./agent'),
  () => require('./completion'),
];

/**
 * Other tools' words for our verbs (kapp deploy, kubectl apply/delete/diff, helm
 * install/uninstall, compose up/down), each with its example: commander alone would suggest
 * `destroy` for `deploy`.
 */
const OTHER_TOOLS_WORDS: Readonly<Record<string, string>> = {
  deploy: 'run', apply: 'run', install: 'run', up: 'run',
  delete: 'destroy', down: 'destroy', uninstall: 'destroy',
  diff: 'plan',
};

/** An unknown command: our verb for another tool's word, else commander's own suggestion. */
function unknownCommand(program: Command, word: string): void {
  const verb = Object.hasOwn(OTHER_TOOLS_WORDS, word) ? OTHER_TOOLS_WORDS[word] : undefined;
  if (verb) {
    program.error(`error: unknown command '${word}'\n(Did you mean ${verb}? e.g. uyuni-cdk ${verb} dist/install)`, { code: 'commander.unknownCommand' });
  }
  // commander's own handler (not in its typings): its message and "Did you mean" by edit distance
  (program as unknown as { unknownCommand(): void }).unknownCommand();
}

export function buildProgram(): Command {
  const program = newProgram();
  program.on('command:*', (operands: string[]) => unknownCommand(program, operands[0]));
  for (const load of VERBS) load().register(program);
  return program;
}

export async function main(argv: string[]): Promise<void> {
  await parseToExit(buildProgram(), argv);
}
