import type { Command } from 'commander';
import { defineStatus } from './status-verb';

/**
 * `status` on the CLI's program (`--help`, and `uyuni-cdk --debug status …`), its runtime loaded
 * when it runs. The installed command runs `uyuni-cdk status …` from a bundle of its own
 * (src/cli/status-main.ts), which loads none of the other verbs' modules.
 */
export function register(program: Command): void {
  defineStatus(program, (planDir, opts, io) => import('../runtime/verbs/status-command').then((m) => m.statusCommand(planDir, opts, io)));
}
