import { k8s } from 'cdk8s-plus-28';
import { Construct } from 'constructs';
import type { ImageRef } from '../model/images';
import type { ContainerPort } from '../model/ports';
import { CERT_MODE } from '../model/tls';
import { tftpDeployment } from './tftp-deployment';
import { PROXY_CONFIG, PROXY_FILES } from './proxy-config';

export interface ProxyTftpDeploymentProps {
  readonly namespace: string;
  /** The proxy-tftpd image. */
  readonly image: ImageRef;
  /** Where the wrapper fetches boot files over HTTP: the proxy's httpd. @default web.<namespace>.svc */
  readonly httpHost?: string;
  /** Run in the node's network (no tftp Service). @default false */
  readonly hostNetwork?: boolean;
  /** Container ports. @default 69/UDP */
  readonly ports?: readonly ContainerPort[];
}

/**
 * Deployment `uyuni-proxy-tftp` (component proxy-tftp), as proxy-helm templates/tftp.yaml
 * @ 90890532 ("Move TFTP server to its own pod"): container tftpd runs tftp_wrapper.py, which
 * serves the boot files it fetches from the proxy's httpd, with config.yaml and the CA at
 * /etc/uyuni/.
 */
export class ProxyTftpDeployment extends Construct {
  public static readonly NAME = 'uyuni-proxy-tftp';
  public readonly deployment: k8s.KubeDeployment;

  constructor(scope: Construct, id: string, props: ProxyTftpDeploymentProps) {
    super(scope, id);
    const httpHost = props.httpHost ?? `web.${props.namespace}.svc`;
    this.deployment = tftpDeployment(this, 'Resource', {
      name: ProxyTftpDeployment.NAME,
      namespace: props.namespace,
      partOf: 'uyuni-proxy',
      component: 'proxy-tftp',
      containerName: 'tftpd',
      image: props.image,
      args: ['--httpHost', httpHost],
      hostNetwork: props.hostNetwork,
      ports: props.ports,
      volumeMounts: [{ name: 'tftpd-volume', mountPath: '/etc/uyuni/', readOnly: true }],
      volumes: [{
        name: 'tftpd-volume',
        projected: {
          sources: [
            { configMap: { name: PROXY_CONFIG.configMap, items: [{ key: PROXY_FILES.config, path: PROXY_FILES.config }] } },
            { configMap: { name: PROXY_CONFIG.ca, items: [{ key: 'ca.crt', path: 'ca.crt', mode: CERT_MODE }] } },
          ],
        },
      }],
    });
  }
}
