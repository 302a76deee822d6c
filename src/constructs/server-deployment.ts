import { k8s } from 'cdk8s-plus-28';
import { Construct } from 'constructs';
import { STOP_GRACE_SECONDS } from '../model/db';
import { componentDeployment } from './component-deployment';
import { SERVER_CONTAINER, serverContainer, serverPodParts, ServerPodProps } from './server-pod';

export interface ServerDeploymentProps extends ServerPodProps {
  readonly namespace: string;
  /** @default 1 (the server cannot run twice on the same volumes) */
  readonly replicas?: number;
}

/**
 * Deployment `uyuni` (component server) as the server-helm chart 2026.08 renders it: one
 * replica, Recreate (two servers must never share the volumes), no command (the image's
 * entrypoint sets the server up at its first start, then runs systemd), init-volumes and
 * db-waiter first, and a startup probe that allows the first setup 10 hours.
 */
export class ServerDeployment extends Construct {
  public static readonly NAME = 'uyuni';
  public static readonly CONTAINER = SERVER_CONTAINER;
  public readonly deployment: k8s.KubeDeployment;

  constructor(scope: Construct, id: string, props: ServerDeploymentProps) {
    super(scope, id);
    const parts = serverPodParts(props);
    this.deployment = componentDeployment(this, 'Resource', {
      name: ServerDeployment.NAME,
      namespace: props.namespace,
      partOf: 'uyuni',
      component: 'server',
      replicas: props.replicas ?? 1,
      recreate: true,
      podAnnotations: parts.podAnnotations,
      // Appended after the typed conversion, so they are written exactly as the user gave them.
      rawVolumes: props.extraVolumes,
      rawVolumeMounts: props.extraVolumeMounts,
      pod: {
        // Upstream's TimeoutStopSec=180 (uyuni-tools serviceTemplate.go): preStop
        // spacewalk-service stop has the time to stop the services.
        terminationGracePeriodSeconds: STOP_GRACE_SECONDS,
        imagePullSecrets: parts.imagePullSecrets,
        initContainers: parts.initContainers,
        containers: [serverContainer(props)],
        volumes: parts.volumes,
      },
    });
  }
}
