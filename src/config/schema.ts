import {
  array, defaulted, Infer, object, optional, record, refine, Struct, type,
} from 'superstruct';
import type { JsonSchema } from './json-schema';
import type { ObjectSchema } from 'superstruct/dist/utils';
import { PG_MAJOR } from '../model/db';
import { KNOWN_VOLUMES } from '../model/volumes';
import { DEFAULT_AGENT_EXECUTABLE, DEFAULT_PACKAGE_DIR } from '../systemd/defaults';
import { didYouMean } from './suggest';

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
/** The message of a string setting given something else (src/config/load.ts adds how to quote it). */
export const STRING_EXPECTED = 'must be a string';

/**
 * A leaf value: superstruct's `define`, with the leaf's JSON Schema as its `schema` (unused by
 * superstruct for leaves, and carried through `optional`, `defaulted` and `refine`), from which
 * src/config/json-schema.ts writes the editors' schema.
 */
function leaf<T>(name: string, json: JsonSchema, validator: (v: unknown) => true | string): Struct<T, JsonSchema> {
  return new Struct<T, JsonSchema>({ type: name, schema: json, validator: (v) => validator(v) });
}

/** A value of a JSON type, with `check` on top; `undefined` is reported as missing. */
function typed<T>(name: string, isType: (v: unknown) => v is T, typeMessage: string, check?: (v: T) => true | string, json: JsonSchema = { type: name }): Struct<T, JsonSchema> {
  return leaf<T>(name, json, (v) => {
    if (v === undefined) return REQUIRED;
    if (!isType(v)) return typeMessage;
    return check ? check(v) : true;
  });
}

const isString = (v: unknown): v is string => typeof v === 'string';
const isNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
const isBoolean = (v: unknown): v is boolean => typeof v === 'boolean';

const text = (check?: (v: string) => true | string, json: JsonSchema = { type: 'string' }) => typed('string', isString, STRING_EXPECTED, check, json);
const matching = (re: RegExp, message: string) => text((v) => re.test(v) || message, { type: 'string', pattern: re.source });
const integer = (min: number, max: number, message = `must be a whole number from ${min} to ${max}`) =>
  typed('integer', isNumber, 'must be a number', (v) => (Number.isInteger(v) && v >= min && v <= max) || message, { type: 'integer', minimum: min, maximum: max });
const boolean = () => typed('boolean', isBoolean, 'must be a boolean');

/** One of fixed strings; the message lists them. */
function oneOf<const T extends readonly string[]>(values: T): Struct<T[number], JsonSchema> {
  const message = `must be one of ${values.map((v) => JSON.stringify(v)).join(', ')}`;
  return leaf<T[number]>('enum', { enum: [...values] }, (v) => {
    if (v === undefined) return REQUIRED;
    if ((values as readonly unknown[]).includes(v)) return true;
    const hint = typeof v === 'string' ? didYouMean(v, values, true) : undefined;
    return hint ? `${message}; ${hint}` : message;
  });
}

/** A section: a mapping with known keys only; defaulted sections get a fresh object each time. */
const section = <S extends ObjectSchema>(schema: S) => object(schema);
const defaultedSection = <T, S>(struct: Struct<T, S>) => defaulted(struct, () => ({}));

/** A DNS-1123 label: namespaces, object names that become Service/host names. */
const dnsLabel = text((v) => {
  if (v.length > 63) return 'must be at most 63 characters (a DNS-1123 label)';
  return DNS1123_LABEL.test(v) || 'must be a DNS-1123 label: lower-case letters, digits and "-", starting and ending with a letter or digit';
}, { type: 'string', maxLength: 63, pattern: DNS1123_LABEL.source });
/** A DNS-1123 subdomain: names of Secrets, storage classes, ingress classes. */
const dnsSubdomain = text((v) => (v.length <= 253 && DNS1123_SUBDOMAIN.test(v)) || 'must be a DNS-1123 subdomain: lower-case letters, digits, "-" and "."',
  { type: 'string', maxLength: 253, pattern: DNS1123_SUBDOMAIN.source });
