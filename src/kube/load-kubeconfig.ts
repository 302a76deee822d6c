/**
 * The runtime's kubeconfig: loaded as kubectl merges files (src/kube/kubeconfig.ts); an unusable
 * one is bad input (exit 2).
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { KubeconfigError } from './errors';
import { kubeconfigFiles as files, KubeconfigOptions, loadKubeConfig as load } from './kubeconfig';
import { BadInput } from './api-errors';

export type { KubeconfigOptions };

function asBadInput<T>(fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    if (e instanceof KubeconfigError) throw new BadInput(e.message);
    throw e;
  }
}

/** Which files kubectl would read: --kubeconfig, else every existing file of $KUBECONFIG, else ~/.kube/config. */
export function kubeconfigFiles(opts: KubeconfigOptions, env = process.env, home?: string): string[] {
  return asBadInput(() => files(opts, env, home));
}

/** The merged kubeconfig with its current context checked, or BadInput saying what to fix. */
export function loadKubeConfig(opts: KubeconfigOptions, env = process.env, home?: string): KubeConfig {
  return asBadInput(() => load(opts, env, home));
}
