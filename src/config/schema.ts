import { z } from 'zod';

/**
 * The configuration schema: the single description of `uyuni.yaml`. Types, defaults, allowed
 * values and the editor JSON Schema (docs/uyuni-config.schema.json) all come from it.
 * Only src/config/ reads user input.
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

/** A DNS-1123 label: namespaces, object names that become Service/host names. */
const dnsLabel = z.string().max(63, 'must be at most 63 characters (a DNS-1123 label)')
  .regex(DNS1123_LABEL, 'must be a DNS-1123 label: lower-case letters, digits and "-", starting and ending with a letter or digit');
/** A DNS-1123 subdomain: names of Secrets, storage classes, ingress classes. */
const dnsSubdomain = z.string().max(253)
  .regex(DNS1123_SUBDOMAIN, 'must be a DNS-1123 subdomain: lower-case letters, digits, "-" and "."');
const fqdn = z.string().refine(isFqdn, 'must be a fully qualified domain name such as uyuni.example.com (letters, digits, "-", dot-separated labels)');
const quantity = z.string().regex(QUANTITY, 'must be a Kubernetes quantity such as 10Gi, 300Mi or 1Ti');
/** Image tags and registries end up in image references, never in scripts. */
const imageTag = z.string().regex(/^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/, 'must be an image tag: letters, digits, "_", "." and "-"');
const registry = z.string().regex(/^[a-z0-9]([a-z0-9.-]*[a-z0-9])?(:[0-9]+)?(\/[a-z0-9]([a-z0-9._-]*[a-z0-9])?)*$/,
  'must be a registry path such as registry.opensuse.org/uyuni');
const timezone = z.string().regex(/^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/, 'must be a tz database name such as Etc/UTC or Europe/Berlin');
const positiveSeconds = z.number().int().positive();

// --- sections -----------------------------------------------------------------------------

const volumeSettings = z.object({
  /** The claim's size. @default the volume table's size */
  size: quantity.optional(),
  /** The claim's storage class. @default volumes.storageClass */
  storageClass: dnsSubdomain.optional(),
}).strict();

const volumes = z.object({
  /** The storage class of every claim without its own. @default the cluster's default class */
  storageClass: dnsSubdomain.optional(),
  /** var-pgsql */
  database: volumeSettings.default({}),
  /** var-spacewalk */
  packages: volumeSettings.default({}),
  /** srv-www */
  www: volumeSettings.default({}),
  /** var-cache */
  cache: volumeSettings.default({}),
  /** Per-volume settings by PVC name (wins over the groups above). */
  overrides: z.record(z.string(), volumeSettings).default({}),
  /** An existing PersistentVolume with a package mirror, mounted at /mirror. */
  mirror: dnsSubdomain.optional(),
}).strict();

const images = z.object({
  registry: registry.default('registry.opensuse.org/uyuni'),
  tag: imageTag.default('latest'),
  pullPolicy: z.enum(['Always', 'IfNotPresent', 'Never']).default('IfNotPresent'),
  /** A dockerconfigjson Secret referenced in imagePullSecrets. */
  pullSecret: dnsSubdomain.optional(),
}).strict();

const caSubject = z.object({
  country: z.string().regex(/^[A-Z]{2}$/, 'must be a two-letter country code such as DE').default('DE'),
  state: z.string().min(1).default('Bayern'),
  city: z.string().min(1).default('Nuernberg'),
  organization: z.string().min(1).default('Uyuni'),
  organizationalUnit: z.string().min(1).default('Uyuni'),
  email: z.string().email('must be an e-mail address').optional(),
}).strict();

const duration = z.string().regex(/^([0-9]+h)?([0-9]+m)?([0-9]+s)?$/, 'must be a Go duration such as 8760h or 720h0m0s').refine((s) => s.length > 0, 'must not be empty');

