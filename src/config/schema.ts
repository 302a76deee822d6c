import {
  array, define, defaulted, Infer, object, optional, record, refine, Struct,
} from 'superstruct';

/**
 * The configuration schema: the single description of `uyuni.yaml`. Types, defaults and allowed
 * values all come from it. Only src/config/ reads user input.
 *
 * superstruct rather than a larger validation library: every synth loads this, and synth time
 * is a product target (bench/synth.bench.ts). Each check carries the message a user sees.
 */

// --- value checks, each with the message a user sees -------------------------------------

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
/** A Kubernetes quantity as used for storage sizes. */
const QUANTITY = /^[0-9]+(\.[0-9]+)?(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?$/;
const FQDN_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/i;

export function isFqdn(value: string): boolean {
  if (value.length > 253 || !value.includes('.')) return false;
  return value.split('.').every((label) => FQDN_LABEL.test(label));
}

const REQUIRED = 'is required';

/** A value of a JSON type, with `check` on top; `undefined` is reported as missing. */
function typed<T>(name: string, isType: (v: unknown) => v is T, typeMessage: string, check?: (v: T) => true | string): Struct<T, null> {
  return define<T>(name, (v) => {
    if (v === undefined) return REQUIRED;
    if (!isType(v)) return typeMessage;
    return check ? check(v) : true;
  });
}

const isString = (v: unknown): v is string => typeof v === 'string';
const isNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
const isBoolean = (v: unknown): v is boolean => typeof v === 'boolean';

const text = (check?: (v: string) => true | string) => typed('string', isString, 'must be a string', check);
const matching = (re: RegExp, message: string) => text((v) => re.test(v) || message);
const integer = (min: number, max: number, message = `must be a whole number from ${min} to ${max}`) =>
  typed('integer', isNumber, 'must be a number', (v) => (Number.isInteger(v) && v >= min && v <= max) || message);
const boolean = () => typed('boolean', isBoolean, 'must be a boolean');

/** One of fixed strings; the message lists them. */
function oneOf<const T extends readonly string[]>(values: T): Struct<T[number], null> {
  const message = `must be one of ${values.map((v) => JSON.stringify(v)).join(', ')}`;
  return define<T[number]>('enum', (v) => (v === undefined ? REQUIRED : (values as readonly unknown[]).includes(v) || message));
}

/** A section: a mapping with known keys only; defaulted sections get a fresh object each time. */
const section = <S extends Record<string, Struct<any, any>>>(schema: S) => object(schema);
const defaultedSection = <T>(struct: Struct<T, any>) => defaulted(struct, () => ({}));

/** A DNS-1123 label: namespaces, object names that become Service/host names. */
const dnsLabel = text((v) => {
  if (v.length > 63) return 'must be at most 63 characters (a DNS-1123 label)';
  return DNS1123_LABEL.test(v) || 'must be a DNS-1123 label: lower-case letters, digits and "-", starting and ending with a letter or digit';
});
/** A DNS-1123 subdomain: names of Secrets, storage classes, ingress classes. */
const dnsSubdomain = text((v) => (v.length <= 253 && DNS1123_SUBDOMAIN.test(v)) || 'must be a DNS-1123 subdomain: lower-case letters, digits, "-" and "."');
const fqdn = text((v) => isFqdn(v) || 'must be a fully qualified domain name such as uyuni.example.com (letters, digits, "-", dot-separated labels)');
const quantity = matching(QUANTITY, 'must be a Kubernetes quantity such as 10Gi, 300Mi or 1Ti');
/** Image tags and registries end up in image references, never in scripts. */
const imageTag = matching(/^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/, 'must be an image tag: letters, digits, "_", "." and "-"');
const registry = matching(/^[a-z0-9]([a-z0-9.-]*[a-z0-9])?(:[0-9]+)?(\/[a-z0-9]([a-z0-9._-]*[a-z0-9])?)*$/,
  'must be a registry path such as registry.opensuse.org/uyuni');
const timezone = matching(/^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/, 'must be a tz database name such as Etc/UTC or Europe/Berlin');
const positiveSeconds = integer(1, Number.MAX_SAFE_INTEGER, 'must be a whole number of seconds, at least 1');
const duration = matching(/^(?=.)([0-9]+h)?([0-9]+m)?([0-9]+s)?$/, 'must be a Go duration such as 8760h or 720h0m0s');
const absolutePath = text((v) => v.startsWith('/') || 'must be an absolute path');
const email = matching(/^[^\s@]+@[^\s@]+\.[^\s@]+$/, 'must be an e-mail address');

// --- sections -----------------------------------------------------------------------------

const volumeSettings = section({
  /** The claim's size. @default the volume table's size */
  size: optional(quantity),
  /** The claim's storage class. @default volumes.storageClass */
  storageClass: optional(dnsSubdomain),
});

const volumes = section({
  /** The storage class of every claim without its own. @default the cluster's default class */
  storageClass: optional(dnsSubdomain),
  /** var-pgsql */
  database: defaultedSection(volumeSettings),
  /** var-spacewalk */
  packages: defaultedSection(volumeSettings),
  /** srv-www */
  www: defaultedSection(volumeSettings),
  /** var-cache */
  cache: defaultedSection(volumeSettings),
  /** Per-volume settings by PVC name (wins over the groups above). */
  overrides: defaulted(record(text(), volumeSettings), () => ({})),
  /** An existing claim with a package mirror, mounted at /mirror. */
  mirror: optional(dnsSubdomain),
});

const images = section({
  registry: defaulted(registry, 'registry.opensuse.org/uyuni'),
  tag: defaulted(imageTag, 'latest'),
  pullPolicy: defaulted(oneOf(['Always', 'IfNotPresent', 'Never'] as const), 'IfNotPresent'),
  /** A dockerconfigjson Secret referenced in imagePullSecrets. */
  pullSecret: optional(dnsSubdomain),
});

const caSubject = section({
  country: defaulted(matching(/^[A-Z]{2}$/, 'must be a two-letter country code such as DE'), 'DE'),
  state: defaulted(text(), 'Bayern'),
  city: defaulted(text(), 'Nuernberg'),
  organization: defaulted(text(), 'Uyuni'),
  organizationalUnit: defaulted(text(), 'Uyuni'),
  email: optional(email),
});

const tls = section({
  /**
   * generated: cert-manager makes a CA and the certificates.
   * third-party: the user provides Secret uyuni-cert and ConfigMap uyuni-ca.
   * migrated: the user provides Secret uyuni-ca with the old CA; cert-manager issues from it.
   */
  mode: defaulted(oneOf(['generated', 'third-party', 'migrated'] as const), 'generated'),
  ca: defaultedSection(caSubject),
  /** Certificate lifetime. */
  duration: defaulted(duration, '8760h'),
  /** Renew this long before expiry. */
  renewBefore: defaulted(duration, '720h'),
  /** CA lifetime (generated mode). */
  caDuration: defaulted(duration, '87600h'),
});

const exposure = section({
  type: defaulted(oneOf(['ClusterIP', 'LoadBalancer', 'NodePort'] as const), 'ClusterIP'),
  /** NodePort only: node port per port name. */
  nodePorts: optional(record(text(), integer(30000, 32767, 'must be in the node port range 30000-32767'))),
});

const replicas = section({ replicas: defaulted(integer(0, 10), 0) });

const PG_VERSIONS = [12, 13, 14, 15, 16, 17];
const pgVersion = typed('integer', isNumber, 'must be a number',
  (v) => PG_VERSIONS.includes(v) || `must be a supported PostgreSQL major version: ${PG_VERSIONS.join(', ')}`);
const pgVersions = refine(section({ from: pgVersion, to: pgVersion }), 'order', (p, ctx) =>
  p.to >= p.from || { message: 'must not be lower than from (PostgreSQL cannot be downgraded)', path: [...ctx.path, 'to'] });

/** A user name for ssh: no spaces, no shell metacharacters. */
const sshUser = matching(/^[a-z_][a-z0-9_.-]{0,31}$/, 'must be a POSIX user name (lower-case letters, digits, "_", "-", "."; no spaces)');

const migration = section({
  source: section({
    fqdn,
    /** Logs in over ssh and runs rsync through sudo. */
    user: defaulted(sshUser, 'root'),
    port: defaulted(integer(1, 65535), 22),
  }),
  postgresql: pgVersions,
  /** Keep the migration-data PVC (it holds the CA key and the DB password) after the migration. */
  keepMigrationData: defaulted(boolean(), false),
});

const upgrade = section({
  postgresql: pgVersions,
});

const proxy = section({
  namespace: defaulted(dnsLabel, 'uyuni-proxy'),
  /** The proxy's FQDN (its certificate names it). */
  fqdn,
  /** The Secret made from the proxy config tarball (config.yaml, httpd.yaml, ssh.yaml). */
  configSecret: defaulted(dnsSubdomain, 'uyuni-proxy-config'),
  /** The squid cache volume (PVC squid-cache). @default 10Gi, class volumes.storageClass */
  cache: defaultedSection(volumeSettings),
  /** Exposure per proxy Service name (web, salt, ssh, tftp); ClusterIP unless said otherwise. */
  services: defaulted(record(text(), exposure), () => ({})),
});

const nonEmpty = text((v) => v.length > 0 || 'must not be empty');

/** A container of a node pod (the subset of the Pod API the agent renders into a unit). */
const nodeContainer = section({
  name: dnsLabel,
  image: nonEmpty,
  command: defaulted(array(text()), () => []),
  args: defaulted(array(text()), () => []),
  env: defaulted(array(section({ name: nonEmpty, value: defaulted(text(), '') })), () => []),
});

const nodePod = section({
  name: dnsSubdomain,
  namespace: defaulted(dnsLabel, 'default'),
  nodeName: dnsSubdomain,
  restartPolicy: defaulted(oneOf(['Always', 'OnFailure', 'Never'] as const), 'Always'),
  terminationGracePeriodSeconds: optional(integer(0, Number.MAX_SAFE_INTEGER)),
  initContainers: defaulted(array(nodeContainer), () => []),
  containers: refine(array(nodeContainer), 'non-empty', (v) => v.length > 0 || 'must list at least one container'),
});

const nodeServices = section({
  /** Where the agent unpacks packages; a relative command[0] resolves under it. */
  packageDir: defaulted(absolutePath, '/opt/stackable/packages'),
  /** The kubeconfig path written into units as KUBECONFIG. */
  kubeconfig: defaulted(absolutePath, '/root/.kube/config'),
  pods: defaulted(array(nodePod), () => []),
});

const timeouts = section({
  /** Any step without its own timeout. */
  defaultStepSeconds: defaulted(positiveSeconds, 600),
  /** The first-time setup Job. */
  setupSeconds: defaulted(positiveSeconds, 3600),
  /** The server Deployment's rollout (the server takes minutes to start). */
  serverStartSeconds: defaulted(positiveSeconds, 1800),
  /** Copying the old server's data. */
  dataSyncSeconds: defaulted(positiveSeconds, 86400),
  /** pg_upgrade. */
  dbUpgradeSeconds: defaulted(positiveSeconds, 21600),
  /** REINDEX and database checks: can run for hours on a large database. */
  dbFinalizeSeconds: defaulted(positiveSeconds, 86400),
  /** The whole run. */
  deadlineSeconds: defaulted(positiveSeconds, 7 * 86400),
});

export const PLAN_NAMES = ['install', 'migrate', 'upgrade', 'proxy', 'node-services'] as const;
export type PlanName = (typeof PLAN_NAMES)[number];

const configObject = section({
  /** The namespace of every namespaced object. */
  namespace: defaulted(dnsLabel, 'uyuni'),
  /** The server's fully qualified domain name. */
  fqdn,
  /** TZ of the server container. */
  timezone: defaulted(timezone, 'Etc/UTC'),
  images: defaultedSection(images),
  volumes: defaultedSection(volumes),
  tls: defaultedSection(tls),
  /** Run PostgreSQL in its own Deployment `db` (else inside the server container). */
  db: defaultedSection(section({ separate: defaulted(boolean(), false) })),
  hubApi: defaultedSection(replicas),
  coco: defaultedSection(replicas),
  /** Serve TFTP (69/UDP) for PXE boot. */
  tftp: defaulted(boolean(), true),
  /** Open the Java debug ports (8001-8003). */
  debugJava: defaulted(boolean(), false),
  /** Exposure per Service name (ClusterIP unless said otherwise). */
  services: defaulted(record(text(), exposure), () => ({})),
  ingress: defaultedSection(section({ className: optional(dnsSubdomain) })),
  timeouts: defaultedSection(timeouts),
  migration: optional(migration),
  upgrade: optional(upgrade),
  proxy: optional(proxy),
  nodeServices: optional(nodeServices),
  /** Which plans to write. @default the server flow (install, or migrate / upgrade when configured), plus proxy and node-services when configured */
  plans: optional(refine(array(oneOf(PLAN_NAMES)), 'non-empty', (v) => v.length > 0 || 'must list at least one plan')),
});

/**
 * The whole configuration. The migrate and upgrade Jobs work on the server's own PostgreSQL
 * layout (var-pgsql holding data/ and the pre-upgrade copy beside it); a separate db Deployment
 * sees the claim as its data directory, so the two cannot share it.
 */
export const configSchema = refine(configObject, 'db-layout', (c) => {
  const problems = (['migration', 'upgrade'] as const).filter((s) => c[s] && c.db.separate).map((s) => ({
    path: ['db', 'separate'],
    message: `must be false with a ${s} section (the ${s === 'migration' ? 'migrate' : 'upgrade'} plan upgrades the PostgreSQL inside the server container)`,
  }));
  return problems.length === 0 || problems;
});

export type UyuniConfig = Infer<typeof configSchema>;
export type MigrationConfig = NonNullable<UyuniConfig['migration']>;
export type UpgradeConfig = NonNullable<UyuniConfig['upgrade']>;
export type ProxyConfig = NonNullable<UyuniConfig['proxy']>;
export type NodeServicesConfig = NonNullable<UyuniConfig['nodeServices']>;
export type NodePodConfig = NodeServicesConfig['pods'][number];
export type ExposureConfig = Infer<typeof exposure>;
