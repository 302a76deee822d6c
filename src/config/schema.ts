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
/** What `fqdn` accepts, for the editors' schema: two or more labels, lower-case (with maxLength 253). */
export const FQDN_PATTERN = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?(\.[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)+$/;

const FQDN_ANY_CASE = new RegExp(FQDN_PATTERN.source, 'i');

/** Two or more DNS labels, at most 253 characters, any case (`fqdn` then asks for lower-case). */
export function isFqdn(value: string): boolean {
  return value.length <= 253 && FQDN_ANY_CASE.test(value);
}

const REQUIRED = 'is required';
/** The message of a string setting given something else (src/config/problems.ts adds how to quote it). */
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

/**
 * A key's description, beside its definition: the editors' schema shows it on hover and in
 * completion (src/config/json-schema.ts writes it as `description`). A copy of the struct carries
 * it, so a struct several keys share (fqdn) gets each key's own. "Default: …" names a default
 * that is no plain value (one derived from another setting, or none).
 */
function about<T, S>(description: string, struct: Struct<T, S>): Struct<T, S> {
  return Object.assign(Object.create(Object.getPrototypeOf(struct) as object) as Struct<T, S>, struct, { description });
}

/** A section: a mapping with known keys only; defaulted sections get a fresh object each time. */
const section = <S extends ObjectSchema>(schema: S) => object(schema);
const defaultedSection = <T, S>(struct: Struct<T, S>) => defaulted(struct, () => ({}));

/** A storage class name, or "-" for `storageClassName: ""`. */
const storageClassName = text((v) => v === '-' || (v.length <= 253 && DNS1123_SUBDOMAIN.test(v)) || 'must be a storage class name or "-"',
  { type: 'string', maxLength: 253, pattern: `^(-|${DNS1123_SUBDOMAIN.source.slice(1, -1)})$` });
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
}, { type: 'string', maxLength: 253, pattern: FQDN_PATTERN.source });
const quantity = matching(QUANTITY, 'must be a Kubernetes quantity such as 10Gi, 300Mi or 1Ti');
/** Image tags and registries end up in image references, never in scripts. */
const imageTag = matching(/^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/, 'must be an image tag: letters, digits, "_", "." and "-"');
const registry = matching(/^[a-z0-9]([a-z0-9.-]*[a-z0-9])?(:[0-9]+)?(\/[a-z0-9]([a-z0-9._-]*[a-z0-9])?)*$/,
  'must be a registry path such as registry.opensuse.org/uyuni');
const timezone = matching(/^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/, 'must be a tz database name such as Etc/UTC or Europe/Berlin');
const positiveSeconds = integer(1, Number.MAX_SAFE_INTEGER, 'must be a whole number of seconds, at least 1');
const duration = matching(/^(?=.)([0-9]+h)?([0-9]+m)?([0-9]+s)?$/, 'must be a Go duration such as 8760h or 720h0m0s');
const absolutePath = text((v) => v.startsWith('/') || 'must be an absolute path', { type: 'string', pattern: '^/' });
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
/** A moment with its zone (RFC 3339), e.g. 2026-12-03T11:00:00Z: what recovery_target_time gets. */
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?(Z|[+-]\d{2}:\d{2})$/;
const instant = text((v) => (RFC3339.test(v) && !Number.isNaN(Date.parse(v))) || 'must be a time with its zone, such as 2026-12-03T11:00:00Z or 2026-12-03T12:00:00+01:00',
  { type: 'string', pattern: RFC3339.source });

// --- sections -----------------------------------------------------------------------------

const stringMap = () => record(text(), text());

