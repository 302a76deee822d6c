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