/** Lower-case only: Kubernetes host names (Ingress hosts, certificate DNS names) must be. */
const fqdn = text((v) => {
  if (!isFqdn(v)) return 'must be a fully qualified domain name such as uyuni.example.com (letters, digits, "-", dot-separated labels)';
  return v === v.toLowerCase() || `must be lower-case (Kubernetes host names are): ${v.toLowerCase()}`;
});
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

/** The 8 groups of an IPv6 address (`::` expanded, a trailing dotted IPv4 as two groups), or undefined. */
function ipv6Groups(v: string): number[] | undefined {
  const halves = v.split('::');
  if (halves.length > 2) return undefined;
  const parts = (h: string) => (h === '' ? [] : h.split(':'));
  const groups = (list: string[]): number[] | undefined => {
    const out: number[] = [];
    for (const [i, g] of list.entries()) {
      if (i === list.length - 1 && g.includes('.')) {
        const four = ipv4Octets(g);
        if (!four) return undefined;
        out.push(four[0] * 256 + four[1], four[2] * 256 + four[3]);
      } else if (/^[0-9a-f]{1,4}$/i.test(g)) {
        out.push(parseInt(g, 16));
      } else {
        return undefined;
      }
    }
    return out;
  };
  const head = groups(parts(halves[0]));
  const tail = halves.length === 2 ? groups(parts(halves[1])) : [];
  if (!head || !tail) return undefined;
  if (halves.length === 1) return head.length === 8 ? head : undefined;
  return head.length + tail.length <= 7 ? [...head, ...new Array<number>(8 - head.length - tail.length).fill(0), ...tail] : undefined;
}

/** The 4 octets of a dotted IPv4 address (no leading zeros), or undefined. */
function ipv4Octets(v: string): number[] | undefined {
  const parts = v.split('.');
  if (parts.length !== 4 || !parts.every((p) => /^(0|[1-9][0-9]{0,2})$/.test(p) && Number(p) <= 255)) return undefined;
  return parts.map(Number);
}

/**
 * An IPv4 or IPv6 network in CIDR notation, as pg_hba.conf takes it: the network address (no
 * host bits set) and a prefix length (0-32, 0-128).
 */
export function checkCidr(v: string): true | string {
  const usage = 'must be a network in CIDR notation, such as 10.42.0.0/16 or fd00:10:42::/56';
  const m = /^([^/]+)\/(0|[1-9][0-9]{0,2})$/.exec(v);
  if (!m) return usage;
  const v4 = ipv4Octets(m[1]);
  const words = v4 ? v4 : ipv6Groups(m[1]);
  if (!words) return usage;
  const bitsPerWord = v4 ? 8 : 16;
  const width = words.length * bitsPerWord;
  const prefix = Number(m[2]);
  if (prefix > width) return `must have a prefix length of at most ${width} for an ${v4 ? 'IPv4' : 'IPv6'} network`;
  const hostBits = words.some((w, i) => {
    const keep = Math.min(bitsPerWord, Math.max(0, prefix - i * bitsPerWord));
    return (w & ((1 << (bitsPerWord - keep)) - 1)) !== 0;
  });
  return !hostBits || `must be the network address of the range (no host bits set after /${prefix})`;
}
const cidr = text(checkCidr);

// --- sections -----------------------------------------------------------------------------

const stringMap = () => record(text(), text());