/** A claim's settings (the chart's `volumes.<claim>`). */
const volumeSettings = section({
  size: about("The claim's size. Default: the claim table's size.", optional(quantity)),
  storageClass: about('The claim\'s storage class; "-" means `storageClassName: ""` (no dynamic provisioning). Default: volumes.storageClass.', optional(storageClassName)),
  labels: about('Extra labels of the claim. Default: none.', optional(stringMap())),
  annotations: about('Annotations of the claim. Default: none.', optional(stringMap())),
  volumeName: about('Bind to this PersistentVolume. Default: none.', optional(dnsSubdomain)),
  selector: about('A label selector for the PersistentVolume (matchLabels / matchExpressions). Default: none.', optional(type({}))),
});

/** A claim of the claim table (src/model/volumes.ts), checked as a key beside its settings' values. */
const CLAIMS = KNOWN_VOLUMES.map((v) => v.name);
const claimName = text((v) => {
  if (CLAIMS.includes(v)) return true;
  const hint = didYouMean(v, CLAIMS);
  return `no such claim${hint ? `; ${hint}` : ''} (known: ${CLAIMS.join(', ')})`;
});

const volumes = section({
  storageClass: about('The storage class of every claim without its own; "-" means "". Default: the cluster\'s default class.', optional(storageClassName)),
  overrides: about('Per-claim settings by claim name (var-spacewalk, var-pgsql18, srv-www, ...).', defaulted(record(claimName, volumeSettings), () => ({}))),
});

const imageOverride = section({
  image: about('Replaces `<registry>/<name>` for this component.', optional(matching(/^[a-z0-9]([a-z0-9._/:-]*[a-z0-9])?$/, 'must be an image reference without tag, such as registry.example.org/uyuni/server'))),
  tag: about('Replaces images.tag for this component.', optional(imageTag)),
  digest: about('Pins the image by digest: `<image>@<digest>` instead of `<image>:<tag>` (a restore names the digests its backup was taken with, fact record_image_diff). Default: none.', optional(matching(/^sha256:[0-9a-f]{64}$/, 'must be sha256: and 64 lower-case hex digits'))),
});

const images = section({
  registry: about('The registry path of every image: images are <registry>/<name>:<tag>.', defaulted(registry, 'registry.opensuse.org/uyuni')),
  tag: about('The image generation: the tag of every image. Quote it ("2026.08"): YAML reads 2026.10 as a number.', defaulted(imageTag, '2026.08')),
  pullPolicy: about('The imagePullPolicy of every container.', defaulted(oneOf(['Always', 'IfNotPresent', 'Never'] as const), 'IfNotPresent')),
  pullSecret: about('A dockerconfigjson Secret referenced in imagePullSecrets.', optional(dnsSubdomain)),
  components: about('Per-component image and tag. Default: `<registry>/<name>:<tag>`.', defaulted(section({
    server: about('The server image (server).', optional(imageOverride)),
    db: about('The database image (server-postgresql).', optional(imageOverride)),
    hubApi: about('The Hub XML-RPC API image (server-hub-xmlrpc-api).', optional(imageOverride)),
    coco: about('The confidential computing attestation image (server-attestation).', optional(imageOverride)),
    tftp: about('The TFTP image (shared-tftpd).', optional(imageOverride)),
    dbMigration: about('The database migration image (server-database-migration: pg_upgrade).', optional(imageOverride)),
  }), () => ({}))),
});

const caSubject = section({
  country: about('The country (C) of the generated CA and of db-cert: two upper-case letters.', defaulted(matching(/^[A-Z]{2}$/, 'must be a two-letter country code such as DE'), 'DE')),
  state: about('The state or province (ST) of the certificates\' subject.', defaulted(text(), 'Bayern')),
  city: about('The locality (L) of the certificates\' subject.', defaulted(text(), 'Nuernberg')),
  organization: about('The organization (O) of the certificates\' subject.', defaulted(text(), 'Uyuni')),
  organizationalUnit: about('The organizational unit (OU) of the certificates\' subject.', defaulted(text(), 'Uyuni')),
  email: about('The e-mail address of the certificates\' subject. Default: none.', optional(email)),
});

