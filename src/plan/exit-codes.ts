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
  /** `status`: no step failed, but not every step is done (not applied, waiting, running, changed). */
  incomplete: 4,
  /** `plan --detailed-exitcode` (as Terraform's): the run would change something; every error is then 1. */
  planChanges: 2,
  /** `run` interrupted with Ctrl-C (128 + SIGINT). */
  interrupted: 130,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];