/** A claim's settings (the chart's `volumes.<claim>`). */
const volumeSettings = section({
  /** The claim's size. @default the claim table's size */
  size: optional(quantity),
  /** The claim's storage class; "-" means `storageClassName: ""` (no dynamic provisioning). @default volumes.storageClass */
  storageClass: optional(text((v) => v === '-' || (v.length <= 253 && DNS1123_SUBDOMAIN.test(v)) || 'must be a storage class name or "-"')),
  /** Extra labels of the claim. @default none */
  labels: optional(stringMap()),
  /** Annotations of the claim. @default none */
  annotations: optional(stringMap()),
  /** Bind to this PersistentVolume. @default none */
  volumeName: optional(dnsSubdomain),
  /** A label selector for the PersistentVolume (matchLabels / matchExpressions). @default none */
  selector: optional(type({})),
});

/** A claim of the claim table (src/model/volumes.ts), checked as a key beside its settings' values. */
const CLAIMS = KNOWN_VOLUMES.map((v) => v.name);
const claimName = text((v) => {
  if (CLAIMS.includes(v)) return true;
  const hint = didYouMean(v, CLAIMS);
  return `no such claim${hint ? `; ${hint}` : ''} (known: ${CLAIMS.join(', ')})`;
});

const volumes = section({
  /** The storage class of every claim without its own; "-" means "". @default the cluster's default class */
  storageClass: optional(text((v) => v === '-' || (v.length <= 253 && DNS1123_SUBDOMAIN.test(v)) || 'must be a storage class name or "-"')),
  /** Per-claim settings by claim name (var-spacewalk, var-pgsql18, srv-www, ...). */
  overrides: defaulted(record(claimName, volumeSettings), () => ({})),
});

const imageOverride = section({
  /** Replaces `<registry>/<name>` for this component. */
  image: optional(matching(/^[a-z0-9]([a-z0-9._/:-]*[a-z0-9])?$/, 'must be an image reference without tag, such as registry.example.org/uyuni/server')),
  /** Replaces images.tag for this component. */
  tag: optional(imageTag),
});

const images = section({
  registry: defaulted(registry, 'registry.opensuse.org/uyuni'),
  tag: defaulted(imageTag, '2026.08'),
  pullPolicy: defaulted(oneOf(['Always', 'IfNotPresent', 'Never'] as const), 'IfNotPresent'),
  /** A dockerconfigjson Secret referenced in imagePullSecrets. */
  pullSecret: optional(dnsSubdomain),
  /** Per-component image and tag. @default `<registry>/<name>:<tag>` */
  components: defaulted(section({
    server: optional(imageOverride),
    db: optional(imageOverride),
    hubApi: optional(imageOverride),
    coco: optional(imageOverride),
    tftp: optional(imageOverride),
    dbMigration: optional(imageOverride),
  }), () => ({})),
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
   * third-party: the user provides Secrets uyuni-cert and db-cert (tls.crt, tls.key, ca.crt).
   * migrated: the user provides Secret uyuni-ca with the old CA (decrypted key); cert-manager issues from it.
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
  /** NodePort only: node port per port name. @default the chart's node ports */
  nodePorts: optional(record(text(), integer(30000, 32767, 'must be in the node port range 30000-32767'))),
  /** Annotations of the Service (e.g. MetalLB's metallb.universe.tf/allow-shared-ip). @default none */
  annotations: optional(stringMap()),
  /** LoadBalancer only: the address to ask for. @default assigned by the load balancer */
  loadBalancerIP: optional(matching(/^[0-9a-fA-F.:]+$/, 'must be an IP address')),
});

const replicas = section({ replicas: defaulted(integer(0, 10), 0) });

const MIGRATION_PG = [14, 16];
const UPGRADE_PG = [14, 16, PG_MAJOR];
const pgVersion = (allowed: number[], what: string) => typed('integer', isNumber, 'must be a number',
  (v) => allowed.includes(v) || `must be ${what}: ${allowed.join(', ')}`, { enum: allowed });
/** The images' PostgreSQL: `to` can only be that. */
const pgTarget = defaulted(pgVersion([PG_MAJOR], `the PostgreSQL of the current server-postgresql image`), PG_MAJOR);