const tls = section({
  mode: about('generated: cert-manager makes a CA and the certificates. third-party: the user provides Secrets uyuni-cert and db-cert (tls.crt, tls.key, ca.crt). migrated: the user provides Secret uyuni-ca with the old CA (decrypted key); cert-manager issues from it.', defaulted(oneOf(['generated', 'third-party', 'migrated'] as const), 'generated')),
  ca: about('The subject of the generated CA and of the database certificate.', defaultedSection(caSubject)),
  duration: about('Certificate lifetime.', defaulted(duration, '8760h')),
  renewBefore: about('Renew this long before expiry.', defaulted(duration, '720h')),
  caDuration: about('CA lifetime (generated mode).', defaulted(duration, '87600h')),
});

const exposure = section({
  type: about('The Service type.', defaulted(oneOf(['ClusterIP', 'LoadBalancer', 'NodePort'] as const), 'ClusterIP')),
  nodePorts: about("NodePort only: node port per port name. Default: the chart's node ports.", optional(record(text(), integer(30000, 32767, 'must be in the node port range 30000-32767')))),
  annotations: about("Annotations of the Service (e.g. MetalLB's metallb.universe.tf/allow-shared-ip). Default: none.", optional(stringMap())),
  loadBalancerIP: about('LoadBalancer only: the address to ask for. Default: assigned by the load balancer.', optional(matching(/^[0-9a-fA-F.:]+$/, 'must be an IP address'))),
});

const replicas = section({ replicas: about('How many pods run (0: none, the Deployment is not written).', defaulted(integer(0, 10), 0)) });

const MIGRATION_PG = [14, 16];
const UPGRADE_PG = [14, 16, PG_MAJOR];
const pgVersion = (allowed: number[], what: string) => typed('integer', isNumber, 'must be a number',
  (v) => allowed.includes(v) || `must be ${what}: ${allowed.join(', ')}`, { enum: allowed });
/** The images' PostgreSQL: `to` can only be that. */
const pgTarget = defaulted(pgVersion([PG_MAJOR], `the PostgreSQL of the current server-postgresql image`), PG_MAJOR);

/** A user name for ssh: no spaces, no shell metacharacters. */
const sshUser = matching(/^[a-z_][a-z0-9_.-]{0,31}$/, 'must be a POSIX user name (lower-case letters, digits, "_", "-", "."; no spaces)');

const migration = section({
  source: about('The old server, reached over ssh from the migration\'s Jobs.', section({
    fqdn: about('The old server\'s fully qualified domain name: its clients keep using it.', fqdn),
    user: about('Logs in over ssh and runs rsync through sudo.', defaulted(sshUser, 'root')),
    port: about('The old server\'s ssh port.', defaulted(integer(1, 65535), 22)),
  })),
  postgresql: about('The PostgreSQL major versions of the migration.', section({
    from: about('The old server\'s PostgreSQL major version.', pgVersion(MIGRATION_PG, 'a PostgreSQL major version the migration image upgrades from')),
    to: about('The PostgreSQL of the images (only that).', pgTarget),
  })),
  keepMigrationData: about('Keep the migration-data PVC (it holds the CA key and the DB password) after the migration.', defaulted(boolean(), false)),
});

const upgrade = section({
  postgresql: about('The PostgreSQL major versions of the upgrade.', section({
    from: about("The running database's version: 14 or 16 (claim var-pgsql, upgraded into var-pgsql18), or 18 (var-pgsql18 already).", pgVersion(UPGRADE_PG, 'the PostgreSQL major version of the running database')),
    to: about('The PostgreSQL of the images (only that).', pgTarget),
  })),
  rootClaim: about('The install has the `root` claim of servers before 5.2.5, whose /root/.MANAGER_SETUP_COMPLETE the upgrade moves to /var/spacewalk (the current Deployment mounts no /root). Default: true when postgresql.from is below 18 (those installs), else false.', optional(boolean())),
  ca: about("The CA of a tls.mode generated install: keep (adopt the CA the running server's uyuni-cert was issued by, wherever it lives: the chart's ClusterIssuer uyuni-issuer, mgradm's Issuer uyuni-ca-issuer; every client keeps trusting the server) or new (mint a new CA in the namespace: every minion and proxy must then be given it). Default: keep.", defaulted(oneOf(['keep', 'new'] as const), 'keep')),
});

