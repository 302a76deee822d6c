import { k8s } from 'cdk8s-plus-28';
import { CREDENTIALS, credentialEnv, credentialUserEnv, sccCredentials } from '../model/credentials';
import { DATABASES, PG_PORT } from '../model/db';
import type { ImageRef } from '../model/images';
import type { ContainerPort } from '../model/ports';
import {
  CA_PATHS, CERT_MODE, KEY_MODE, PKI_DIR, SERVER_TLS_ITEMS, TLS_NAMES,
} from '../model/tls';
import type { VolumeSpec } from '../model/volumes';
import { claimMounts, claimVolumes } from './claims';
import { readScript } from './script-job';
import { configEnv, UYUNI_CONFIG } from './uyuni-config-map';

/**
 * The server pod of the current images (server-helm 2026.08; docs/upstream.md): the
 * image's own entrypoint (setup at first start, then systemd), configured through `container=oci`
 * and `UYUNI_HOSTNAME`, CA files where the images read them, a cgroup emptyDir that the entrypoint
 * mounts cgroup2 on (hence SYS_ADMIN), and init containers init-volumes and db-waiter.
 */

/** How the container may mount cgroup2 under AppArmor / SELinux (README of the chart). */
export interface ServerConfinement {
  /** spc_t and AppArmor Unconfined (unsafe, works everywhere). @default false */
  readonly superPrivileged?: boolean;
  /** A Localhost AppArmor profile. @default the runtime's default profile */
  readonly apparmorProfile?: string;
  /** An SELinux type. @default the runtime's default type */
  readonly selinuxType?: string;
}

export interface ServerPodProps {
  /** The server image. */
  readonly image: ImageRef;
  /** TZ. */
  readonly timezone: string;
  /** The server's claims, mounted at their paths (init-volumes sees them under /mnt). */
  readonly volumes: readonly VolumeSpec[];
  /** Where init-volumes records the release that runs on the data. */
  readonly releaseDir: string;
  /** Confinement of the main container. @default none */
  readonly confinement?: ServerConfinement;
  /** A basic-auth Secret with SUSE Customer Center credentials. @default none */
  readonly sccSecret?: string;
  /** DEBUG_JAVA=true. @default false */
  readonly debugJava?: boolean;
  /** SYSTEMD_LOG_LEVEL on the console (with a tty). @default unset */
  readonly systemdLogLevel?: string;
  /** A package mirror at /mirror: a claim or a node path. @default none */
  readonly mirror?: { readonly claimName?: string; readonly hostPath?: string };
  /** Container ports. @default none */
  readonly ports?: readonly ContainerPort[];
  /** Pod volumes passed through as plain Kubernetes JSON (written as given). @default none */
  readonly extraVolumes?: readonly object[];
  /** Mounts of the main container passed through as plain JSON. @default none */
  readonly extraVolumeMounts?: readonly object[];
  /**
   * A CA rotation's overlap (dist/ssl-addca/): the new CA's certificate (a Secret and its key),
   * published and trusted beside the running CA (init container ca-bundle). @default the running CA only
   */
  readonly nextCa?: { readonly secret: string; readonly key: string };
  /** Annotations of the pod (a CA rotation's phase: a change restarts the pod). @default none */
  readonly podAnnotations?: Readonly<Record<string, string>>;
}

/** The main container's name. */
export const SERVER_CONTAINER = 'uyuni';
/** `/usr/bin/startup-check.sh` fails while the first setup runs: 10 s × 3600 = 10 h (bsc#1263157). */
export const STARTUP_PROBE: k8s.Probe = {
  exec: { command: ['/usr/bin/startup-check.sh'] }, periodSeconds: 10, timeoutSeconds: 5, failureThreshold: 3600,
};
const LIVENESS_PROBE: k8s.Probe = { exec: { command: ['/usr/bin/liveness-check.sh'] }, timeoutSeconds: 5, failureThreshold: 5, periodSeconds: 60 };
const READINESS_PROBE: k8s.Probe = {
  httpGet: { path: '/rhn/manager/api/api/getVersion', port: k8s.IntOrString.fromNumber(80), scheme: 'HTTP' },
  periodSeconds: 10, successThreshold: 1, initialDelaySeconds: 120,
};
/** The SELinux level every server container runs with. */
const SELINUX_LEVEL = 's0';

function confinementContext(c: ServerConfinement = {}): k8s.SecurityContext {
  const seLinuxType = c.superPrivileged ? 'spc_t' : c.selinuxType;
  return {
    capabilities: { add: ['SYS_ADMIN'] },
    seLinuxOptions: { level: SELINUX_LEVEL, ...(seLinuxType ? { type: seLinuxType } : {}) },
  };
}

/**
 * The AppArmor profile of the main container. The chart writes securityContext.appArmorProfile
 * (Kubernetes 1.30+); our schema is 1.28's, which has no such field (an API server with strict
 * field validation refuses it), so it is the pod annotation that 1.28 reads and later versions
 * still honour.
 */