/** A user name for ssh: no spaces, no shell metacharacters. */
const sshUser = matching(/^[a-z_][a-z0-9_.-]{0,31}$/, 'must be a POSIX user name (lower-case letters, digits, "_", "-", "."; no spaces)');

const migration = section({
  source: section({
    fqdn,
    /** Logs in over ssh and runs rsync through sudo. */
    user: defaulted(sshUser, 'root'),
    port: defaulted(integer(1, 65535), 22),
  }),
  postgresql: section({
    from: pgVersion(MIGRATION_PG, 'a PostgreSQL major version the migration image upgrades from'),
    to: pgTarget,
  }),
  /** Keep the migration-data PVC (it holds the CA key and the DB password) after the migration. */
  keepMigrationData: defaulted(boolean(), false),
});

const upgrade = section({
  postgresql: section({
    /** The running database's version: 14 or 16 (claim var-pgsql, upgraded into var-pgsql18), or 18 (var-pgsql18 already). */
    from: pgVersion(UPGRADE_PG, 'the PostgreSQL major version of the running database'),
    to: pgTarget,
  }),
  /**
   * The install has the `root` claim of servers before 5.2.5, whose /root/.MANAGER_SETUP_COMPLETE
   * the upgrade moves to /var/spacewalk (the current Deployment mounts no /root). @default true
   * when postgresql.from is below 18 (those installs), else false
   */
  rootClaim: optional(boolean()),
  /**
   * The CA of a tls.mode generated install: keep (adopt the CA the running server's uyuni-cert
   * was issued by, wherever it lives: the chart's ClusterIssuer uyuni-issuer, mgradm's Issuer
   * uyuni-ca-issuer; every client keeps trusting the server) or new (mint a new CA in the
   * namespace: every minion and proxy must then be given it). @default keep
   */
  ca: defaulted(oneOf(['keep', 'new'] as const), 'keep'),
});

/** A tuning file's content: configuration lines, written as they are. */
const tuningText = text();

const proxy = section({
  namespace: defaulted(dnsLabel, 'uyuni-proxy'),
  /** The proxy's FQDN (its certificate names it). */
  fqdn,
  /**
   * The squid cache claim squid-cache (proxy-helm `volumes.squid`). Upstream sizes it from
   * `max_cache_size_mb` of config.yaml, which synth does not read: size it here. @default 10Gi, class volumes.storageClass
   */
  cache: defaultedSection(volumeSettings),
  tls: defaultedSection(section({
    /**
     * Issue the proxy's certificate from the server's Issuer uyuni-issuer (the proxy runs in the
     * server's cluster): Certificate <proxy.namespace>-proxy-cert in the server's namespace, whose
     * Secret the user copies as proxy-cert. @default false: the user creates Secret proxy-cert
     */
    issuer: defaulted(boolean(), false),
  })),
  /** Lines added to the configuration of squid, sshd and Apache (proxy-helm `squid.tuning`, `ssh.tuning`, `httpd.tuning`). @default none */
  tuning: defaultedSection(section({
    squid: optional(tuningText),
    ssh: optional(tuningText),
    apache: optional(tuningText),
  })),
  tftp: defaultedSection(section({
    /** Run Deployment uyuni-proxy-tftp in the node's network instead of behind the tftp LoadBalancer Service. @default false */
    hostNetwork: defaulted(boolean(), false),
  })),
  /**
   * The proxy through the cluster's Traefik (proxy-helm `ingress.type: traefik`): IngressRouteTCPs
   * for ssh and salt on Traefik's entry points ssh, salt-publish, salt-request (not for a NodePort
   * Service) and the plain-HTTP Ingress of the proxy's FQDN. @default type none: no route
   */
  ingress: defaultedSection(section({
    type: defaulted(oneOf(['none', 'traefik'] as const), 'none'),
    /** @default traefik */
    className: optional(text((v) => v.length > 0 || 'must not be empty')),
  })),
  /**
   * The proxy pod's DNS settings (proxy-helm `dnsConfig`: nameservers, searches, options with
   * string values), e.g. options [{name: ndots, value: "1"}] so the server's FQDN is not tried
   * with every search domain. @default none
   */
  dnsConfig: optional(section({
    nameservers: optional(array(text((v) => v.length > 0 || 'must not be empty'))),
    searches: optional(array(text((v) => v.length > 0 || 'must not be empty'))),
    options: optional(array(section({ name: text((v) => v.length > 0 || 'must not be empty'), value: optional(text()) }))),
  })),
  /** Exposure per proxy Service name (web, salt, ssh); ClusterIP unless said otherwise. tftp is always a LoadBalancer. */
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
  packageDir: defaulted(absolutePath, DEFAULT_PACKAGE_DIR),
  /** The kubeconfig path written into units as KUBECONFIG. */
  kubeconfig: defaulted(absolutePath, '/root/.kube/config'),
  /** The `uyuni-cdk` executable the agent's unit (dist/agent/) runs: the npm install, or the self-contained agent. */
  agentExecutable: defaulted(absolutePath, DEFAULT_AGENT_EXECUTABLE),
  pods: defaulted(array(nodePod), () => []),
});