const nonEmpty = text((v) => v.length > 0 || 'must not be empty', { type: 'string', minLength: 1 });

/** A tuning file's content: configuration lines, written as they are. */
const tuningText = text();

const proxy = section({
  namespace: about('The namespace of the proxy\'s objects.', defaulted(dnsLabel, 'uyuni-proxy')),
  fqdn: about('The proxy\'s fully qualified domain name (its certificate names it).', fqdn),
  cache: about('The squid cache claim squid-cache (proxy-helm `volumes.squid`). Upstream sizes it from `max_cache_size_mb` of config.yaml, which synth does not read: size it here. Default: 10Gi, class volumes.storageClass.', defaultedSection(volumeSettings)),
  tls: about('The proxy\'s certificate.', defaultedSection(section({
    issuer: about("Issue the proxy's certificate from the server's Issuer uyuni-issuer (the proxy runs in the server's cluster): Certificate <proxy.namespace>-proxy-cert in the server's namespace, whose Secret the user copies as proxy-cert. Default: false: the user creates Secret proxy-cert.", defaulted(boolean(), false)),
  }))),
  tuning: about('Lines added to the configuration of squid, sshd and Apache (proxy-helm `squid.tuning`, `ssh.tuning`, `httpd.tuning`). Default: none.', defaultedSection(section({
    squid: about('Lines added to squid.conf.', optional(tuningText)),
    ssh: about('Lines added to sshd_config.', optional(tuningText)),
    apache: about('Lines added to Apache\'s configuration.', optional(tuningText)),
  }))),
  tftp: about('The proxy\'s TFTP server.', defaultedSection(section({
    hostNetwork: about("Run Deployment uyuni-proxy-tftp in the node's network instead of behind the tftp LoadBalancer Service. Default: false.", defaulted(boolean(), false)),
  }))),
  ingress: about("The proxy through the cluster's Traefik (proxy-helm `ingress.type: traefik`): IngressRouteTCPs for ssh and salt on Traefik's entry points ssh, salt-publish, salt-request (not for a NodePort Service) and the plain-HTTP Ingress of the proxy's FQDN. Default: type none: no route.", defaultedSection(section({
    type: about('traefik: the routes above; none: no route.', defaulted(oneOf(['none', 'traefik'] as const), 'none')),
    className: about('spec.ingressClassName of the Ingress. Default: traefik.', optional(nonEmpty)),
  }))),
  dnsConfig: about('The proxy pod\'s DNS settings (proxy-helm `dnsConfig`: nameservers, searches, options with string values), e.g. options [{name: ndots, value: "1"}] so the server\'s FQDN is not tried with every search domain. Default: none.', optional(section({
    nameservers: about('Name server addresses, before the cluster\'s.', optional(array(nonEmpty))),
    searches: about('DNS search domains, before the cluster\'s.', optional(array(nonEmpty))),
    options: about('resolv.conf options, e.g. {name: ndots, value: "1"}.', optional(array(section({
      name: about('The option\'s name (ndots, timeout, ...).', nonEmpty),
      value: about('Its value, a string. Default: none.', optional(text())),
    })))),
  }))),
  services: about('Exposure per proxy Service name (web, salt, ssh); ClusterIP unless said otherwise. tftp is always a LoadBalancer.', defaulted(record(text(), exposure), () => ({}))),
});


