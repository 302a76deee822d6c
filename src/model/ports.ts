/**
 * The port tables, defined once (docs/upstream.md). Container ports,
 * Services and their exposure are all derived from them (src/constructs/services-per-port.ts).
 */
import { PG_PORT } from './db';

export type Protocol = 'TCP' | 'UDP';

/** One port of a logical service. */
export interface PortSpec {
  /** The Service port name. */
  readonly name: string;
  /** The port the Service listens on. */
  readonly port: number;
  /** The port the container listens on. @default port */
  readonly targetPort?: number;
  readonly protocol: Protocol;
  /** The chart's node port when the Service is a NodePort and none is configured. @default assigned by Kubernetes */
  readonly nodePort?: number;
}

/** Switches that decide which Services and ports exist. */
export interface PortFeatures {
  /** TFTP in its own Deployment with a LoadBalancer Service (not with hostNetwork). */
  readonly tftpService: boolean;
  readonly debugJava: boolean;
  readonly monitoring: boolean;
  readonly hubApi: boolean;
}

/** A Service's fixed shape, where the chart does not let it be configured. */
export interface FixedExposure {
  readonly type: 'LoadBalancer';
  readonly sessionAffinity: 'ClientIP';
  readonly externalTrafficPolicy: 'Local';
}

/** One logical service: a Service of that name with these ports. */
export interface ServiceSpec {
  /** The Service name. */
  readonly name: string;
  /** The component (app.kubernetes.io/component) of the pods that serve it. */
  readonly component: string;
  /** The container that listens, when a pod has several. @default every container of the component */
  readonly container?: string;
  readonly ports: readonly PortSpec[];
  /** @default configurable exposure */
  readonly fixed?: FixedExposure;
}

type When = (f: PortFeatures) => boolean;
interface ServiceRow {
  readonly name: string;
  readonly component: 'server' | 'db' | 'tftp' | 'hub-xmlrpc';
  readonly ports: ReadonlyArray<PortSpec & { readonly when?: When }>;
  readonly when?: When;
  readonly fixed?: FixedExposure;
}

const tcp = (name: string, port: number, nodePort?: number, when?: When) =>
  ({ name, port, protocol: 'TCP' as const, ...(nodePort ? { nodePort } : {}), when });
const debug: When = (f) => f.debugJava;
const monitoring: When = (f) => f.monitoring;

/** The server's port table (server-helm services.yaml, 2026.08). */
const SERVER_TABLE: readonly ServiceRow[] = [
  { name: 'cobbler', component: 'server', ports: [tcp('cobbler', 25151)] },
  { name: 'db', component: 'db', ports: [tcp('pgsql', PG_PORT)] },
  { name: 'reportdb', component: 'db', ports: [tcp('pgsql', PG_PORT, 30032)] },
  { name: 'salt', component: 'server', ports: [tcp('publish', 4505, 30005), tcp('request', 4506, 30006)] },
  { name: 'search', component: 'server', ports: [tcp('debug', 8002, 30002)], when: debug },
  { name: 'taskomatic', component: 'server', ports: [tcp('debug', 8001, 30001)], when: debug },
  { name: 'tomcat', component: 'server', ports: [tcp('debug', 8003, 30003)], when: debug },
  { name: 'taskomatic-internal', component: 'server', ports: [tcp('jmx', 5557), tcp('mtrx', 9800)], when: monitoring },
  {
    name: 'tomcat-internal',
    component: 'server',
    ports: [tcp('node-exporter', 9100), tcp('jmx', 5556, undefined, monitoring), tcp('pgsql-exporter', 9187, undefined, monitoring)],
  },
  { name: 'web', component: 'server', ports: [tcp('http', 80)] },
  {
    name: 'tftp',
    component: 'tftp',
    ports: [{ name: 'tftp', port: 69, protocol: 'UDP' }],
    when: (f) => f.tftpService,
    fixed: { type: 'LoadBalancer', sessionAffinity: 'ClientIP', externalTrafficPolicy: 'Local' },
  },
  { name: 'hub-xmlrpc', component: 'hub-xmlrpc', ports: [tcp('hub', 2830)], when: (f) => f.hubApi },
];

