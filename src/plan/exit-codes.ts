/**
 * The exit codes of `uyuni-cdk`, every verb and the agent: defined once, for the runtime (its
 * errors carry them) and the CLI (it returns them). Nothing here imports anything.
 */
export const EXIT = {
  ok: 0,
  /** A step failed, was refused (gate, requirement, changed Job) or timed out; agent: a unit could not be removed. */
  stepFailed: 1,
  /** Bad plan directory, plan index, kubeconfig, context or arguments. */
  badInput: 2,
  /** The cluster (the agent: the API or the bus) cannot be reached. */
  unreachable: 3,
  /**
   * Not finished, nothing failed. `status`: not every step is done (not applied, waiting, running,
   * changed); `run`: out of time while the server is still in its startup probe (the same command waits on).
   */
  incomplete: 4,
  /** `plan --detailed-exitcode` (as Terraform's): the run would change something; every error is then 1. */
  planChanges: 2,
  /** `run` interrupted with Ctrl-C (128 + SIGINT). */
  interrupted: 130,
  /** `run` ended by SIGHUP (128 + 1: the terminal or the ssh session went away). */
  hangup: 129,
  /** `run` ended by SIGTERM (128 + 15). */
  terminated: 143,
} as const;

/** The signals `run` and `destroy` end on as on Ctrl-C, each with its exit code (128 + its number). */
export const SIGNAL_EXIT = { SIGHUP: EXIT.hangup, SIGINT: EXIT.interrupted, SIGTERM: EXIT.terminated } as const;

export type EndingSignal = keyof typeof SIGNAL_EXIT;
