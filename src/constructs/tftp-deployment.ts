import { k8s } from 'cdk8s-plus-28';
import { Construct } from 'constructs';
import type { ImageRef } from '../model/images';
import type { ContainerPort } from '../model/ports';
import type { Component, PartOf } from '../model/labels';
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
/** What a TFTP Deployment of the server or the proxy is made of (both run tftp_wrapper.py). */
export interface TftpPodProps {
  readonly name: string;
  readonly namespace: string;
  readonly partOf: PartOf;
  readonly component: Component;
  readonly containerName: string;
  readonly image: ImageRef;
  /** tftp_wrapper.py's arguments. */
  readonly args: readonly string[];
  readonly hostNetwork?: boolean;
  readonly ports?: readonly ContainerPort[];
  readonly volumes?: readonly k8s.Volume[];
  readonly volumeMounts?: readonly k8s.VolumeMount[];
}

/** One Deployment running `/usr/bin/tftp_wrapper.py` on 69/UDP, optionally on the node's network. */
export function tftpDeployment(scope: Construct, id: string, props: TftpPodProps): k8s.KubeDeployment {
  return componentDeployment(scope, id, {
    name: props.name,
    namespace: props.namespace,
    partOf: props.partOf,
    component: props.component,
    replicas: 1,
    // On the node's network the new pod cannot bind 69/UDP while the old one holds it.
    recreate: props.hostNetwork ?? false,
    pod: {
      imagePullSecrets: props.image.pullSecrets ? [...props.image.pullSecrets] : undefined,
      ...(props.hostNetwork ? { hostNetwork: true, dnsPolicy: 'ClusterFirstWithHostNet' } : {}),
      containers: [{
        name: props.containerName,
        image: props.image.image,
        imagePullPolicy: props.image.pullPolicy,
        command: ['/usr/bin/tftp_wrapper.py', ...props.args],
        ...(props.volumeMounts ? { volumeMounts: [...props.volumeMounts] } : {}),
        ports: (props.ports ?? [{ containerPort: 69, protocol: 'UDP' }]).map((p) => ({ ...p })),
      }],
      ...(props.volumes ? { volumes: [...props.volumes] } : {}),
    },
  });
}

export class TftpDeployment extends Construct {
  public static readonly NAME = 'tftp';
  public readonly deployment: k8s.KubeDeployment;

  constructor(scope: Construct, id: string, props: TftpDeploymentProps) {
    super(scope, id);
    const httpHost = props.httpHost ?? `web.${props.namespace}.svc`;
    this.deployment = tftpDeployment(this, 'Resource', {
      name: TftpDeployment.NAME,
      namespace: props.namespace,
      partOf: 'uyuni',
      component: 'tftp',
      containerName: 'tftp',
      image: props.image,
      args: ['--httpHost', httpHost, '--proxyFqdn', props.fqdn, '--serverFqdn', props.fqdn],
      hostNetwork: props.hostNetwork,
      ports: props.ports,
    });
  }
}
