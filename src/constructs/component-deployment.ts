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
}

/**
 * The Deployment shape every component shares: our labels on the Deployment and its pods, and a
 * selector on part-of + component only (a selector is immutable, so it holds nothing that changes).
 */
export function componentDeployment(scope: Construct, id: string, props: ComponentDeploymentProps): k8s.KubeDeployment {
  return new k8s.KubeDeployment(scope, id, {
    metadata: { name: props.name, namespace: props.namespace, labels: commonLabels(props.partOf, props.component) },
    spec: {
      replicas: props.replicas,
      ...(props.recreate ? { strategy: { type: 'Recreate' } } : {}),
      selector: { matchLabels: selectorLabels(props.partOf, props.component) },
      template: {
        metadata: { labels: commonLabels(props.partOf, props.component) },
        spec: props.pod,
      },
    },
  });
}
