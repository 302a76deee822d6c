/**
 * A namespace being deleted (Terminating: `deletionTimestamp` set, phase Terminating) takes no
 * new objects (403 NamespaceTerminating) and goes once it is empty, whatever is applied to it.
 * `plan` says so, `run` refuses it before its first write, and the namespace step refuses it.
 */
import type { V1Namespace } from '@kubernetes/client-node';
import type { Cluster } from '../../kube/cluster';

/** Why a run cannot use this namespace now, or undefined when it is not terminating. */
export function terminatingMessage(ns: Pick<V1Namespace, 'metadata' | 'status'> | undefined): string | undefined {
  if (!ns || !(ns.metadata?.deletionTimestamp || ns.status?.phase === 'Terminating')) return undefined;
  const name = ns.metadata?.name ?? '(namespace)';
  const since = ns.metadata?.deletionTimestamp ? ` since ${new Date(ns.metadata.deletionTimestamp as unknown as string).toISOString()}` : '';
  return `namespace ${name} is being deleted (Terminating${since}): nothing can be created in it until it is gone. `
    + `Wait until it is gone (kubectl get namespace ${name}; uyuni-cdk destroy waits for it), or find what holds it `
    + `(its remaining objects' finalizers), then run again`;
}

/** The namespace as the cluster has it: terminating (the message), or not (undefined). */
export async function namespaceTerminating(cluster: Cluster, name: string): Promise<string | undefined> {
  return terminatingMessage(await cluster.get<V1Namespace>({ apiVersion: 'v1', kind: 'Namespace', name }));
}
