import { k8s } from 'cdk8s-plus-28';
import { Construct } from 'constructs';
import type { ExposureConfig } from '../config/schema';
import { commonLabels, Component, PartOf, selectorLabels } from '../model/labels';
import type { ServiceSpec } from '../model/ports';

export interface ServicesPerPortProps {
  readonly namespace: string;
  /** The logical services, from a port table (src/model/ports.ts). */
  readonly services: readonly ServiceSpec[];
  /** Exposure by Service name. @default ClusterIP for every Service */
  readonly exposure?: Readonly<Record<string, ExposureConfig>>;
  /** @default 'uyuni' */
  readonly partOf?: PartOf;
}

/**
 * One Service per logical service of a port table (#450's split), UDP where the port is UDP,
 * each of the configured type: ClusterIP, LoadBalancer or NodePort (with fixed node ports
 * when configured). Exposure never writes files on cluster nodes (upstream did).
 */
export class ServicesPerPort extends Construct {
  public readonly services: readonly k8s.KubeService[];

  constructor(scope: Construct, id: string, props: ServicesPerPortProps) {
    super(scope, id);
    const partOf = props.partOf ?? 'uyuni';
    this.services = props.services.map((svc) => {
      const exposure = props.exposure?.[svc.name];
      const type = exposure?.type ?? 'ClusterIP';
      return new k8s.KubeService(this, svc.name, {
        metadata: { name: svc.name, namespace: props.namespace, labels: commonLabels(partOf, svc.component as Component) },
        spec: {
          type,
          selector: selectorLabels(partOf, svc.component as Component),
          ports: svc.ports.map((p) => ({
            name: p.name,
            port: p.port,
            targetPort: k8s.IntOrString.fromNumber(p.targetPort ?? p.port),
            protocol: p.protocol,
            nodePort: type === 'NodePort' ? exposure?.nodePorts?.[p.name] : undefined,
          })),
        },
      });
    });
  }
}