const tls = z.object({
  /**
   * generated: cert-manager makes a CA and the certificates.
   * third-party: the user provides Secret uyuni-cert and ConfigMap uyuni-ca.
   * migrated: the user provides Secret uyuni-ca with the old CA; cert-manager issues from it.
   */
  mode: z.enum(['generated', 'third-party', 'migrated']).default('generated'),
  ca: caSubject.default(caSubject.parse({})),
  /** Certificate lifetime. */
  duration: duration.default('8760h'),
  /** Renew this long before expiry. */
  renewBefore: duration.default('720h'),
  /** CA lifetime (generated mode). */
  caDuration: duration.default('87600h'),
}).strict();

const exposure = z.object({
  type: z.enum(['ClusterIP', 'LoadBalancer', 'NodePort']).default('ClusterIP'),
  /** NodePort only: node port per port name. */
  nodePorts: z.record(z.string(), z.number().int().min(30000, 'must be in the node port range 30000-32767').max(32767, 'must be in the node port range 30000-32767')).optional(),
}).strict();

const replicas = z.object({ replicas: z.number().int().min(0).max(10).default(0) }).strict();

const pgVersion = z.number().int().refine((n) => [12, 13, 14, 15, 16, 17].includes(n), 'must be a supported PostgreSQL major version: 12, 13, 14, 15, 16 or 17');
const pgVersions = z.object({ from: pgVersion, to: pgVersion }).strict()
  .refine((p) => p.to >= p.from, { message: 'must not be lower than from (PostgreSQL cannot be downgraded)', path: ['to'] });

/** A user name for ssh: no spaces, no shell metacharacters. */
const sshUser = z.string().regex(/^[a-z_][a-z0-9_.-]{0,31}$/, 'must be a POSIX user name (lower-case letters, digits, "_", "-", "."; no spaces)');

const migration = z.object({
  source: z.object({
    fqdn,
    /** Logs in over ssh and runs rsync through sudo. */
    user: sshUser.default('root'),
    port: z.number().int().min(1).max(65535).default(22),
  }).strict(),
  postgresql: pgVersions,
  /** Keep the migration-data PVC (it holds the CA key and the DB password) after the migration. */
  keepMigrationData: z.boolean().default(false),
}).strict();

const upgrade = z.object({
  postgresql: pgVersions,
}).strict();

const proxy = z.object({
  namespace: dnsLabel.default('uyuni-proxy'),
  /** The proxy's FQDN (its certificate names it). */
  fqdn,
  /** The Secret made from the proxy config tarball (config.yaml, httpd.yaml, ssh.yaml). */
  configSecret: dnsSubdomain.default('uyuni-proxy-config'),
  /** The squid cache volume (PVC squid-cache). @default 10Gi, class volumes.storageClass */
  cache: volumeSettings.default({}),
  /** Exposure per proxy Service name (web, salt, ssh, tftp); ClusterIP unless said otherwise. */
  services: z.record(z.string(), exposure).default({}),
}).strict();

/** A container of a node pod (the subset of the Pod API the agent renders into a unit). */
const nodeContainer = z.object({
  name: dnsLabel,
  image: z.string().min(1),
  command: z.array(z.string()).default([]),
  args: z.array(z.string()).default([]),
  env: z.array(z.object({ name: z.string().min(1), value: z.string().default('') }).strict()).default([]),
}).strict();

const nodePod = z.object({
  name: dnsSubdomain,
  namespace: dnsLabel.default('default'),
  nodeName: dnsSubdomain,
  restartPolicy: z.enum(['Always', 'OnFailure', 'Never']).default('Always'),
  terminationGracePeriodSeconds: z.number().int().min(0).optional(),
  initContainers: z.array(nodeContainer).default([]),
  containers: z.array(nodeContainer).min(1),
}).strict();

const nodeServices = z.object({
  /** Where the agent unpacks packages; a relative command[0] resolves under it. */
  packageDir: z.string().startsWith('/', 'must be an absolute path').default('/opt/stackable/packages'),
  /** The kubeconfig path written into units as KUBECONFIG. */
  kubeconfig: z.string().startsWith('/', 'must be an absolute path').default('/root/.kube/config'),
  pods: z.array(nodePod).default([]),
}).strict();

