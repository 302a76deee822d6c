/**
 * What `uyuni-cdk run` assumes when not told: the CLI shows these in `--help` and passes them,
 * the runtime applies them when called without (tests, other callers). Outside src/runtime so
 * the CLI can read them without loading the runtime.
 */
export const RUN_DEFAULTS = {
  /** `--stuck-grace`: how long a step's pod may stay stuck (ImagePullBackOff, Unschedulable, ...). */
  stuckGraceSeconds: 120,
  /** `--progress-interval`: without a terminal, a waiting line at least this often. */
  progressIntervalSeconds: 10,
} as const;