/** The server's Services for a feature set. */
export function serverServices(features: PortFeatures): ServiceSpec[] {
  return SERVER_TABLE
    .filter((row) => !row.when || row.when(features))
    .map((row) => ({
      name: row.name,
      component: row.component,
      ports: row.ports.filter((p) => !p.when || p.when(features)).map(({ when: _when, ...p }) => p),
      ...(row.fixed ? { fixed: row.fixed } : {}),
    }));
}

/** Every Service name the server table can have, whatever the features (for configuration checks). */
export const SERVER_SERVICE_NAMES: readonly string[] = SERVER_TABLE.map((row) => row.name);

const port = (name: string, p: number, protocol: Protocol = 'TCP', targetPort?: number): PortSpec =>
  ({ name, port: p, protocol, ...(targetPort ? { targetPort } : {}) });

/** Switches that decide which of the proxy's Services exist. */
export interface ProxyPortFeatures {
  /** TFTP behind its LoadBalancer Service (not in the node's network: `proxy.tftp.hostNetwork`). */
  readonly tftpService: boolean;
}

type ProxyRow = ServiceSpec & { readonly when?: (f: ProxyPortFeatures) => boolean };

/**
 * The proxy's port table (proxy-helm templates/services.yaml @ fea31ed6): one Service per logical
 * service, each served by one container of Deployment uyuni-proxy (component proxy), tftp by
 * Deployment uyuni-proxy-tftp (component proxy-tftp). Port names as the chart's.
 */
const PROXY_TABLE: readonly ProxyRow[] = [
  { name: 'web', component: 'proxy', container: 'httpd', ports: [port('http', 80), port('https', 443)] },
  { name: 'salt', component: 'proxy', container: 'salt-broker', ports: [port('salt-publish', 4505), port('salt-request', 4506)] },
  { name: 'ssh', component: 'proxy', container: 'ssh', ports: [port('ssh', 8022, 'TCP', 22)] },
  {
    name: 'tftp',
    component: 'proxy-tftp',
    container: 'tftpd',
    ports: [port('tftp', 69, 'UDP')],
    when: (f) => f.tftpService,
    // The chart's comment: ClusterIP or NodePort would not work for TFTP outside the host network.
    fixed: { type: 'LoadBalancer', sessionAffinity: 'ClientIP', externalTrafficPolicy: 'Local' },
  },
];

const withoutWhen = ({ when: _when, ...svc }: ProxyRow): ServiceSpec => svc;

/** Every Service the proxy's table has, whatever the features: the containers' ports derive from it. */
export const PROXY_SERVICES: readonly ServiceSpec[] = PROXY_TABLE.map(withoutWhen);

/** The proxy's Services for a feature set (no tftp Service when TFTP is in the node's network). */
export function proxyServices(features: ProxyPortFeatures): ServiceSpec[] {
  return PROXY_TABLE.filter((row) => !row.when || row.when(features)).map(withoutWhen);
}

/**
 * squid's container port in the proxy pod, used from inside the pod only: no Service exposes it
 * (proxy-helm templates/deployment.yaml @ 1ad19a5d).
 */
export const PROXY_SQUID_PORT = 8088;

/** A container port: the chart writes the number only; UDP says so. */
export interface ContainerPort {
  readonly containerPort: number;
  readonly protocol?: Protocol;
}

/**
 * The container ports of the pods of one component (or of one container of them), derived
 * from the Services that select them.
 */
export function containerPorts(services: readonly ServiceSpec[], component: string, container?: string): ContainerPort[] {
  const seen = new Set<string>();
  const out: ContainerPort[] = [];
  for (const svc of services.filter((s) => s.component === component && (!container || s.container === container))) {
    for (const p of svc.ports) {
      const containerPort = p.targetPort ?? p.port;
      const key = `${containerPort}/${p.protocol}`;
      if (seen.has(key)) continue; // db and reportdb share 5432
      seen.add(key);
      out.push(p.protocol === 'UDP' ? { containerPort, protocol: 'UDP' } : { containerPort });
    }
  }
  return out;
}
