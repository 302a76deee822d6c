import { k8s } from 'cdk8s-plus-28';
import { Construct } from 'constructs';
import type { ImageRef } from '../model/images';
import type { ContainerPort } from '../model/ports';
import { componentDeployment } from './component-deployment';

export interface HubApiDeploymentProps {
  readonly namespace: string;
  /** The server-hub-xmlrpc-api image. */
  readonly image: ImageRef;
  readonly replicas: number;
  readonly timezone: string;
  /** The server's XML-RPC API it fronts. @default http://web/rpc/api */
  readonly apiUrl?: string;
  /** Container ports. @default none */
  readonly ports?: readonly ContainerPort[];
}

/** Deployment `uyuni-hub-xmlrpc` (component hub-xmlrpc): the Hub XML-RPC API in front of `web`. */
export class HubApiDeployment extends Construct {
  public static readonly NAME = 'uyuni-hub-xmlrpc';
  public readonly deployment: k8s.KubeDeployment;

  constructor(scope: Construct, id: string, props: HubApiDeploymentProps) {
    super(scope, id);
    this.deployment = componentDeployment(this, 'Resource', {
      name: HubApiDeployment.NAME,
      namespace: props.namespace,
      partOf: 'uyuni',
      component: 'hub-xmlrpc',
      replicas: props.replicas,
      pod: {
        imagePullSecrets: props.image.pullSecrets ? [...props.image.pullSecrets] : undefined,
        containers: [{
          name: 'hub-xmlrpc',
          image: props.image.image,
          imagePullPolicy: props.image.pullPolicy,
          ports: props.ports?.map((p) => ({ ...p })),
          env: [{ name: 'HUB_API_URL', value: props.apiUrl ?? 'http://web/rpc/api' }, { name: 'TZ', value: props.timezone }],
          securityContext: { allowPrivilegeEscalation: false },
        }],
      },
    });
  }
}
