import { k8s } from 'cdk8s-plus-28';
import { Construct } from 'constructs';
import { TLS_NAMES } from '../model/tls';
import { HTTPS_REDIRECT_MIDDLEWARE, STRIP_PREFIXES_MIDDLEWARE, TraefikRoutes } from './traefik-routes';

export type IngressFlavour = 'traefik' | 'nginx';

export interface UyuniIngressesProps {
  readonly namespace: string;
  readonly fqdn: string;
  /** Which controller the annotations are for. */
  readonly flavour: IngressFlavour;
  /** spec.ingressClassName. @default the flavour's name */
  readonly className?: string;
  /** The TLS Secret of the HTTPS Ingresses. @default 'uyuni-cert' */
  readonly tlsSecret?: string;
  /** The Service and port of the web UI. @default web:80 */
  readonly web?: { readonly service: string; readonly port: number };
  /** Exporter paths and Ingress exporters-ingress-ssl (monitoring on). @default true */
  readonly monitoring?: boolean;
  /** The hub XML-RPC API at /hub/rpc/api → hub-xmlrpc:2830. @default false */
  readonly hubApi?: boolean;
  /** Extra annotations per Ingress. @default none */
  readonly annotations?: {
    readonly ssl?: Record<string, string>;
    readonly sslRedirect?: Record<string, string>;
    readonly nossl?: Record<string, string>;
    readonly exporters?: Record<string, string>;
    readonly hub?: Record<string, string>;
  };
  /** Labels of every Ingress. @default none */
  readonly labels?: Record<string, string>;
}

/** A path routed to a Service port other than the web UI's. */
export interface BackendPath {
  readonly path: string;
  readonly service: string;
  readonly port: number;
}

/**
 * Paths that clients reach over plain HTTP (repositories, boot images, the API, ...), all Prefix:
 * ingress-nginx's strict path validation rejects regular expressions in Prefix paths. Not
 * `/cobbler_api`, which the 2026.8 chart still routed: cobbler's unauthenticated XML-RPC API is
 * for the server itself (uyuni#12486, CVE-2026-71400; the image answers it from localhost only,
 * 10-cobbler_api_localhost.sh @ a4e5bb57, and the chart dropped it; docs/upstream.md).
 */
export const NOSSL_PATHS = [
  '/pub', '/rhn/kickstart/DownloadFile', '/rhn/common/DownloadFile', '/rhn/rpc/api', '/rpc/api', '/rhn/errors',
  '/rhn/ty/TinyUrl', '/rhn/websocket', '/rhn/metrics', '/cblr', '/httpboot', '/images', '/cobbler',
  '/os-images', '/tftp', '/docs',
] as const;

/** The monitoring endpoints; Traefik strips the prefix, since each backend serves at its root. */
export const EXPORTER_PATHS: readonly BackendPath[] = [
  { path: '/postgresql-exporter', service: 'tomcat-internal', port: 9187 },
  { path: '/node-exporter', service: 'tomcat-internal', port: 9100 },
  { path: '/tasko-exporter', service: 'taskomatic-internal', port: 9800 },
  { path: '/tasko-jmx', service: 'taskomatic-internal', port: 5557 },
  { path: '/tomcat-jmx', service: 'tomcat-internal', port: 5556 },
];

export const HUB_API_PATH: BackendPath = { path: '/hub/rpc/api', service: 'hub-xmlrpc', port: 2830 };

const TRAEFIK = 'traefik.ingress.kubernetes.io/';

/**
 * One Ingress's Traefik router (`traefik.ingress.kubernetes.io/router.*`, as the chart writes
 * them): its TLS (and the domain of its certificate), entry point, priority and middlewares.
 */
function traefikRouter(r: { tls?: boolean; domain?: string; entrypoints: 'web' | 'websecure'; priority: number; middlewares?: string }): Record<string, string> {
  return {
    ...(r.tls !== undefined ? { [`${TRAEFIK}router.tls`]: String(r.tls) } : {}),
    ...(r.domain !== undefined ? { [`${TRAEFIK}router.tls.domains.n.main`]: r.domain } : {}),
    [`${TRAEFIK}router.entrypoints`]: r.entrypoints,
    [`${TRAEFIK}router.priority`]: String(r.priority),
    ...(r.middlewares !== undefined ? { [`${TRAEFIK}router.middlewares`]: r.middlewares } : {}),
  };
}

/** One Ingress: its annotations for each controller and the user's, its paths, its TLS. */
interface IngressSpec {
  readonly logicalId: string;
  readonly name: string;
  readonly traefik: Record<string, string>;
  readonly nginx?: Record<string, string>;
  readonly user?: Record<string, string>;
  readonly paths: readonly BackendPath[];
  readonly tls?: k8s.IngressTls[];
}

/** What the Ingresses share, derived once from the props. */
interface Shared {
  readonly props: UyuniIngressesProps;
  readonly monitoring: boolean;
  readonly tls: k8s.IngressTls[];
  /** A path to the web UI's Service port. */
  readonly webPath: (path: string) => BackendPath;
  /** Traefik's reference to the Middleware that strips the exporters' prefixes. */
  readonly stripPrefixes: string;
}

