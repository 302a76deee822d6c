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
 * The Ingresses of the Uyuni server: `uyuni-ingress-ssl` (HTTPS for the FQDN),
 * `exporters-ingress-ssl` (monitoring), `uyuni-ingress-nossl` (the paths served over plain HTTP)
 * and, with Traefik, `uyuni-ingress-ssl-redirect` (everything else on HTTP is redirected to HTTPS).
 * The Traefik flavour references the Middlewares of {@link TraefikRoutes} in the same namespace.
 */
export class UyuniIngresses extends Construct {
  constructor(scope: Construct, id: string, props: UyuniIngressesProps) {
    super(scope, id);
    const isTraefik = props.flavour === 'traefik';
    const monitoring = props.monitoring ?? true;
    const tls: k8s.IngressTls[] = [{ hosts: [props.fqdn], secretName: props.tlsSecret ?? TLS_NAMES.serverCert }];
    const web = props.web ?? { service: 'web', port: 80 };
    const webPath = (path: string): BackendPath => ({ path, ...web });
    const exporters = monitoring ? EXPORTER_PATHS : [];
    const stripPrefixes = TraefikRoutes.middlewareRef(props.namespace, STRIP_PREFIXES_MIDDLEWARE);

    const ingress = (logicalId: string, name: string, opts: {
      traefik: Record<string, string>;
      nginx?: Record<string, string>;
      user?: Record<string, string>;
      paths: readonly BackendPath[];
      tls?: k8s.IngressTls[];
    }) => {
      const annotations = { ...(isTraefik ? opts.traefik : opts.nginx), ...opts.user };
      new k8s.KubeIngress(this, logicalId, {
        metadata: {
          name,
          namespace: props.namespace,
          labels: props.labels,
          annotations: Object.keys(annotations).length > 0 ? annotations : undefined,
        },
        spec: {
          ingressClassName: props.className ?? props.flavour,
          tls: opts.tls,
          rules: [{
            host: props.fqdn,
            http: {
              paths: opts.paths.map((p) => ({
                path: p.path,
                pathType: 'Prefix',
                backend: { service: { name: p.service, port: { number: p.port } } },
              })),
            },
          }],
        },
      });
    };

    ingress('Ssl', 'uyuni-ingress-ssl', {
      traefik: {
        [`${TRAEFIK}router.tls`]: 'true',
        [`${TRAEFIK}router.tls.domains.n.main`]: props.fqdn,
        [`${TRAEFIK}router.entrypoints`]: 'websecure',
        // Lowest priority: the more specific exporter routes win over this catch-all.
        [`${TRAEFIK}router.priority`]: '1',
        [`${TRAEFIK}router.middlewares`]: stripPrefixes,
      },
      user: props.annotations?.ssl,
      paths: [webPath('/')],
      tls,
    });

    if (monitoring) {
      ingress('Exporters', 'exporters-ingress-ssl', {
        traefik: {
          [`${TRAEFIK}router.tls`]: 'true',
          [`${TRAEFIK}router.entrypoints`]: 'websecure',
          [`${TRAEFIK}router.priority`]: '100',
          [`${TRAEFIK}router.middlewares`]: stripPrefixes,
        },
        user: props.annotations?.exporters,
        paths: EXPORTER_PATHS,
        tls,
      });
    }

    // The hub API over HTTPS (hubapi-ingress-ssl of the chart): without it /hub/rpc/api on
    // websecure would reach the web UI's catch-all.
    if (props.hubApi) {
      ingress('HubApi', 'hubapi-ingress-ssl', {
        traefik: {
          [`${TRAEFIK}router.tls`]: 'true',
          [`${TRAEFIK}router.entrypoints`]: 'websecure',
          [`${TRAEFIK}router.priority`]: '100',
        },
        user: props.annotations?.hub,
        paths: [HUB_API_PATH],
        tls,
      });
    }

    // ingress-nginx redirects HTTP to HTTPS by itself when an Ingress has TLS; Traefik needs a router for it.
    if (isTraefik) {
      ingress('SslRedirect', 'uyuni-ingress-ssl-redirect', {
        traefik: {
          [`${TRAEFIK}router.entrypoints`]: 'web',
          [`${TRAEFIK}router.priority`]: '1',
          [`${TRAEFIK}router.middlewares`]: TraefikRoutes.middlewareRef(props.namespace, HTTPS_REDIRECT_MIDDLEWARE),
        },
        user: props.annotations?.sslRedirect,
        paths: [webPath('/'), ...(props.hubApi ? [HUB_API_PATH] : [])],
      });
    }

    ingress('NoSsl', 'uyuni-ingress-nossl', {
      traefik: {
        [`${TRAEFIK}router.tls`]: 'false',
        [`${TRAEFIK}router.entrypoints`]: 'web',
        // Above the redirect router, so these paths are served over HTTP instead of redirected.
        [`${TRAEFIK}router.priority`]: '100',
        [`${TRAEFIK}router.middlewares`]: stripPrefixes,
      },
      nginx: { 'nginx.ingress.kubernetes.io/ssl-redirect': 'false' },
      user: props.annotations?.nossl,
      paths: [...NOSSL_PATHS.map(webPath), ...exporters],
    });
  }
}
