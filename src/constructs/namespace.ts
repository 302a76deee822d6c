import { k8s } from 'cdk8s-plus-28';
import { Construct } from 'constructs';
import { commonLabels, Component, PartOf } from '../model/labels';

export interface UyuniNamespaceProps {
  readonly name: string;
  /** @default 'uyuni' */
  readonly partOf?: PartOf;
  /** @default 'server' */
  readonly component?: Component;
}

/** The namespace everything else lives in (cluster-scoped: no namespace of its own). */
export class UyuniNamespace extends Construct {
  public readonly name: string;

  constructor(scope: Construct, id: string, props: UyuniNamespaceProps) {
    super(scope, id);
    this.name = props.name;
    const partOf = props.partOf ?? 'uyuni';
    new k8s.KubeNamespace(this, 'Resource', {
      metadata: { name: props.name, labels: commonLabels(partOf, props.component ?? 'server') },
    });
  }
}
