/**
 * What `destroy` did or would do to each object (src/runtime/verbs/destroy.ts), as its views show
 * it (src/runtime/report/destroy-view.ts): data only, so that the views need not import the verb.
 */
import type { ObjectRef } from '../../plan/types';

export interface DestroyItem {
  readonly object: string;
  readonly result: 'deleted' | 'would delete' | 'kept' | 'absent' | 'not ours';
  readonly detail?: string;
  /** What `waitGone` waits for (not in the JSON output: `object` names it). */
  readonly ref?: ObjectRef;
  /**
   * The uid of what was deleted (not in the JSON output): an object of that name with another uid
   * was made again after the delete; what destroy deleted is gone, and the new one is not its to
   * wait for or delete (kapp's delete change compares uids the same way).
   */
  readonly uid?: string;
}

/** What was asked of destroy, as its views say it: deleting or a dry run, the data with it or kept. */
export interface DestroyMode {
  readonly yes: boolean;
  readonly purgeVolumes: boolean;
}
