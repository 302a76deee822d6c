/**
 * Which cluster a verb compared against or changed, as every header names it (kapp's `Target
 * cluster …`): the API server's address and the kubeconfig context it came from.
 */
import type { Cluster } from '../../kube/cluster';

export interface Target {
  readonly server: string;
  /** The kubeconfig context used (`--context`, or its current-context). */
  readonly context: string;
}

export function targetOf(cluster: Cluster): Target {
  return { server: cluster.server, context: cluster.kc.getCurrentContext() };
}

/** `cluster https://api.example:6443 (context prod)`. */
export function targetText(t: Target): string {
  return `cluster ${t.server}${t.context ? ` (context ${t.context})` : ''}`;
}
