/**
 * The part of a Kubernetes Pod the unit renderer reads, as plain JSON (what the API returns and
 * what a pod manifest holds). Structural, so neither the synth side nor the agent needs a
 * Kubernetes client library to use the renderer.
 */

export interface EnvVarLike {
  readonly name: string;
  readonly value?: string;
  readonly valueFrom?: unknown;
}

export interface ContainerLike {
  readonly name: string;
  readonly image?: string;
  readonly command?: readonly string[];
  readonly args?: readonly string[];
  readonly env?: readonly EnvVarLike[];
  readonly securityContext?: { readonly windowsOptions?: { readonly runAsUserName?: string } };
}

export interface PodLike {
  readonly metadata?: {
    readonly name?: string;
    readonly namespace?: string;
    readonly deletionTimestamp?: string | Date | null;
  };
  readonly spec?: {
    readonly nodeName?: string;
    readonly restartPolicy?: string;
    readonly terminationGracePeriodSeconds?: number | null;
    readonly securityContext?: { readonly windowsOptions?: { readonly runAsUserName?: string } };
    readonly containers?: readonly ContainerLike[];
    readonly initContainers?: readonly ContainerLike[];
  };
}

/** `namespace/name` of a pod, for messages and collision reports. */
export function podKey(pod: PodLike): string {
  return `${pod.metadata?.namespace || 'default'}/${pod.metadata?.name ?? '?'}`;
}

/** A pod is terminating once the API has set its deletion timestamp. */
export function podIsTerminating(pod: PodLike): boolean {
  return pod.metadata?.deletionTimestamp !== undefined && pod.metadata?.deletionTimestamp !== null;
}