/** A container of a node pod (the subset of the Pod API the agent renders into a unit). */
const nodeContainer = section({
  name: about('The container\'s name: part of its unit\'s name.', dnsLabel),
  image: about('<name>:<tag>: the package directory <nodeServices.packageDir>/<name>-<tag>/ the agent runs it from.', nonEmpty),
  command: about('The executable and its arguments; a relative command[0] resolves under the package. Default: none.', defaulted(array(text()), () => [])),
  args: about('Arguments after command. Default: none.', defaulted(array(text()), () => [])),
  env: about('Environment variables of the unit. Default: none.', defaulted(array(section({
    name: about('The variable\'s name.', nonEmpty),
    value: about('Its value.', defaulted(text(), '')),
  })), () => [])),
});

const nodePod = section({
  name: about('The Pod\'s name.', dnsSubdomain),
  namespace: about('The Pod\'s namespace.', defaulted(dnsLabel, 'default')),
  nodeName: about('The systemd-backed node it runs on.', dnsSubdomain),
  restartPolicy: about('When systemd restarts its containers (Restart= of their units).', defaulted(oneOf(['Always', 'OnFailure', 'Never'] as const), 'Always')),
  terminationGracePeriodSeconds: about('Seconds a stop may take before the processes are killed (TimeoutStopSec=). Default: 30.', optional(integer(0, Number.MAX_SAFE_INTEGER))),
  initContainers: about('Containers run one after another, to completion, before the others. Default: none.', defaulted(array(nodeContainer), () => [])),
  containers: about('The Pod\'s containers, each a systemd unit.', refine(array(nodeContainer), 'non-empty', (v) => v.length > 0 || 'must list at least one container')),
});

const nodeServices = section({
  packageDir: about('Where the agent unpacks packages; a relative command[0] resolves under it.', defaulted(absolutePath, DEFAULT_PACKAGE_DIR)),
  kubeconfig: about('The kubeconfig path written into units as KUBECONFIG.', defaulted(absolutePath, '/root/.kube/config')),
  agentExecutable: about("The `uyuni-cdk` executable the agent's unit (dist/agent/) runs: the npm install, or the self-contained agent.", defaulted(absolutePath, DEFAULT_AGENT_EXECUTABLE)),
  pods: about('The Pods that run as systemd services on systemd-backed nodes (dist/node-services/). Default: none.', defaulted(array(nodePod), () => [])),
});

const timeouts = section({
  defaultStepSeconds: about('Any step without its own timeout.', defaulted(positiveSeconds, 600)),
  serverStartSeconds: about("The server's rollout: the first start sets the server up (the chart's startup probe allows 10 h).", defaulted(refine(positiveSeconds, 'startup-probe', (v) => v >= 36000
    || 'must be at least 36000 (10 h): the server\'s startup probe allows its first start that long'), 36000)),
  dbStartSeconds: about('The db rollout (after an upgrade its start runs the upgrade hooks).', defaulted(positiveSeconds, 3600)),
  dataSyncSeconds: about("Copying the old server's data.", defaulted(positiveSeconds, 86400)),
  dbUpgradeSeconds: about('The PostgreSQL major upgrade (a copy: proportional to the database size).', defaulted(positiveSeconds, 21600)),
  dbFinalizeSeconds: about('REINDEX and database checks: can run for hours on a large database.', defaulted(positiveSeconds, 86400)),
  deadlineSeconds: about('The whole run.', defaulted(positiveSeconds, 7 * 86400)),
});

/** A pod volume or mount passed through to the server pod (only its name and path are checked). */
const extraVolume = type({ name: about('The volume\'s name; the rest is a Kubernetes pod volume, passed through.', dnsLabel) });
const extraVolumeMount = type({
  name: about('The name of the volume to mount; the rest is a Kubernetes volume mount, passed through.', dnsLabel),
  mountPath: about('Where in the server container.', absolutePath),
});