function appArmorAnnotations(c: ServerConfinement = {}): Record<string, string> {
  const profile = c.superPrivileged ? 'unconfined' : c.apparmorProfile ? `localhost/${c.apparmorProfile}` : undefined;
  return profile ? { [`container.apparmor.security.beta.kubernetes.io/${SERVER_CONTAINER}`]: profile } : {};
}

const k = UYUNI_CONFIG.keys;

/** The main container's environment, in the chart's order (§2.2). */
function serverEnv(props: ServerPodProps): k8s.EnvVar[] {
  const product = DATABASES.product;
  const report = DATABASES.report;
  return [
    { name: 'container', value: 'oci' },
    { name: 'TZ', value: props.timezone },
    ...(props.mirror ? [{ name: 'MIRROR_PATH', value: '/mirror' }] : []),
    ...credentialEnv(CREDENTIALS.admin),
    ...credentialEnv(CREDENTIALS.db),
    ...credentialEnv(CREDENTIALS.reportdb),
    { name: 'MANAGER_DB_NAME', value: product.name },
    { name: 'MANAGER_DB_HOST', value: product.host },
    { name: 'MANAGER_DB_CA_CERT', value: CA_PATHS.db },
    { name: 'MANAGER_DB_PORT', value: String(PG_PORT) },
    { name: 'EXTERNALDB_PROVIDER' },
    { name: 'ISS_PARENT' },
    { name: 'REPORT_DB_NAME', value: report.name },
    { name: 'REPORT_DB_HOST', value: report.host },
    { name: 'REPORT_DB_CA_CERT', value: CA_PATHS.db },
    { name: 'REPORT_DB_PORT', value: String(PG_PORT) },
    configEnv('MANAGER_ADMIN_EMAIL', k.email),
    configEnv('MANAGER_MAIL_FROM', k.email),
    configEnv('UYUNI_HOSTNAME', k.fqdn),
    ...(props.debugJava ? [{ name: 'DEBUG_JAVA', value: 'true' }] : []),
    ...(props.sccSecret ? credentialEnv(sccCredentials(props.sccSecret)) : []),
    ...(props.systemdLogLevel ? [{ name: 'SYSTEMD_LOG_TARGET', value: 'console' }, { name: 'SYSTEMD_LOG_LEVEL', value: props.systemdLogLevel }] : []),
  ];
}

/**
 * The CA certificate files: every place the images read the CA from (subPath, read-only). During
 * a CA rotation's overlap, the bundles of init container ca-bundle instead.
 */
function caMounts(overlap: boolean): k8s.VolumeMount[] {
  const [ca, caFile, dbCa, dbCaFile] = overlap ? [CA_BUNDLE_VOLUME, 'ca.crt', CA_BUNDLE_VOLUME, 'db-ca.crt'] : ['ca-cert', 'ca.crt', 'db-ca-cert', 'ca.crt'];
  return [
    ...[CA_PATHS.local, CA_PATHS.salt, CA_PATHS.pub].map((mountPath) => ({ name: ca, mountPath, subPath: caFile, readOnly: true })),
    { name: dbCa, mountPath: CA_PATHS.db, subPath: dbCaFile, readOnly: true },
  ];
}

const CA_BUNDLE_VOLUME = 'ca-bundle';
const CA_NEXT_VOLUME = 'ca-next';
/** Where init container ca-bundle sees its volumes. */
const CA_BUNDLE_DIRS = { bundle: '/ca/bundle', current: '/ca/current', db: '/ca/db', next: '/ca/next' } as const;

/** Init container ca-bundle (src/scripts/ca-bundle.sh): the running CA and the new one in one file each, for the server's and the database's trust. */
function caBundleContainer(props: ServerPodProps): k8s.Container {
  return {
    name: 'ca-bundle',
    image: props.image.image,
    imagePullPolicy: props.image.pullPolicy,
    command: ['sh', '-c', readScript('ca-bundle.sh')],
    env: [
      { name: 'BUNDLE_DIR', value: CA_BUNDLE_DIRS.bundle },
      { name: 'CURRENT_CA', value: `${CA_BUNDLE_DIRS.current}/ca.crt` },
      { name: 'CURRENT_DB_CA', value: `${CA_BUNDLE_DIRS.db}/ca.crt` },
      { name: 'NEXT_CA', value: `${CA_BUNDLE_DIRS.next}/ca.crt` },
    ],
    volumeMounts: [
      { name: CA_BUNDLE_VOLUME, mountPath: CA_BUNDLE_DIRS.bundle },
      { name: 'ca-cert', mountPath: CA_BUNDLE_DIRS.current, readOnly: true },
      { name: 'db-ca-cert', mountPath: CA_BUNDLE_DIRS.db, readOnly: true },
      { name: CA_NEXT_VOLUME, mountPath: CA_BUNDLE_DIRS.next, readOnly: true },
    ],
    securityContext: { seLinuxOptions: { level: SELINUX_LEVEL } },
  };
}

/**
 * The CA certificates come from the issued Secrets' `ca.crt` (cert-manager writes it; a
 * third-party Secret must carry it), so no trust-manager Bundle and no CA ConfigMap is needed.
 */
