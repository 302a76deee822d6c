/**
 * Deleting the object of a terminating pod once none of its units runs: grace period 0 and a uid
 * precondition, as the kubelet does, so `kubectl delete pod` returns.
 */
import { ApiClient, ApiError } from './api';
import { ApiPod, podKeyOf } from './api-pod';
import type { Logger } from './log';

/** `api/v1/namespaces/<ns>/pods/<name>` */
export const podPath = (pod: ApiPod): string => `api/v1/namespaces/${encodeURIComponent(pod.metadata?.namespace || 'default')}/pods/${encodeURIComponent(pod.metadata?.name ?? '')}`;

/** Deletes the pod's object (this uid only). Resolves true when it is gone, false when it must be retried. */
export async function deletePodObject(api: ApiClient, pod: ApiPod, log: Logger): Promise<boolean> {
  const key = podKeyOf(pod);
  try {
    await api.request('DELETE', podPath(pod), {
      body: { apiVersion: 'v1', kind: 'DeleteOptions', gracePeriodSeconds: 0, ...(pod.metadata?.uid ? { preconditions: { uid: pod.metadata.uid } } : {}) },
    });
    log.log('INFO', `The pod [${key}] was deleted with grace period 0: none of its units runs any more.`, { pod: key, action: 'delete' });
    return true;
  } catch (e) {
    // Gone already, or a new pod of that name (the precondition): nothing left to delete.
    if (e instanceof ApiError && (e.status === 404 || e.status === 409)) return true;
    log.log('WARN', `The pod [${key}] could not be deleted: ${(e as Error).message}; retried.`, { pod: key, action: 'delete' });
    return false;
  }
}