const timeouts = section({
  /** Any step without its own timeout. */
  defaultStepSeconds: defaulted(positiveSeconds, 600),
  /** The server's rollout: the first start sets the server up (the chart's startup probe allows 10 h). */
  serverStartSeconds: defaulted(refine(positiveSeconds, 'startup-probe', (v) => v >= 36000
    || 'must be at least 36000 (10 h): the server\'s startup probe allows its first start that long'), 36000),
  /** The db rollout (after an upgrade its start runs the upgrade hooks). */
  dbStartSeconds: defaulted(positiveSeconds, 3600),
  /** Copying the old server's data. */
  dataSyncSeconds: defaulted(positiveSeconds, 86400),
  /** The PostgreSQL major upgrade (a copy: proportional to the database size). */
  dbUpgradeSeconds: defaulted(positiveSeconds, 21600),
  /** REINDEX and database checks: can run for hours on a large database. */
  dbFinalizeSeconds: defaulted(positiveSeconds, 86400),
  /** The whole run. */
  deadlineSeconds: defaulted(positiveSeconds, 7 * 86400),
});

/** A pod volume or mount passed through to the server pod (only its name and path are checked). */
const extraVolume = type({ name: dnsLabel });
const extraVolumeMount = type({ name: dnsLabel, mountPath: absolutePath });

const server = section({
  /** MANAGER_ADMIN_EMAIL and MANAGER_MAIL_FROM (ConfigMap uyuni-config key email). @default root@<fqdn> */
  email: optional(email),
  /** A basic-auth Secret with the SUSE Customer Center credentials (SCC_USER / SCC_PASS). @default none */
  sccSecret: optional(dnsSubdomain),
  /** SELinux type spc_t and AppArmor Unconfined: mounting cgroup2 works anywhere (unsafe). @default false */
  superPrivileged: defaulted(boolean(), false),
  /** A Localhost AppArmor profile that allows the cgroup2 mount (e.g. k8s-systemd-uyuni). @default none */
  apparmorProfile: optional(text((v) => /^[A-Za-z0-9_./-]+$/.test(v) || 'must be an AppArmor profile name')),
  /** An SELinux type that allows the cgroup2 mount (e.g. uyuni_container_t). @default none */
  selinuxType: optional(matching(/^[a-z0-9_]+$/, 'must be an SELinux type such as uyuni_container_t')),
  /** systemd's log level on the console (SYSTEMD_LOG_LEVEL; tty). @default unset */
  systemdLogLevel: optional(oneOf(['emerg', 'alert', 'crit', 'err', 'warning', 'notice', 'info', 'debug'] as const)),
  /** A package mirror mounted at /mirror: an existing claim or a node path. @default none */
  mirror: optional(section({ claimName: optional(dnsSubdomain), hostPath: optional(absolutePath) })),
  /** Pod volumes added to the server pod. @default none */
  extraVolumes: defaulted(array(extraVolume), () => []),
  /** Mounts added to the server container. @default none */
  extraVolumeMounts: defaulted(array(extraVolumeMount), () => []),
});

