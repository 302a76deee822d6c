import { k8s } from 'cdk8s-plus-28';
import { Construct } from 'constructs';
import { commonLabels, Component, PartOf, selectorLabels } from '../model/labels';
import type { ServiceSpec } from '../model/ports';

/** How one Service is exposed. */
export interface ServiceExposure {
  readonly type: 'ClusterIP' | 'LoadBalancer' | 'NodePort';
  /** NodePort only: node port per port name. @default the port table's node ports */
  readonly nodePorts?: Readonly<Record<string, number>>;
  /** @default none */
  readonly annotations?: Readonly<Record<string, string>>;
  /** LoadBalancer only. @default assigned by the load balancer */
  readonly loadBalancerIP?: string;
}

export interface ServicesPerPortProps {
  readonly namespace: string;
  /** The logical services, from a port table (src/model/ports.ts). */
  readonly services: readonly ServiceSpec[];
  /** Exposure by Service name. @default ClusterIP for every Service */
  readonly exposure?: Readonly<Record<string, ServiceExposure>>;
  /** @default 'uyuni' */
  readonly partOf?: PartOf;
}

/**
 * One Service per logical service of a port table, UDP where the port is UDP, each of the
 * configured type. A LoadBalancer Service keeps client addresses (externalTrafficPolicy Local:
 * salt and the report database see who connects); several can share one address with the load
 * balancer's annotation (MetalLB's allow-shared-ip) and loadBalancerIP.
 */
export class ServicesPerPort extends Construct {
  public readonly services: readonly k8s.KubeService[];

  constructor(scope: Construct, id: string, props: ServicesPerPortProps) {
    super(scope, id);
    const partOf = props.partOf ?? 'uyuni';
    this.services = props.services.map((svc) => {
      const exposure = props.exposure?.[svc.name];
      const type = svc.fixed?.type ?? exposure?.type ?? 'ClusterIP';
      return new k8s.KubeService(this, svc.name, {
        metadata: {
          name: svc.name,
          namespace: props.namespace,
          labels: commonLabels(partOf, svc.component as Component),
          ...(exposure?.annotations ? { annotations: { ...exposure.annotations } } : {}),
        },
        spec: {
          type,
          selector: selectorLabels(partOf, svc.component as Component),
          ...(svc.fixed ? { sessionAffinity: svc.fixed.sessionAffinity } : {}),
          ...(type === 'LoadBalancer' ? { externalTrafficPolicy: svc.fixed?.externalTrafficPolicy ?? 'Local' } : {}),
          ...(type === 'LoadBalancer' && exposure?.loadBalancerIP ? { loadBalancerIp: exposure.loadBalancerIP } : {}),
          ports: svc.ports.map((p) => ({
            name: p.name,
            port: p.port,
            targetPort: k8s.IntOrString.fromNumber(p.targetPort ?? p.port),
            protocol: p.protocol,
            nodePort: type === 'NodePort' ? (exposure?.nodePorts?.[p.name] ?? p.nodePort) : undefined,
          })),
        },
      });
    });
  }
}
