import { k8s } from 'cdk8s-plus-28';
import { Construct } from 'constructs';
import { commonLabels } from '../model/labels';

export interface UyuniIngressesProps {
  readonly namespace: string;
  readonly fqdn: string;
  /** @default the cluster's default ingress class */
  readonly className?: string;
  /** The Service and port behind both Ingresses. @default web:80 */
  readonly backend?: { readonly service: string; readonly port: number };
  /** The TLS Secret of the HTTPS Ingress. @default 'uyuni-cert' */
  readonly tlsSecret?: string;
}

/** Paths that clients reach over plain HTTP (repositories, boot images, the API, ...). */
export const NOSSL_PATHS = [
  '/pub', '/rhn/([^/])+/DownloadFile', '/(rhn/)?rpc/api', '/rhn/errors', '/rhn/ty/TinyUrl', '/rhn/websocket',
  '/rhn/metrics', '/cobbler_api', '/cblr', '/httpboot', '/images', '/cobbler', '/os-images', '/tftp', '/docs',
] as const;

/**
 * Ingresses `uyuni-ingress-ssl` (HTTPS for the FQDN) and `uyuni-ingress-nossl` (the plain-HTTP
 * paths). No redirect middleware pinned to a namespace (upstream hard-coded `default`).
 */
export class UyuniIngresses extends Construct {
  constructor(scope: Construct, id: string, props: UyuniIngressesProps) {
    super(scope, id);
    const backend: k8s.IngressBackend = {
      service: { name: props.backend?.service ?? 'web', port: { number: props.backend?.port ?? 80 } },
    };
    const labels = commonLabels('uyuni', 'network');
    new k8s.KubeIngress(this, 'Ssl', {
      metadata: { name: 'uyuni-ingress-ssl', namespace: props.namespace, labels },
      spec: {
        ingressClassName: props.className,
        tls: [{ hosts: [props.fqdn], secretName: props.tlsSecret ?? 'uyuni-cert' }],
        rules: [{ host: props.fqdn, http: { paths: [{ path: '/', pathType: 'Prefix', backend }] } }],
      },
    });
    new k8s.KubeIngress(this, 'NoSsl', {
      metadata: {
        name: 'uyuni-ingress-nossl',
        namespace: props.namespace,
        labels,
        // Some paths are regular expressions; ingress-nginx matches them as such with this annotation.
        annotations: { 'nginx.ingress.kubernetes.io/use-regex': 'true', 'nginx.ingress.kubernetes.io/ssl-redirect': 'false' },
      },
      spec: {
        ingressClassName: props.className,
        rules: [{ host: props.fqdn, http: { paths: NOSSL_PATHS.map((path) => ({ path, pathType: 'Prefix', backend })) } }],
      },
    });
  }
}
