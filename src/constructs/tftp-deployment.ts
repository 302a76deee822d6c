import { k8s } from 'cdk8s-plus-28';
import { Construct } from 'constructs';
import type { ImageRef } from '../model/images';
import type { ContainerPort } from '../model/ports';
import { componentDeployment } from './component-deployment';

export interface TftpDeploymentProps {
  readonly namespace: string;
  /** The shared-tftpd image. */
  readonly image: ImageRef;
  /** The server's public name (--proxyFqdn and --serverFqdn). */
  readonly fqdn: string;
  /** Where the wrapper fetches boot files over HTTP. @default web.<namespace>.svc */
  readonly httpHost?: string;
  /** Run in the node's network (no LoadBalancer Service). @default false */
  readonly hostNetwork?: boolean;
  /** Container ports. @default 69/UDP */
  readonly ports?: readonly ContainerPort[];
}

/**
 * Deployment `tftp` (component tftp): TFTP in its own pod since server-helm 5.2 ("Move TFTP
 * server to its own pod"); it serves the server's boot files, which it reads over HTTP.
 */
export class TftpDeployment extends Construct {
  public static readonly NAME = 'tftp';
  public readonly deployment: k8s.KubeDeployment;

  constructor(scope: Construct, id: string, props: TftpDeploymentProps) {
    super(scope, id);
    const httpHost = props.httpHost ?? `web.${props.namespace}.svc`;
    this.deployment = componentDeployment(this, 'Resource', {
      name: TftpDeployment.NAME,
      namespace: props.namespace,
      partOf: 'uyuni',
      component: 'tftp',
      replicas: 1,
      // On the node's network the new pod cannot bind 69/UDP while the old one holds it.
      recreate: props.hostNetwork ?? false,
      pod: {
        imagePullSecrets: props.image.pullSecrets ? [...props.image.pullSecrets] : undefined,
        ...(props.hostNetwork ? { hostNetwork: true, dnsPolicy: 'ClusterFirstWithHostNet' } : {}),
        containers: [{
          name: 'tftp',
          image: props.image.image,
          imagePullPolicy: props.image.pullPolicy,
          command: ['/usr/bin/tftp_wrapper.py', '--httpHost', httpHost, '--proxyFqdn', props.fqdn, '--serverFqdn', props.fqdn],
          ports: (props.ports ?? [{ containerPort: 69, protocol: 'UDP' }]).map((p) => ({ ...p })),
        }],
      },
    });
  }
}
