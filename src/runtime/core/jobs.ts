/**
 * A step Job's pods: how to find them (the `job-name` label the Job controller sets) and which
 * of those are really this Job's (its uid, as label or owner), not an earlier Job's of the same name.
 */
import type { V1Job, V1Pod } from '@kubernetes/client-node';
import type { ObjectRef } from '../../plan/types';
import type { Cluster } from '../../kube/cluster';
import type { Manifest } from './manifests';
import type { WatchQuery } from '../../kube/list-watch';

/** Labels the Job controller puts on its pods. */
const JOB_NAME_LABEL = 'job-name';
const CONTROLLER_UID_LABELS = ['controller-uid', 'batch.kubernetes.io/controller-uid'];

/** The step's Jobs, in file order. */
export function jobsOf(objects: readonly Manifest[]): Manifest[] {
  return objects.filter((o) => o.kind === 'Job');
}

/** The pods that may belong to a Job: by the `job-name` label. */
export function jobPodQuery(job: Pick<ObjectRef, 'name' | 'namespace'>): WatchQuery {
  return { apiVersion: 'v1', kind: 'Pod', namespace: job.namespace, labelSelector: `${JOB_NAME_LABEL}=${job.name}` };
}

/** Whether a pod is the Job's (with the uid unknown: any pod of its name). */
export function isPodOfJob(pod: V1Pod, uid: string | undefined): boolean {
  if (!uid) return true;
  const labels = pod.metadata?.labels ?? {};
  return CONTROLLER_UID_LABELS.some((l) => labels[l] === uid) || (pod.metadata?.ownerReferences ?? []).some((r) => r.uid === uid);
}

/** The Job's pods, read once (for resumed steps whose waiter never ran, and for facts). */
export async function podsOfJob(cluster: Cluster, job: V1Job): Promise<V1Pod[]> {
  const { items } = await cluster.list<V1Pod>(jobPodQuery({ name: job.metadata?.name ?? '', namespace: job.metadata?.namespace }));
  return items.filter((p) => isPodOfJob(p, job.metadata?.uid));
}