const timeouts = z.object({
  /** Any step without its own timeout. */
  defaultStepSeconds: positiveSeconds.default(600),
  /** The first-time setup Job. */
  setupSeconds: positiveSeconds.default(3600),
  /** The server Deployment's rollout (the server takes minutes to start). */
  serverStartSeconds: positiveSeconds.default(1800),
  /** Copying the old server's data. */
  dataSyncSeconds: positiveSeconds.default(86400),
  /** pg_upgrade. */
  dbUpgradeSeconds: positiveSeconds.default(21600),
  /** REINDEX and database checks: can run for hours on a large database. */
  dbFinalizeSeconds: positiveSeconds.default(86400),
  /** The whole run. */
  deadlineSeconds: positiveSeconds.default(7 * 86400),
}).strict();

export const PLAN_NAMES = ['install', 'migrate', 'upgrade', 'proxy', 'node-services'] as const;
export type PlanName = (typeof PLAN_NAMES)[number];

export const configSchema = z.object({
  /** The namespace of every namespaced object. */
  namespace: dnsLabel.default('uyuni'),
  /** The server's fully qualified domain name. */
  fqdn,
  /** TZ of the server container. */
  timezone: timezone.default('Etc/UTC'),
  images: images.default(images.parse({})),
  volumes: volumes.default(volumes.parse({})),
  tls: tls.default(tls.parse({})),
  /** Run PostgreSQL in its own Deployment `db` (else inside the server container). */
  db: z.object({ separate: z.boolean().default(false) }).strict().default({ separate: false }),
  hubApi: replicas.default({ replicas: 0 }),
  coco: replicas.default({ replicas: 0 }),
  /** Serve TFTP (69/UDP) for PXE boot. */
  tftp: z.boolean().default(true),
  /** Open the Java debug ports (8001-8003). */
  debugJava: z.boolean().default(false),
  /** Exposure per Service name (ClusterIP unless said otherwise). */
  services: z.record(z.string(), exposure).default({}),
  ingress: z.object({ className: dnsSubdomain.optional() }).strict().default({}),
  timeouts: timeouts.default(timeouts.parse({})),
  migration: migration.optional(),
  upgrade: upgrade.optional(),
  proxy: proxy.optional(),
  nodeServices: nodeServices.optional(),
  /** Which plans to write. @default the server flow (install, or migrate / upgrade when configured), plus proxy and node-services when configured */
  plans: z.array(z.enum(PLAN_NAMES)).min(1).optional(),
}).strict()
  // The migrate and upgrade Jobs work on the server's own PostgreSQL layout (var-pgsql holding
  // data/ and the pre-upgrade copy beside it); a separate db Deployment sees the claim as its data
  // directory, so the two cannot share it.
  .superRefine((c, ctx) => {
    for (const section of ['migration', 'upgrade'] as const) {
      if (c[section] && c.db.separate) {
        ctx.addIssue({ code: 'custom', path: ['db', 'separate'], message: `must be false with a ${section} section (the ${section === 'migration' ? 'migrate' : 'upgrade'} plan upgrades the PostgreSQL inside the server container)` });
      }
    }
  });

export type UyuniConfigInput = z.input<typeof configSchema>;
export type UyuniConfig = z.output<typeof configSchema>;
export type MigrationConfig = NonNullable<UyuniConfig['migration']>;
export type UpgradeConfig = NonNullable<UyuniConfig['upgrade']>;
export type ProxyConfig = NonNullable<UyuniConfig['proxy']>;
export type NodeServicesConfig = NonNullable<UyuniConfig['nodeServices']>;
export type NodePodConfig = NodeServicesConfig['pods'][number];
export type ExposureConfig = z.output<typeof exposure>;
