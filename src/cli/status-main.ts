/**
 * `uyuni-cdk status …` as the installed command runs it (bin/bundle.js: the bundle of its own,
 * bundle/status.cjs): the program with `status` alone, its runtime imported statically, so that
 * the bundle holds what status runs and nothing else (no other verb's runtime, no synth, no
 * cdk8s; esbuild drops the parts of the Kubernetes client it does not use, which it cannot
 * behind the CLI's lazy `import()`s). Issue 36: status start-up.
 */
import { parseToExit } from './parse';
import { newProgram } from './program';
import { defineStatus } from './status-verb';
import { statusCommand } from '../runtime/verbs/status-command';

export async function main(argv: string[]): Promise<void> {
  const program = newProgram();
  defineStatus(program, statusCommand);
  await parseToExit(program, argv);
}
