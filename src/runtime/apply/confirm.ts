/**
 * Destructive changes ask first (as `terraform apply`): before its first write, `run` shows them
 * and goes ahead only on `--yes`, a saved plan (reviewed when it was written), or the answer
 * `yes` on a terminal. Without a terminal and without `--yes` it refuses, exit 2, having written
 * nothing. A run with nothing destructive asks nothing.
 */
import { EXIT } from '../../plan/exit-codes';
import { RuntimeError } from '../../kube/api-errors';
import type { Approval, DestructiveChange, EventSink } from '../core/events';

/** Asks the user on the terminal; the answer without its newline. */
export type Ask = (question: string) => Promise<string>;

export interface ApprovalOptions {
  /** `--yes`, `-y`, `--auto-approve`. */
  readonly yes?: boolean;
  /** Applying a saved plan (`run FILE`): its changes were shown when it was written. */
  readonly savedPlan?: boolean;
  /** A terminal to ask on; absent: none (CI, a pipe). */
  readonly ask?: Ask;
}

export const QUESTION = 'Do you want to make these changes?\n  Only \'yes\' will be accepted to approve.\n\n  Enter a value: ';

/** Throws (nothing written yet) unless the changes may go ahead. */
export async function approve(changes: readonly DestructiveChange[], o: ApprovalOptions, reporter: EventSink): Promise<void> {
  if (changes.length === 0) return;
  reporter.emit({ type: 'destructive', changes: [...changes] });
  let result: Approval;
  if (o.yes) result = 'yes';
  else if (o.savedPlan) result = 'saved plan';
  else if (!o.ask) result = 'refused';
  else result = (await o.ask(QUESTION)).trim() === 'yes' ? 'answered yes' : 'declined';
  reporter.emit({ type: 'approval', result });
  if (result === 'refused') {
    throw new RuntimeError(`${changes.length} destructive change${changes.length === 1 ? '' : 's'} and no terminal to ask on: nothing was done; `
      + 'review them (uyuni-cdk plan), then run again with --yes (or on a terminal, or a saved plan: plan --out FILE, run FILE)', EXIT.badInput);
  }
  if (result === 'declined') throw new RuntimeError('destructive changes not approved: nothing was done', EXIT.stepFailed);
}