const ingressAnnotations = section({
  ssl: optional(stringMap()),
  sslRedirect: optional(stringMap()),
  nossl: optional(stringMap()),
  exporters: optional(stringMap()),
  hub: optional(stringMap()),
});

const ingress = section({
  /** traefik: Ingresses with Traefik's annotations, Middlewares and IngressRouteTCP for salt; nginx: Ingresses for ingress-nginx; none: no Ingress. */
  type: defaulted(oneOf(['traefik', 'nginx', 'none'] as const), 'traefik'),
  /** spec.ingressClassName. @default the type's name */
  className: optional(dnsSubdomain),
  /** Extra annotations per Ingress. @default none */
  annotations: defaultedSection(ingressAnnotations),
});

const gitops = section({
  /**
   * Who creates the credential Secrets the plans need: `runtime` (uyuni-cdk run, when missing) or
   * `job`, a first-wave Job of each plan, for Argo CD and Flux (docs/gitops.md). @default runtime
   */
  credentials: defaulted(oneOf(['runtime', 'job'] as const), 'runtime'),
});

const tftp = section({
  /** Serve TFTP (69/UDP) for PXE boot from Deployment tftp. @default false, as upstream */
  enabled: defaulted(boolean(), false),
  /** Run it in the node's network instead of behind a LoadBalancer Service. @default false */
  hostNetwork: defaulted(boolean(), false),
});

const storageClassName = text((v) => v === '-' || (v.length <= 253 && DNS1123_SUBDOMAIN.test(v)) || 'must be a storage class name or "-"');

/** Backups of the server (dist/backup/, dist/restore/; docs/backup.md). */
const backup = section({
  /** The claim the backups go to, in the server's namespace. @default uyuni-backup */
  claim: defaulted(dnsSubdomain, 'uyuni-backup'),
  /** Set: dist/backup/ makes the claim with this size. Unset: the claim exists already (an NFS volume, ...) and is never changed. @default unset */
  size: optional(quantity),
  /** The claim's storage class (with size); "-" means "". @default volumes.storageClass */
  storageClass: optional(storageClassName),
  /** Complete backups kept on the claim; older ones are removed after a new one verified. @default 7 */
  keep: defaulted(integer(1, 1000), 7),
  /** How long the copy (Job uyuni-backup) may take. @default 86400 */
  timeoutSeconds: defaulted(positiveSeconds, 86400),
});

/** What dist/restore/ writes back (docs/backup.md). */
const restore = section({
  /** latest (the newest complete backup) or a backup id such as 20261201T203000Z. @default latest */
  from: defaulted(matching(/^(latest|[0-9]{8}T[0-9]{6}Z)$/, 'must be latest or a backup id such as 20261201T203000Z'), 'latest'),
  /** Replace claims that hold data and Secrets that differ from the backup's. @default false: refused */
  force: defaulted(boolean(), false),
});

/**
 * Deployment db (server-helm `db.*`). Only `podsCIDR` is offered: PostgreSQL always runs in
 * Deployment db (an external database, `db.enable: false`, is "not supported yet" upstream).
 */
const db = section({
  /**
   * The network the server's pods connect from: the database allows plain-text (non-SSL)
   * connections from it only (server-helm `db.podsCIDR`, bsc#1270038). Set it to the cluster's
   * pod network, e.g. GKE's, a multi-pool or an IPv6 one. @default 10.42.0.0/16 (RKE2's and K3s' default)
   */
  podsCIDR: defaulted(cidr, '10.42.0.0/16'),
});