const server = section({
  email: about('MANAGER_ADMIN_EMAIL and MANAGER_MAIL_FROM (ConfigMap uyuni-config key email). Default: root@<fqdn>.', optional(email)),
  sccSecret: about('A basic-auth Secret with the SUSE Customer Center credentials (SCC_USER / SCC_PASS). Default: none.', optional(dnsSubdomain)),
  superPrivileged: about('SELinux type spc_t and AppArmor Unconfined: mounting cgroup2 works anywhere (unsafe). Default: false.', defaulted(boolean(), false)),
  apparmorProfile: about('A Localhost AppArmor profile that allows the cgroup2 mount (e.g. k8s-systemd-uyuni). Default: none.', optional(matching(/^[A-Za-z0-9_./-]+$/, 'must be an AppArmor profile name'))),
  selinuxType: about('An SELinux type that allows the cgroup2 mount (e.g. uyuni_container_t). Default: none.', optional(matching(/^[a-z0-9_]+$/, 'must be an SELinux type such as uyuni_container_t'))),
  systemdLogLevel: about("systemd's log level on the console (SYSTEMD_LOG_LEVEL; tty). Default: unset.", optional(oneOf(['emerg', 'alert', 'crit', 'err', 'warning', 'notice', 'info', 'debug'] as const))),
  mirror: about('A package mirror mounted at /mirror: an existing claim or a node path. Default: none.', optional(section({
    claimName: about('An existing claim holding the mirror (exactly one of claimName, hostPath).', optional(dnsSubdomain)),
    hostPath: about('A node path holding the mirror (exactly one of claimName, hostPath).', optional(absolutePath)),
  }))),
  extraVolumes: about('Pod volumes added to the server pod. Default: none.', defaulted(array(extraVolume), () => [])),
  extraVolumeMounts: about('Mounts added to the server container. Default: none.', defaulted(array(extraVolumeMount), () => [])),
});

const ingressAnnotations = section({
  ssl: about('Of the HTTPS Ingress uyuni-ingress-ssl.', optional(stringMap())),
  sslRedirect: about('Of the Ingress uyuni-ingress-ssl-redirect (HTTP to HTTPS).', optional(stringMap())),
  nossl: about('Of the plain-HTTP Ingress uyuni-ingress-nossl (paths clients reach without TLS).', optional(stringMap())),
  exporters: about('Of the Ingress exporters-ingress-ssl (the exporter paths, with monitoring).', optional(stringMap())),
  hub: about('Of the Ingress hubapi-ingress-ssl (the Hub XML-RPC API, with hubApi).', optional(stringMap())),
});

const ingress = section({
  type: about("traefik: Ingresses with Traefik's annotations, Middlewares and IngressRouteTCP for salt; nginx: Ingresses for ingress-nginx; none: no Ingress.", defaulted(oneOf(['traefik', 'nginx', 'none'] as const), 'traefik')),
  className: about("spec.ingressClassName. Default: the type's name.", optional(dnsSubdomain)),
  annotations: about('Extra annotations per Ingress. Default: none.', defaultedSection(ingressAnnotations)),
});

const gitops = section({
  credentials: about('Who creates the credential Secrets the plans need: `runtime` (uyuni-cdk run, when missing) or `job`, a first-wave Job of each plan, for Argo CD and Flux (docs/gitops.md). Default: runtime.', defaulted(oneOf(['runtime', 'job'] as const), 'runtime')),
});

const tftp = section({
  enabled: about('Serve TFTP (69/UDP) for PXE boot from Deployment tftp. Default: false, as upstream.', defaulted(boolean(), false)),
  hostNetwork: about("Run it in the node's network instead of behind a LoadBalancer Service. Default: false.", defaulted(boolean(), false)),
});


/** Backups of the server (dist/backup/, dist/restore/; docs/backup.md). */
const backup = section({
  claim: about("The claim the backups go to, in the server's namespace. Default: uyuni-backup.", defaulted(dnsSubdomain, 'uyuni-backup')),
  size: about('Set: dist/backup/ makes the claim with this size. Unset: the claim exists already (an NFS volume, ...) and is never changed. Default: unset.', optional(quantity)),
  storageClass: about('The claim\'s storage class (with size); "-" means "". Default: volumes.storageClass.', optional(storageClassName)),
  keep: about('Complete backups kept on the claim; older ones are removed after a new one verified. Default: 7.', defaulted(integer(1, 1000), 7)),
  timeoutSeconds: about('How long the copy (Job uyuni-backup) may take. Default: 86400.', defaulted(positiveSeconds, 86400)),
});

