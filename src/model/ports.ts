/**
 * The port tables, defined once. Container ports, Services and their exposure are all derived
 * from them (src/constructs/services-per-port.ts).
 */

export type Protocol = 'TCP' | 'UDP';

/** One port of a logical service. */
export interface PortSpec {
  /** The Service port name (also the container port name, when unique). */
  readonly name: string;
  /** The port the Service listens on. */
  readonly port: number;
  /** The port the container listens on. @default port */
  readonly targetPort?: number;
  readonly protocol: Protocol;
}

/** Switches that decide which ports exist. */
export interface PortFeatures {
  readonly tftp: boolean;
  readonly debugJava: boolean;
  readonly hubApi: boolean;
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
}

interface ServiceRow {
  readonly name: string;
  /** Which pods serve it; `db` is served by the db Deployment when there is one. */
  readonly servedBy: 'server' | 'db' | 'hub-api';
  readonly ports: ReadonlyArray<PortSpec & { readonly when?: (f: PortFeatures) => boolean }>;
  readonly when?: (f: PortFeatures) => boolean;
}

const tcp = (name: string, port: number, when?: (f: PortFeatures) => boolean) => ({ name, port, protocol: 'TCP' as const, when });
const debug = (f: PortFeatures) => f.debugJava;

/** The server's port table (uyuni-server.md §4). */
const SERVER_TABLE: readonly ServiceRow[] = [
  { name: 'web', servedBy: 'server', ports: [tcp('http', 80)] },
  { name: 'salt', servedBy: 'server', ports: [tcp('publish', 4505), tcp('request', 4506)] },
  { name: 'cobbler', servedBy: 'server', ports: [tcp('cobbler', 25151)] },
  { name: 'db', servedBy: 'db', ports: [tcp('pgsql', 5432), tcp('exporter', 9187)] },
  { name: 'reportdb', servedBy: 'db', ports: [tcp('pgsql', 5432)] },
  { name: 'taskomatic', servedBy: 'server', ports: [tcp('jmx', 5556), tcp('mtrx', 9800), tcp('debug', 8001, debug)] },
  { name: 'tomcat', servedBy: 'server', ports: [tcp('jmx', 5557), tcp('debug', 8003, debug)] },
  { name: 'search', servedBy: 'server', ports: [tcp('debug', 8002)], when: debug },
  { name: 'tftp', servedBy: 'server', ports: [{ name: 'tftp', port: 69, protocol: 'UDP' }], when: (f) => f.tftp },
  { name: 'hub-api', servedBy: 'hub-api', ports: [tcp('api', 2830)], when: (f) => f.hubApi },
];

/**
 * The server's Services for a feature set. `separateDb` decides whether `db`/`reportdb` select
 * the db Deployment's pods or the server's (which then runs PostgreSQL itself).
 */
export function serverServices(features: PortFeatures, separateDb: boolean): ServiceSpec[] {
  return SERVER_TABLE
    .filter((row) => !row.when || row.when(features))
    .map((row) => ({
      name: row.name,
      component: row.servedBy === 'db' ? (separateDb ? 'db' : 'server') : row.servedBy,
      ports: row.ports.filter((p) => !p.when || p.when(features)).map(({ when: _when, ...p }) => p),
    }));
}

const port = (name: string, p: number, protocol: Protocol = 'TCP', targetPort?: number): PortSpec =>
  ({ name, port: p, protocol, ...(targetPort ? { targetPort } : {}) });

/** The proxy's port table (uyuni-server.md §4, proxy): one Service per logical service, each served by one container. */
export const PROXY_SERVICES: readonly ServiceSpec[] = [
  { name: 'web', component: 'proxy', container: 'proxy-httpd', ports: [port('http', 80), port('https', 443)] },
  { name: 'salt', component: 'proxy', container: 'proxy-salt-broker', ports: [port('publish', 4505), port('request', 4506)] },
  { name: 'ssh', component: 'proxy', container: 'proxy-ssh', ports: [port('ssh', 8022, 'TCP', 22)] },
  { name: 'tftp', component: 'proxy', container: 'proxy-tftpd', ports: [port('tftp', 69, 'UDP')] },
];

/**
 * The container ports of the pods of one component (or of one container of them), derived
 * from the Services that select them.
 */
export function containerPorts(services: readonly ServiceSpec[], component: string, container?: string) {
  const seen = new Set<string>();
  const out: Array<{ name?: string; containerPort: number; protocol: Protocol }> = [];
  for (const svc of services.filter((s) => s.component === component && (!container || s.container === container))) {
    for (const p of svc.ports) {
      const containerPort = p.targetPort ?? p.port;
      const key = `${containerPort}/${p.protocol}`;
      if (seen.has(key)) continue; // db and reportdb share 5432
      seen.add(key);
      out.push({ containerPort, protocol: p.protocol });
    }
  }
  return out;
}
