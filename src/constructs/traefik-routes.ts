import { Construct } from 'constructs';
import { IngressRouteTcp, IngressRouteTcpSpecRoutesServicesPort, Middleware } from '../../imports/traefik.io';

export interface TraefikRoutesProps {
  readonly namespace: string;
  /** The ingress class written as annotation kubernetes.io/ingress.class. @default 'traefik' */
  readonly ingressClass?: string;
  /** Route salt 4505/4506 through IngressRouteTCP (off when the salt Service is itself a NodePort/LoadBalancer). @default true */
  readonly saltRoutes?: boolean;
  /** Routes for the Java debug ports (tomcat 8003, search 8002, taskomatic 8001). @default false */
  readonly debugJava?: boolean;
  /** Labels of every object. @default none */
  readonly labels?: Record<string, string>;
}

/** Name of the Middleware that redirects plain HTTP to HTTPS. */
export const HTTPS_REDIRECT_MIDDLEWARE = 'uyuni-https-redirect';
/** Name of the Middleware that strips the exporter (and saline) prefixes before the backend sees the path. */
export const STRIP_PREFIXES_MIDDLEWARE = 'uyuni-strip-prefixes';

/** The prefixes the backends serve at their root: the exporters and JMX endpoints, and saline. */
export const STRIP_PREFIXES = [
  '/postgresql-exporter', '/node-exporter', '/tasko-exporter', '/tasko-jmx', '/tomcat-jmx', '/saline',
] as const;

/** A TCP route: a Traefik entry point forwarded as is to a Service port. */
export interface TcpRoute {
  readonly name: string;
  readonly entryPoint: string;
  readonly service: string;
  readonly port: number;
}

export const SALT_TCP_ROUTES: readonly TcpRoute[] = [
  { name: 'salt-publish-route', entryPoint: 'salt-publish', service: 'salt', port: 4505 },
  { name: 'salt-request-route', entryPoint: 'salt-request', service: 'salt', port: 4506 },
];

export const DEBUG_JAVA_TCP_ROUTES: readonly TcpRoute[] = [
  { name: 'tomcat-debug-route', entryPoint: 'tomcat-debug', service: 'tomcat', port: 8003 },
  { name: 'search-debug-route', entryPoint: 'search-debug', service: 'search', port: 8002 },
  { name: 'tasko-debug-route', entryPoint: 'tasko-debug', service: 'taskomatic', port: 8001 },
];

/**
 * The Traefik objects the Uyuni Ingresses rely on: the HTTPS-redirect and strip-prefix
 * Middlewares, and IngressRouteTCPs for the non-HTTP ports (salt, optionally the Java debuggers),
 * each of which needs a matching entry point in Traefik's static configuration.
 */
export class TraefikRoutes extends Construct {
  /** How an Ingress annotation (router.middlewares) refers to a Middleware of this provider. */
  public static middlewareRef(namespace: string, name: string): string {
    return `${namespace}-${name}@kubernetescrd`;
  }

  public readonly httpsRedirect: Middleware;
  public readonly stripPrefixes: Middleware;

  constructor(scope: Construct, id: string, props: TraefikRoutesProps) {
    super(scope, id);
    const metadata = (name: string) => ({
      name,
      namespace: props.namespace,
      labels: props.labels,
      annotations: { 'kubernetes.io/ingress.class': props.ingressClass ?? 'traefik' },
    });

    this.httpsRedirect = new Middleware(this, 'HttpsRedirect', {
      metadata: metadata(HTTPS_REDIRECT_MIDDLEWARE),
      spec: { redirectScheme: { scheme: 'https', permanent: true } },
    });
    this.stripPrefixes = new Middleware(this, 'StripPrefixes', {
      metadata: metadata(STRIP_PREFIXES_MIDDLEWARE),
      spec: { stripPrefix: { prefixes: [...STRIP_PREFIXES] } },
    });

    const routes = [...(props.saltRoutes ?? true ? SALT_TCP_ROUTES : []), ...(props.debugJava ? DEBUG_JAVA_TCP_ROUTES : [])];
    for (const route of routes) {
      new IngressRouteTcp(this, route.name, {
        metadata: metadata(route.name),
        spec: {
          entryPoints: [route.entryPoint],
          // Not TLS-terminated, so there is no SNI to match on: every connection of the entry point.
          routes: [{
            match: 'HostSNI(`*`)',
            services: [{ name: route.service, port: IngressRouteTcpSpecRoutesServicesPort.fromNumber(route.port) }],
          }],
        },
      });
    }
  }
}
