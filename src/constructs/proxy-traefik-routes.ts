import { k8s } from 'cdk8s-plus-28';
import { Construct } from 'constructs';
import { IngressRouteTcp, IngressRouteTcpSpecRoutesServicesPort } from '../../imports/traefik.io';
import { commonLabels } from '../model/labels';
import type { TcpRoute } from './traefik-routes';

export interface ProxyTraefikRoutesProps {
  readonly namespace: string;
  /** The proxy's FQDN: the host of its plain-HTTP Ingress. */
  readonly fqdn: string;
  /** The ingress class (annotation kubernetes.io/ingress.class, ingressClassName). @default 'traefik' */
  readonly ingressClass?: string;
  /** Route ssh through Traefik (not when Service ssh is a NodePort). @default true */
  readonly sshRoute?: boolean;
  /** Route salt 4505/4506 through Traefik (not when Service salt is a NodePort). @default true */
  readonly saltRoutes?: boolean;
}

/** proxy-helm templates/traefik-routes.yaml @ 0806c3e6: the proxy's TCP routes, by entry point. */
export const PROXY_SSH_ROUTE: TcpRoute = { name: 'ssh-router', entryPoint: 'ssh', service: 'ssh', port: 8022 };
export const PROXY_SALT_ROUTES: readonly TcpRoute[] = [
  { name: 'salt-publish-router', entryPoint: 'salt-publish', service: 'salt', port: 4505 },
  { name: 'salt-request-router', entryPoint: 'salt-request', service: 'salt', port: 4506 },
];
/** proxy-helm templates/ingress.yaml @ 3bf8ace7: plain HTTP for the proxy's FQDN to Service web:80. */
export const PROXY_NOSSL_INGRESS = 'uyuni-proxy-ingress-nossl';

/**
 * The proxy's exposure through the cluster's Traefik, as proxy-helm renders it with
 * `ingress.type: traefik`: IngressRouteTCPs for ssh (8022) and salt (4505, 4506) on the entry
 * points of those names (unless the Service is a NodePort), and the plain-HTTP Ingress of the
 * proxy's FQDN on entry point web. On K3s, where Traefik holds 80 and 443, this replaces a web
 * LoadBalancer that would stay Pending. Each entry point must exist in Traefik's configuration.
 */
export class ProxyTraefikRoutes extends Construct {
  constructor(scope: Construct, id: string, props: ProxyTraefikRoutesProps) {
    super(scope, id);
    const className = props.ingressClass ?? 'traefik';
    const labels = commonLabels('uyuni-proxy', 'proxy');
    const routes = [...(props.sshRoute ?? true ? [PROXY_SSH_ROUTE] : []), ...(props.saltRoutes ?? true ? PROXY_SALT_ROUTES : [])];
    for (const route of routes) {
      new IngressRouteTcp(this, route.name, {
        metadata: { name: route.name, namespace: props.namespace, labels, annotations: { 'kubernetes.io/ingress.class': className } },
        spec: {
          entryPoints: [route.entryPoint],
          routes: [{
            match: 'HostSNI(`*`)',
            services: [{ name: route.service, port: IngressRouteTcpSpecRoutesServicesPort.fromNumber(route.port) }],
          }],
        },
      });
    }
    new k8s.KubeIngress(this, 'NoSsl', {
      metadata: {
        name: PROXY_NOSSL_INGRESS,
        namespace: props.namespace,
        labels,
        annotations: {
          'traefik.ingress.kubernetes.io/router.tls': 'false',
          'traefik.ingress.kubernetes.io/router.entrypoints': 'web',
        },
      },
      spec: {
        ingressClassName: className,
        rules: [{
          host: props.fqdn,
          http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'web', port: { number: 80 } } } }] },
        }],
      },
    });
  }
}
