/**
 * A pod as the API returns it, as far as `agent run` reads it: the renderer's PodLike plus the
 * identity (uid, resourceVersion), the deletion's grace period and the status.
 */
import type { PodLike } from '../systemd/pod';

export interface ApiPod extends PodLike {
  readonly metadata?: PodLike['metadata'] & {
    readonly uid?: string;
    readonly resourceVersion?: string;
    readonly deletionGracePeriodSeconds?: number | null;
  };
  readonly status?: Record<string, unknown>;
}

/** `namespace/name`, the key the agent tracks pods by. */
export function podKeyOf(pod: ApiPod): string {
  return `${pod.metadata?.namespace || 'default'}/${pod.metadata?.name ?? '?'}`;
}

/**
 * The status keys the agent reads: those it writes (src/agent/pod-status.ts `podStatus`), to
 * tell whether the pod already says them (`statusIsCurrent`) and to keep transition and start
 * times. Any other key (qosClass, nominatedNodeName, resize, …) is the API's and never read.
 */
const STATUS_KEYS = ['phase', 'reason', 'message', 'hostIP', 'hostIPs', 'podIP', 'podIPs', 'startTime', 'conditions', 'initContainerStatuses', 'containerStatuses'] as const;

/**
 * The pod as the agent keeps it (issue 36: its idle memory): what it reads and nothing more. The
 * metadata's identity, deletion and resourceVersion, not its managedFields (often the largest
 * part of a pod), labels, annotations or owners, which nothing in the agent reads; the whole
 * spec, which the policy checks (a field it does not know refuses the pod) and the units are
 * rendered from; the status keys it writes. Applied to every pod as it arrives (list pages and
 * watch events), so the answer's full object is garbage at once.
 */
export function keptPod(pod: ApiPod): ApiPod {
  const m = pod.metadata;
  const metadata = m === undefined || m === null || typeof m !== 'object' ? m : {
    name: m.name,
    namespace: m.namespace,
    uid: m.uid,
    resourceVersion: m.resourceVersion,
    ...(m.deletionTimestamp !== undefined ? { deletionTimestamp: m.deletionTimestamp } : {}),
    ...(m.deletionGracePeriodSeconds !== undefined ? { deletionGracePeriodSeconds: m.deletionGracePeriodSeconds } : {}),
  };
  const st = pod.status;
  let status: Record<string, unknown> | undefined = st;
  if (st !== null && typeof st === 'object') {
    status = {};
    for (const k of STATUS_KEYS) if (st[k] !== undefined) status[k] = st[k];
  }
  return { ...pod, metadata, status } as ApiPod;
}