/** What dist/restore/ writes back (docs/backup.md). */
const restore = section({
  from: about('latest (the newest complete backup) or a backup id such as 20261201T203000Z. Default: latest.', defaulted(matching(/^(latest|[0-9]{8}T[0-9]{6}Z)$/, 'must be latest or a backup id such as 20261201T203000Z'), 'latest')),
  force: about("Replace claims that hold data and Secrets that differ from the backup's. Default: false: refused.", defaulted(boolean(), false)),
  allowNewerImages: about("Restore with the configured images although they are not the ones the backup recorded (by digest); a release older than the backup's is refused still. Default: false: refused.", defaulted(boolean(), false)),
  allowConfigChanges: about('Restore although this configuration differs from the one the backup recorded (the differences are listed, fact record_config_diff). Default: false: refused.', defaulted(boolean(), false)),
  allowMissingRecord: about('Restore a backup that has no record of what it was taken with (made before backups recorded it) with this configuration and its images. Default: false: refused.', defaulted(boolean(), false)),
});

/**
 * A CA rotation in two phases (dist/ssl-addca/, dist/ssl-rotate/; docs/ca-rotation.md), as
 * uyuni-tools' `mgradm ssl addca` and `mgradm ssl rotate` (c46f1238).
 */
const caRotation = section({
  ca: about('Where the new root CA comes from. generated: cert-manager makes a new self-signed root (Certificate uyuni-ca-next). secret: the Secret named by caRotation.secret holds it (a third-party CA). Default: generated.', defaulted(oneOf(['generated', 'secret'] as const), 'generated')),
  secret: about("With ca: secret, the new CA's Secret in the server's namespace: ca.crt; with tls.mode generated or migrated also tls.crt and tls.key (cert-manager issues the server's certificates from it). Default: none.", optional(dnsSubdomain)),
  emergency: about('Replace the CA at once, without an overlap (a compromised CA): dist/ssl-rotate/ makes the new CA and switches to it, and every client breaks until it is given the new CA. Default: false.', defaulted(boolean(), false)),
  force: about('Let dist/ssl-rotate/ run although dist/ssl-addca/ has not run for this CA, or although a proxy does not trust the new CA yet. Default: false: refused.', defaulted(boolean(), false)),
});

/**
 * Deployment db (server-helm `db.*`). Only `podsCIDR` is offered: PostgreSQL always runs in
 * Deployment db (an external database, `db.enable: false`, is "not supported yet" upstream).
 */
const archiving = section({
  enabled: about("Continuous archiving: PostgreSQL copies every finished WAL segment to a claim of its own, `var-pgsql-walbackup` (upstream's `mgradm backup db enable`, whose volume name it keeps), for a point-in-time restore from a base backup (docs/backup.md, \"Continuous archiving\"). Written into postgresql.conf at each start of the db pod; on a new database from its second start on. Default: false.", defaulted(boolean(), false)),
  size: about("The size of the WAL archive claim `var-pgsql-walbackup`. Default: 50Gi (upstream's).", defaulted(quantity, '50Gi')),
  restoreTo: about('The time plan db-pitr restores the database to (a point-in-time restore from the newest base backup before it and the archived WAL; it replaces the database: docs/backup.md, "Point-in-time restore"). synth writes dist/db-pitr only when it is set. Default: none.', optional(instant)),
});

const db = section({
  // Optional, not defaulted: a configuration without it is the one backups recorded before it existed.
  archiving: about('Continuous archiving of the database\'s WAL to a claim of its own. Default: off.', optional(archiving)),
  podsCIDR: about("The network the server's pods connect from: the database allows plain-text (non-SSL) connections from it only (server-helm `db.podsCIDR`, bsc#1270038). Set it to the cluster's pod network, e.g. GKE's, a multi-pool or an IPv6 one. Default: 10.42.0.0/16 (RKE2's and K3s' default).", defaulted(cidr, '10.42.0.0/16')),
});

