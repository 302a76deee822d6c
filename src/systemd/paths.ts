import * as path from 'path';
import { SYSTEM_UNIT_DIR } from './defaults';

/**
 * Where unit files go (spec §1): `/lib/systemd/system` for the system manager; for the user
 * manager `$XDG_CONFIG_HOME/systemd/user`, falling back to `~/.config/systemd/user`.
 */
export function defaultUnitDir(session: boolean, env: NodeJS.ProcessEnv, home: string): string {
  if (!session) return SYSTEM_UNIT_DIR;
  const config = env.XDG_CONFIG_HOME && path.isAbsolute(env.XDG_CONFIG_HOME) ? env.XDG_CONFIG_HOME : path.join(home, '.config');
  return path.join(config, 'systemd', 'user');
}

/** The kubeconfig the agent uses and writes into units: the flag, `$KUBECONFIG`, `~/.kube/config`. */
export function defaultKubeconfig(flag: string | undefined, env: NodeJS.ProcessEnv, home: string): string {
  if (flag) return path.resolve(flag);
  // A KUBECONFIG list names several files; the first is the one a unit can point at.
  const fromEnv = env.KUBECONFIG?.split(':').find((p) => p !== '');
  if (fromEnv) return path.resolve(fromEnv);
  return path.join(home, '.kube', 'config');
}

/**
 * The agent's own state (which unit files it wrote): `/var/lib/uyuni-cdk-agent` for the system
 * manager; for the user manager `$XDG_STATE_HOME/uyuni-cdk-agent`, falling back to
 * `~/.local/state/uyuni-cdk-agent`.
 */
export function defaultStateDir(session: boolean, env: NodeJS.ProcessEnv, home: string): string {
  if (!session) return '/var/lib/uyuni-cdk-agent';
  const state = env.XDG_STATE_HOME && path.isAbsolute(env.XDG_STATE_HOME) ? env.XDG_STATE_HOME : path.join(home, '.local', 'state');
  return path.join(state, 'uyuni-cdk-agent');
}