export const PLAN_NAMES = ['install', 'migrate', 'migrate-prepare', 'upgrade', 'proxy', 'node-services', 'backup', 'restore'] as const;
export type PlanName = (typeof PLAN_NAMES)[number];

/** Settings that existed in earlier versions, with what replaced them. */
export const REMOVED_SETTINGS: Readonly<Record<string, string>> = {
  'db.separate': 'removed: PostgreSQL always runs in Deployment db (an external database is not supported)',
  'db.enable': 'removed: PostgreSQL always runs in Deployment db (an external database is not supported)',
  'db.internal': 'removed: PostgreSQL always runs in Deployment db (an external database is not supported)',
  'db.report': 'removed: PostgreSQL always runs in Deployment db (an external database is not supported)',
  'volumes.database': 'removed: use volumes.overrides.var-pgsql18',
  'volumes.packages': 'removed: use volumes.overrides.var-spacewalk',
  'volumes.www': 'removed: use volumes.overrides.srv-www',
  'volumes.cache': 'removed: use volumes.overrides.var-cache',
  'volumes.mirror': 'removed: use server.mirror.claimName',
  'timeouts.setupSeconds': 'removed: the server sets itself up at its first start (timeouts.serverStartSeconds)',
  'proxy.configSecret': 'removed: the proxy reads ConfigMap proxy-configmap and Secrets httpd and ssh, made from the config tarball (README: "Proxy")',
};

export const configSchema = section({
  /** The namespace of every namespaced object. */
  namespace: defaulted(dnsLabel, 'uyuni'),
  /** The server's fully qualified domain name. */
  fqdn,
  /** TZ of the server and database containers. */
  timezone: defaulted(timezone, 'Etc/UTC'),
  images: defaultedSection(images),
  volumes: defaultedSection(volumes),
  tls: defaultedSection(tls),
  server: defaultedSection(server),
  hubApi: defaultedSection(replicas),
  coco: defaultedSection(replicas),
  tftp: defaultedSection(tftp),
  db: defaultedSection(db),
  /** Open the Java debug ports (8001-8003) and their Services. */
  debugJava: defaulted(boolean(), false),
  /** The exporters (5556, 5557, 9187, 9800) and their Ingress paths. */
  monitoring: defaulted(boolean(), true),
  /** Exposure per Service name (ClusterIP unless said otherwise). */
  services: defaulted(record(text(), exposure), () => ({})),
  ingress: defaultedSection(ingress),
  gitops: defaultedSection(gitops),
  timeouts: defaultedSection(timeouts),
  migration: optional(migration),
  upgrade: optional(upgrade),
  proxy: optional(proxy),
  nodeServices: optional(nodeServices),
  /** Backups: dist/backup/ and dist/restore/ (docs/backup.md). @default none */
  backup: optional(backup),
  /** What dist/restore/ restores (with backup). @default from latest, not forced */
  restore: optional(restore),
  /** Which plans to write. @default the server flow (install, or migrate / upgrade when configured), plus proxy and node-services when configured */
  plans: optional(refine(array(oneOf(PLAN_NAMES)), 'non-empty', (v) => v.length > 0 || 'must list at least one plan')),
});

export type UyuniConfig = Infer<typeof configSchema>;
export type MigrationConfig = NonNullable<UyuniConfig['migration']>;
export type UpgradeConfig = NonNullable<UyuniConfig['upgrade']>;
export type ProxyConfig = NonNullable<UyuniConfig['proxy']>;
export type NodeServicesConfig = NonNullable<UyuniConfig['nodeServices']>;
export type NodePodConfig = NodeServicesConfig['pods'][number];
export type ExposureConfig = Infer<typeof exposure>;
export type VolumeSettings = Infer<typeof volumeSettings>;
export type BackupConfig = NonNullable<UyuniConfig['backup']>;
export type RestoreConfig = Infer<typeof restore>;
