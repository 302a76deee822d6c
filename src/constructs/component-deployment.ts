import { JsonPatch } from 'cdk8s';
import { k8s } from 'cdk8s-plus-28';
import { Construct } from 'constructs';
import { commonLabels, Component, PartOf, selectorLabels } from '../model/labels';

export interface ComponentDeploymentProps {
  readonly name: string;
  readonly namespace: string;
  readonly partOf: PartOf;
  readonly component: Component;
  readonly replicas: number;
  /** Recreate for pods on ReadWriteOnce volumes, which two pods must never share. @default the API's RollingUpdate */
  readonly recreate?: boolean;
  readonly pod: k8s.PodSpec;
  /** Annotations of the pod template. @default none */
  readonly podAnnotations?: Readonly<Record<string, string>>;
  /**
   * Pod volumes and mounts of the first container, as given (plain Kubernetes JSON the 1.28
   * types would reshape or drop: a user's `server.extraVolumes`). @default none
   */
  readonly rawVolumes?: readonly object[];
  readonly rawVolumeMounts?: readonly object[];
}

/**
 * A KubeDeployment whose JSON gets additions after the typed conversion: cdk8s's L1 toJson keeps
 * only the fields (and spellings) of its own types, so raw JSON has to join after it.
 */
class RawDeployment extends k8s.KubeDeployment {
  constructor(scope: Construct, id: string, props: k8s.KubeDeploymentProps, private readonly additions: readonly JsonPatch[]) {
    super(scope, id, props);
  }

  public toJson(): unknown {
    const json = super.toJson();
    return this.additions.length > 0 ? JsonPatch.apply(json, ...this.additions) : json;
  }
}

/**
 * The Deployment shape every component shares: our labels on the Deployment and its pods, and a
 * selector on part-of + component only (a selector is immutable, so it holds nothing that changes).
 */
export function componentDeployment(scope: Construct, id: string, props: ComponentDeploymentProps): k8s.KubeDeployment {
  const additions = [
    ...appendTo('/spec/template/spec/volumes', (props.pod.volumes?.length ?? 0) > 0, props.rawVolumes ?? []),
    ...appendTo('/spec/template/spec/containers/0/volumeMounts', (props.pod.containers[0]?.volumeMounts?.length ?? 0) > 0, props.rawVolumeMounts ?? []),
  ];
  return new RawDeployment(scope, id, {
    metadata: { name: props.name, namespace: props.namespace, labels: commonLabels(props.partOf, props.component) },
    spec: {
      replicas: props.replicas,
      ...(props.recreate ? { strategy: { type: 'Recreate' } } : {}),
      selector: { matchLabels: selectorLabels(props.partOf, props.component) },
      template: {
        metadata: {
          labels: commonLabels(props.partOf, props.component),
          ...(props.podAnnotations && Object.keys(props.podAnnotations).length > 0 ? { annotations: { ...props.podAnnotations } } : {}),
        },
        spec: props.pod,
      },
    },
  }, additions);
}

/** Patches that append items to the array at `path` (creating it when the typed JSON has none). */
function appendTo(path: string, exists: boolean, items: readonly object[]): JsonPatch[] {
  if (items.length === 0) return [];
  return exists ? items.map((item) => JsonPatch.add(`${path}/-`, item)) : [JsonPatch.add(path, [...items])];
}
