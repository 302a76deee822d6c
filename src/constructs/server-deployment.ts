import { k8s } from 'cdk8s-plus-28';
import { Construct } from 'constructs';
import type { UyuniConfig } from '../config/schema';
import { ROOT_CONTAINER, ROOT_POD, serverPodParts } from './server-pod';
import { componentDeployment } from './component-deployment';

export interface ServerDeploymentProps {
  readonly namespace: string;
  readonly config: UyuniConfig;
  /** @default 1 (the server cannot run twice on the same volumes) */
  readonly replicas?: number;
}

const HEALTH: k8s.HttpGetAction = { path: '/rhn/manager/api/api/getVersion', port: k8s.IntOrString.fromNumber(80) };

/**
 * Deployment `uyuni` (component server): one replica, Recreate (two servers must never share
 * the volumes), `init-volumes` first, probes on the API, and root made explicit.
 */
export class ServerDeployment extends Construct {
  public static readonly NAME = 'uyuni';
  public readonly deployment: k8s.KubeDeployment;

  constructor(scope: Construct, id: string, props: ServerDeploymentProps) {
    super(scope, id);
    const parts = serverPodParts(props.config);
    this.deployment = componentDeployment(this, 'Resource', {
      name: ServerDeployment.NAME,
      namespace: props.namespace,
      partOf: 'uyuni',
      component: 'server',
      replicas: props.replicas ?? 1,
      recreate: true,
      pod: {
        securityContext: ROOT_POD,
        imagePullSecrets: parts.imagePullSecrets,
        initContainers: [parts.initVolumes],
        containers: [{
          name: 'uyuni',
          image: parts.image,
          imagePullPolicy: props.config.images.pullPolicy,
          env: parts.env,
          ports: parts.ports,
          volumeMounts: parts.mounts,
          securityContext: ROOT_CONTAINER,
          readinessProbe: { httpGet: HEALTH, periodSeconds: 30, timeoutSeconds: 20, failureThreshold: 5 },
          livenessProbe: { httpGet: HEALTH, initialDelaySeconds: 60, periodSeconds: 60, timeoutSeconds: 20, failureThreshold: 5 },
          lifecycle: {
            preStop: { exec: { command: ['sh', '-c', 'spacewalk-service stop && systemctl stop postgresql'] } },
          },
        }],
        volumes: parts.volumes,
      },
    });
  }
}
