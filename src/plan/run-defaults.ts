/**
 * What `uyuni-cdk run` assumes when not told: the CLI shows these in `--help` and passes them,
 * the runtime applies them when called without (tests, other callers). Outside src/runtime so
 * the CLI can read them without loading the runtime.
 */
import * as os from 'os';
import * as path from 'path';

export const RUN_DEFAULTS = {
  /** `--stuck-grace`: how long a step's pod may stay stuck (ImagePullBackOff, Unschedulable, ...). */
  stuckGraceSeconds: 120,
  /** `--progress-interval`: without a terminal, a waiting line at least this often. */
  progressIntervalSeconds: 10,
  /** `--keep-runs`: the run series (src/runtime/core/run-dirs.ts) of a plan and namespace kept after a run. */
  keepRuns: 20,
  /** `destroy --yes --timeout`: how long it waits for what it deleted to be gone. */
  destroyTimeoutSeconds: 600,
} as const;

/** How `--help` and the docs name the default run directory. */
export const RUNS_DIR_HELP = '$XDG_STATE_HOME/uyuni-cdk/<namespace>/<plan>/<series>/<run id>/ (without XDG_STATE_HOME: ~/.local/state/uyuni-cdk/...)';

/**
 * Where a plan's runs keep their logs and events without `--run-dir`, a directory per run series
 * with one per attempt inside (src/runtime/core/run-dirs.ts): the user's state directory (XDG Base Directory; a relative $XDG_STATE_HOME is ignored,
 * as the specification says), per namespace and plan. Never the plan directory (dist/ is
 * committed) nor wherever the shell happens to be; earlier runs of the same plan and namespace
 * sit beside each other, where a failure report finds their saved logs.
 */
export function defaultRunsDir(namespace: string, plan: string, env: NodeJS.ProcessEnv = process.env, home = os.homedir()): string {
  const xdg = env.XDG_STATE_HOME;
  const state = xdg && path.isAbsolute(xdg) ? xdg : path.join(home, '.local', 'state');
  return path.join(state, 'uyuni-cdk', namespace, plan);
}
