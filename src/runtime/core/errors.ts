/**
 * The runtime's own failure: a step failed, was refused or timed out. The API's failures and their
 * wording live in the Kubernetes layer (src/kube/api-errors.ts); this one belongs to the runtime's
 * vocabulary, so it sits in core/ where every room above can throw it.
 */
import { EXIT } from '../../plan/exit-codes';
import { RuntimeError } from '../../kube/api-errors';

/** A step failed, was refused (gate, requirement, changed Job) or timed out: exit 1 (still starting: 4). */
export class StepFailed extends RuntimeError {
  /** The step timed out while the server was still in its startup probe: not broken, the same command waits on (exit 4). */
  readonly stillStarting: boolean;
  /** The steps the next command re-runs, when not the failed one (src/runtime/apply/run.ts). */
  readonly rerun?: readonly string[];

  constructor(readonly step: string, message: string, o: { readonly stillStarting?: boolean; readonly rerun?: readonly string[] } = {}) {
    super(message, o.stillStarting ? EXIT.incomplete : EXIT.stepFailed);
    this.stillStarting = o.stillStarting ?? false;
    this.rerun = o.rerun;
  }
}
