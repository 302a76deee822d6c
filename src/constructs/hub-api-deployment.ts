import { k8s } from 'cdk8s-plus-28';
import { Construct } from 'constructs';
import type { UyuniConfig } from '../config/schema';
import { image, IMAGES, pullSecrets } from '../model/images';
import { containerPorts } from '../model/ports';
import { serverServicesOf } from './server-pod';
import { componentDeployment } from './component-deployment';

export interface HubApiDeploymentProps {
  readonly namespace: string;
  readonly config: UyuniConfig;
}

/** Deployment `uyuni-hub-api` (component hub-api): the Hub XML-RPC API in front of `web`. */
export class HubApiDeployment extends Construct {
  public static readonly NAME = 'uyuni-hub-api';
  public readonly deployment: k8s.KubeDeployment;

  constructor(scope: Construct, id: string, props: HubApiDeploymentProps) {
    super(scope, id);
    const { config } = props;
    this.deployment = componentDeployment(this, 'Resource', {
      name: HubApiDeployment.NAME,
      namespace: props.namespace,
      partOf: 'uyuni',
      component: 'hub-api',
      replicas: config.hubApi.replicas,
      pod: {
        imagePullSecrets: pullSecrets(config),
        containers: [{
          name: 'hub-api',
          image: image(config, IMAGES.hubApi),
          imagePullPolicy: config.images.pullPolicy,
          ports: containerPorts(serverServicesOf(config), 'hub-api'),
          env: [{ name: 'HUB_API_URL', value: 'http://web/rpc/api' }, { name: 'TZ', value: config.timezone }],
          securityContext: { allowPrivilegeEscalation: false },
        }],
      },
    });
  }
}