function caVolumes(nextCa: ServerPodProps['nextCa']): k8s.Volume[] {
  const caItem = (secretName: string, name: string, key = 'ca.crt'): k8s.Volume =>
    ({ name, secret: { secretName, defaultMode: CERT_MODE, items: [{ key, path: 'ca.crt' }] } });
  return [
    caItem(TLS_NAMES.serverCert, 'ca-cert'), caItem(TLS_NAMES.dbCert, 'db-ca-cert'),
    ...(nextCa ? [caItem(nextCa.secret, CA_NEXT_VOLUME, nextCa.key), { name: CA_BUNDLE_VOLUME, emptyDir: { medium: 'Memory', sizeLimit: k8s.Quantity.fromString('1Mi') } }] : []),
  ];
}

/** The pieces of the server pod, shared by Deployment `uyuni` and the Jobs that run the server image on its data. */
export function serverPodParts(props: ServerPodProps) {
  const { image } = props;
  const mirror = props.mirror;
  const volumes: k8s.Volume[] = [
    ...claimVolumes(props.volumes),
    ...caVolumes(props.nextCa),
    {
      name: 'tls',
      secret: {
        secretName: TLS_NAMES.serverCert,
        defaultMode: CERT_MODE,
        items: [
          { key: 'tls.crt', path: SERVER_TLS_ITEMS.cert },
          { key: 'tls.key', path: SERVER_TLS_ITEMS.key, mode: KEY_MODE },
        ],
      },
    },
    { name: 'run', emptyDir: { medium: 'Memory', sizeLimit: k8s.Quantity.fromString('256Mi') } },
    // The entrypoint mounts its own cgroup2 here (container=oci): never the host's.
    { name: 'sys-fs-cgroup', emptyDir: {} },
    ...(mirror?.claimName ? [{ name: 'mirror', persistentVolumeClaim: { claimName: mirror.claimName } }] : []),
    ...(mirror?.hostPath ? [{ name: 'mirror', hostPath: { path: mirror.hostPath, type: 'Directory' } }] : []),
  ];
  const mounts: k8s.VolumeMount[] = [
    ...claimMounts(props.volumes),
    ...caMounts(Boolean(props.nextCa)),
    { name: 'tls', mountPath: PKI_DIR },
    { name: 'run', mountPath: '/run' },
    { name: 'sys-fs-cgroup', mountPath: '/sys/fs/cgroup' },
    ...(mirror ? [{ name: 'mirror', mountPath: '/mirror' }] : []),
  ];
  const selinux: k8s.SecurityContext = { seLinuxOptions: { level: SELINUX_LEVEL } };
  const initVolumes: k8s.Container = {
    name: 'init-volumes',
    image: image.image,
    imagePullPolicy: image.pullPolicy,
    command: ['sh', '-c', readScript('init-volumes.sh')],
    env: [
      { name: 'VOLUME_PATHS', value: props.volumes.filter((v) => v.seed !== false).map((v) => v.mountPath).join(' ') },
      { name: 'RELEASE_DIR', value: props.releaseDir },
    ],
    volumeMounts: claimMounts(props.volumes, '/mnt'),
    securityContext: selinux,
  };
  const dbWaiter: k8s.Container = {
    name: 'db-waiter',
    image: image.image,
    imagePullPolicy: image.pullPolicy,
    command: ['sh', '-c', readScript('db-waiter.sh')],
    env: [
      configEnv('MANAGER_DB_HOST', k.dbHost),
      configEnv('MANAGER_DB_PORT', k.dbPort),
      configEnv('MANAGER_DB_NAME', k.dbName),
      credentialUserEnv(CREDENTIALS.db),
      configEnv('REPORT_DB_HOST', k.reportdbHost),
      configEnv('REPORT_DB_PORT', k.reportdbPort),
      configEnv('REPORT_DB_NAME', k.reportdbName),
      credentialUserEnv(CREDENTIALS.reportdb),
    ],
  };
  const container: k8s.Container = {
    name: SERVER_CONTAINER,
    image: image.image,
    imagePullPolicy: image.pullPolicy,
    env: serverEnv(props),
    ...(props.systemdLogLevel ? { tty: true } : {}),
    volumeMounts: mounts,
    securityContext: confinementContext(props.confinement),
  };
  return {
    initContainers: [initVolumes, dbWaiter, ...(props.nextCa ? [caBundleContainer(props)] : [])],
    container,
    volumes,
    podAnnotations: { ...appArmorAnnotations(props.confinement), ...props.podAnnotations },
    imagePullSecrets: image.pullSecrets ? [...image.pullSecrets] : undefined,
  };
}

/** The main container of Deployment uyuni: the parts plus ports, probes and preStop. */
export function serverContainer(props: ServerPodProps): k8s.Container {
  const { container } = serverPodParts(props);
  return {
    ...container,
    ports: props.ports?.map((p) => ({ ...p })),
    startupProbe: STARTUP_PROBE,
    livenessProbe: LIVENESS_PROBE,
    readinessProbe: READINESS_PROBE,
    lifecycle: { preStop: { exec: { command: ['/bin/sh', '-c', 'spacewalk-service stop'] } } },
  };
}