function sharedOf(props: UyuniIngressesProps): Shared {
  const web = props.web ?? { service: 'web', port: 80 };
  return {
    props,
    monitoring: props.monitoring ?? true,
    tls: [{ hosts: [props.fqdn], secretName: props.tlsSecret ?? TLS_NAMES.serverCert }],
    webPath: (path: string): BackendPath => ({ path, ...web }),
    stripPrefixes: TraefikRoutes.middlewareRef(props.namespace, STRIP_PREFIXES_MIDDLEWARE),
  };
}

/** The HTTPS Ingresses: the web UI, the exporters (monitoring on), the hub API (hubApi). */
function httpsIngresses({ props, monitoring, tls, webPath, stripPrefixes }: Shared): IngressSpec[] {
  const out: IngressSpec[] = [{
    logicalId: 'Ssl',
    name: 'uyuni-ingress-ssl',
    // Lowest priority: the more specific exporter routes win over this catch-all.
    traefik: traefikRouter({ tls: true, domain: props.fqdn, entrypoints: 'websecure', priority: 1, middlewares: stripPrefixes }),
    user: props.annotations?.ssl,
    paths: [webPath('/')],
    tls,
  }];
  if (monitoring) {
    out.push({
      logicalId: 'Exporters',
      name: 'exporters-ingress-ssl',
      traefik: traefikRouter({ tls: true, entrypoints: 'websecure', priority: 100, middlewares: stripPrefixes }),
      user: props.annotations?.exporters,
      paths: EXPORTER_PATHS,
      tls,
    });
  }
  // The hub API over HTTPS (hubapi-ingress-ssl of the chart): without it /hub/rpc/api on
  // websecure would reach the web UI's catch-all.
  if (props.hubApi) {
    out.push({
      logicalId: 'HubApi',
      name: 'hubapi-ingress-ssl',
      traefik: traefikRouter({ tls: true, entrypoints: 'websecure', priority: 100 }),
      user: props.annotations?.hub,
      paths: [HUB_API_PATH],
      tls,
    });
  }
  return out;
}

/** The plain HTTP Ingresses: Traefik's redirect to HTTPS, and the paths served over HTTP. */
function httpIngresses({ props, monitoring, webPath, stripPrefixes }: Shared): IngressSpec[] {
  const out: IngressSpec[] = [];
  // ingress-nginx redirects HTTP to HTTPS by itself when an Ingress has TLS; Traefik needs a router for it.
  if (props.flavour === 'traefik') {
    out.push({
      logicalId: 'SslRedirect',
      name: 'uyuni-ingress-ssl-redirect',
      traefik: traefikRouter({ entrypoints: 'web', priority: 1, middlewares: TraefikRoutes.middlewareRef(props.namespace, HTTPS_REDIRECT_MIDDLEWARE) }),
      user: props.annotations?.sslRedirect,
      paths: [webPath('/'), ...(props.hubApi ? [HUB_API_PATH] : [])],
    });
  }
  out.push({
    logicalId: 'NoSsl',
    name: 'uyuni-ingress-nossl',
    // Above the redirect router, so these paths are served over HTTP instead of redirected.
    traefik: traefikRouter({ tls: false, entrypoints: 'web', priority: 100, middlewares: stripPrefixes }),
    nginx: { 'nginx.ingress.kubernetes.io/ssl-redirect': 'false' },
    user: props.annotations?.nossl,
    paths: [...NOSSL_PATHS.map(webPath), ...(monitoring ? EXPORTER_PATHS : [])],
  });
  return out;
}

/**
 * The Ingresses of the Uyuni server: `uyuni-ingress-ssl` (HTTPS for the FQDN),
 * `exporters-ingress-ssl` (monitoring), `uyuni-ingress-nossl` (the paths served over plain HTTP)
 * and, with Traefik, `uyuni-ingress-ssl-redirect` (everything else on HTTP is redirected to HTTPS).
 * The Traefik flavour references the Middlewares of {@link TraefikRoutes} in the same namespace.
 */
export class UyuniIngresses extends Construct {
  constructor(scope: Construct, id: string, props: UyuniIngressesProps) {
    super(scope, id);
    const shared = sharedOf(props);
    for (const spec of [...httpsIngresses(shared), ...httpIngresses(shared)]) this.ingress(props, spec);
  }

  /** One KubeIngress: the flavour's annotations under the user's, every path a Prefix on the FQDN. */
  private ingress(props: UyuniIngressesProps, spec: IngressSpec): void {
    const annotations = { ...(props.flavour === 'traefik' ? spec.traefik : spec.nginx), ...spec.user };
    new k8s.KubeIngress(this, spec.logicalId, {
      metadata: {
        name: spec.name,
        namespace: props.namespace,
        labels: props.labels,
        annotations: Object.keys(annotations).length > 0 ? annotations : undefined,
      },
      spec: {
        ingressClassName: props.className ?? props.flavour,
        tls: spec.tls,
        rules: [{
          host: props.fqdn,
          http: {
            paths: spec.paths.map((p) => ({
              path: p.path,
              pathType: 'Prefix',
              backend: { service: { name: p.service, port: { number: p.port } } },
            })),
          },
        }],
      },
    });
  }
}