export const PLAN_NAMES = ['install', 'migrate', 'migrate-prepare', 'upgrade', 'proxy', 'node-services', 'backup', 'restore', 'ssl-addca', 'ssl-rotate', 'db-basebackup', 'db-pitr'] as const;
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
  namespace: about('The namespace of every namespaced object.', defaulted(dnsLabel, 'uyuni')),
  fqdn: about('The server\'s fully qualified domain name, lower-case: UYUNI_HOSTNAME, its certificates, the Ingress host.', fqdn),
  timezone: about('TZ of the server and database containers.', defaulted(timezone, 'Etc/UTC')),
  images: about('Where the images come from and which generation.', defaultedSection(images)),
  volumes: about('The PersistentVolumeClaims: storage class, and size and more per claim.', defaultedSection(volumes)),
  tls: about('Where the certificates come from: generated by cert-manager, third-party, or the migrated CA.', defaultedSection(tls)),
  server: about('The server pod: e-mail, SCC credentials, confinement, mirror, extra volumes.', defaultedSection(server)),
  hubApi: about('The Hub XML-RPC API: Deployment uyuni-hub-xmlrpc, Service hub-xmlrpc (2830), path /hub/rpc/api.', defaultedSection(replicas)),
  coco: about('The confidential computing attestation: Deployment uyuni-coco-attestation.', defaultedSection(replicas)),
  tftp: about('TFTP for PXE boot: Deployment tftp.', defaultedSection(tftp)),
  db: about('Deployment db, PostgreSQL.', defaultedSection(db)),
  debugJava: about('Open the Java debug ports (8001-8003) and their Services.', defaulted(boolean(), false)),
  monitoring: about('The exporters (5556, 5557, 9187, 9800) and their Ingress paths.', defaulted(boolean(), true)),
  services: about('Exposure per Service name (ClusterIP unless said otherwise).', defaulted(record(text(), exposure), () => ({}))),
  ingress: about('The Ingresses and routes of the server\'s web and salt ports.', defaultedSection(ingress)),
  gitops: about('Plans for Argo CD and Flux (docs/gitops.md).', defaultedSection(gitops)),
  timeouts: about('How long uyuni-cdk run waits for each step, and for the whole run.', defaultedSection(timeouts)),
  migration: about('A migration from an old host: dist/migrate/ and dist/migrate-prepare/. Default: none.', optional(migration)),
  upgrade: about('An upgrade of a running server to these images: dist/upgrade/. Default: none.', optional(upgrade)),
  proxy: about('A proxy attached to this server: dist/proxy/. Default: none.', optional(proxy)),
  nodeServices: about('Pods that run as systemd services on systemd-backed nodes: dist/node-services/ and dist/agent/ (docs/agent.md). Default: none.', optional(nodeServices)),
  backup: about('Backups: dist/backup/ and dist/restore/ (docs/backup.md). Default: none.', optional(backup)),
  restore: about('What dist/restore/ restores (with backup). Default: from latest, not forced.', optional(restore)),
  caRotation: about('A rotation of the server\'s CA: dist/ssl-addca/ (phase 1: clients learn the new CA) and dist/ssl-rotate/ (phase 2: the server switches to it; docs/ca-rotation.md); dist/install/ is then the server on the new CA. Default: none.', optional(caRotation)),
  plans: about('Which plans to write. Default: the server flow (install, or migrate / upgrade when configured), plus proxy and node-services when configured.', optional(refine(array(oneOf(PLAN_NAMES)), 'non-empty', (v) => v.length > 0 || 'must list at least one plan'))),
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
export type CaRotationConfig = NonNullable<UyuniConfig['caRotation']>;
