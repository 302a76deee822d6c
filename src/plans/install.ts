import type { UyuniConfig } from '../config/schema';
import { Claims } from '../constructs/claims';
import { CocoDeployment } from '../constructs/coco-deployment';
import { DbDeployment } from '../constructs/db-deployment';
import { HubApiDeployment } from '../constructs/hub-api-deployment';
import { UyuniNamespace } from '../constructs/namespace';
import { ServerDeployment } from '../constructs/server-deployment';
import { ServicesPerPort } from '../constructs/services-per-port';
import { TftpDeployment } from '../constructs/tftp-deployment';
import { TraefikRoutes } from '../constructs/traefik-routes';
import { UyuniConfigMap, UYUNI_CONFIG } from '../constructs/uyuni-config-map';
import { UyuniIngresses } from '../constructs/uyuni-ingresses';
import { CaMadeBy, tlsRequirements, UyuniTls } from '../constructs/uyuni-tls';
import { CREDENTIALS, credentialRequirement, sccCredentials, userCredentialRequirement } from '../model/credentials';
import { commonLabels } from '../model/labels';
import { TLS_NAMES } from '../model/tls';
import { containerPorts } from '../model/ports';
import { INSTALL_VOLUMES, VolumeSpec, WAL_ARCHIVE_VOLUME } from '../model/volumes';
import type { ServerPodProps } from '../constructs/server-pod';
import type { Action, PlanFlow, PlanNotes, Requirement, ServerIdentity } from '../plan/types';
import { configTimeouts, PlanApp } from './plan-app';
import {
  adminEmail, claimOf, imageOf, serverPodProps, serverServicesOf,
} from './server-props';
import { serverNotes } from './notes';

/**
 * The step builders of the server, shared by the install, migrate and upgrade plans: each flow
 * reuses these instead of copying them.
 */

/**
 * The Secret of the CA a configuration with a `caRotation` section rotates to (docs/ca-rotation.md):
 * the server's CA once phase 2 ran. @default none: the CA of Secret uyuni-ca
 */
export function rotatedCaSecret(config: UyuniConfig): string | undefined {
  const r = config.caRotation;
  if (!r) return undefined;
  return r.ca === 'secret' ? r.secret! : TLS_NAMES.nextCa;
}

/**
 * Who the server is, as the runtime records and checks it (docs/runtime.md, "Safety"); with a
 * `caRotation` section, on the CA it rotates to.
 */
export function serverIdentity(config: UyuniConfig): ServerIdentity {
  const image = imageOf(config, 'server').image;
  const at = image.lastIndexOf(':');
  const tagged = at > image.lastIndexOf('/');
  const caSecret = rotatedCaSecret(config);
  return {
    fqdn: config.fqdn, product: tagged ? image.slice(0, at) : image, imageGeneration: tagged ? image.slice(at + 1) : 'latest', tlsMode: config.tls.mode,
    ...(caSecret ? { caSecret } : {}),
  };
}

/**
 * `makes`: the plan brings up the server (its identity is recorded), finishes this flow, and
 * ends with these notes (src/plans/notes.ts).
 */
export function serverPlan(config: UyuniConfig, name: string, description: string, makes?: { flow?: PlanFlow; notes?: PlanNotes }): PlanApp {
  return new PlanApp({
    name,
    description,
    namespace: config.namespace,
    partOf: 'uyuni',
    ...configTimeouts(config),
    ...(makes ? { identity: serverIdentity(config), ...(makes.flow ? { flow: makes.flow } : {}), ...(makes.notes ? { notes: makes.notes } : {}) } : {}),
  });
}

export function addNamespaceStep(plan: PlanApp, config: UyuniConfig): void {
  plan.addStep('namespace', { description: `namespace ${config.namespace}` }, (chart) => {
    new UyuniNamespace(chart, 'Namespace', { name: config.namespace });
  });
}

/** The install's claims: the table's, and the WAL archive's when `db.archiving` is enabled (its size from there). */
export function installVolumes(config: UyuniConfig, base: readonly VolumeSpec[] = INSTALL_VOLUMES): readonly VolumeSpec[] {
  const { archiving } = config.db;
  return archiving?.enabled ? [...base, { ...WAL_ARCHIVE_VOLUME, size: archiving.size }] : base;
}

/** The claims of the table (`volumes` of a flow: the install's, or only those a flow adds). */
export function addVolumesStep(plan: PlanApp, config: UyuniConfig, volumes: readonly VolumeSpec[] = installVolumes(config)): void {
  const names = volumes.length <= 3 ? ` (${volumes.map((v) => v.name).join(', ')})` : '';
  plan.addStep('volumes', { description: `${volumes.length} persistent volume claim${volumes.length === 1 ? '' : 's'}${names}` }, (chart) => {
    new Claims(chart, 'Claims', { namespace: config.namespace, claims: volumes.map((v) => claimOf(config, v)) });
  });
}

/**
 * `caMadeBy`: the step and Job that make a migrated CA's Secret (its requirement's `madeBy`, and
 * named in the message when it is missing);
 * `actions`: run before the objects are applied (an upgrade that mints a new CA deletes the old Issuer).
 */
export function addTlsStep(plan: PlanApp, config: UyuniConfig, caMadeBy?: CaMadeBy, actions: readonly Action[] = [], leafIssuer?: string): void {
  const { tls } = config;
  plan.addStep('tls', {
    description: `TLS (${tls.mode})`,
    requires: tlsRequirements(tls.mode, config.fqdn, config.namespace, caMadeBy),
    ...(actions.length ? { actions: [...actions] } : {}),
  }, (chart) => {
    new UyuniTls(chart, 'Tls', {
      namespace: config.namespace,
      mode: tls.mode,
      fqdn: config.fqdn,
      subject: tls.ca,
      duration: tls.duration,
      renewBefore: tls.renewBefore,
      caDuration: tls.caDuration,
      ...(leafIssuer ? { leafIssuer } : {}),
    });
  });
}

export function addServicesStep(plan: PlanApp, config: UyuniConfig): void {
  const services = serverServicesOf(config);
  plan.addStep('services', { description: `Services ${services.map((s) => s.name).join(', ')}, ConfigMap ${UYUNI_CONFIG.name}` }, (chart) => {
    new ServicesPerPort(chart, 'Services', { namespace: config.namespace, services, exposure: config.services });
    // The endpoints every server-image pod reads (db-waiter first): before the first of them.
    new UyuniConfigMap(chart, 'Config', { namespace: config.namespace, fqdn: config.fqdn, email: adminEmail(config) });
  });
}

/** The credential Secrets the database needs (the runtime makes the missing ones). */
export function databaseRequirements(config: UyuniConfig) {
  return [CREDENTIALS.dbAdmin, CREDENTIALS.db, CREDENTIALS.reportdb].map((c) => credentialRequirement(c, config.namespace));
}

/** Deployment db: PostgreSQL 18 for the product and the report database. */
export function addDatabaseStep(plan: PlanApp, config: UyuniConfig, requires = databaseRequirements(config), podAnnotations?: Readonly<Record<string, string>>): void {
  plan.addStep('database', {
    description: `Deployment ${DbDeployment.NAME} (PostgreSQL, ${imageOf(config, 'db').image})`,
    timeoutSeconds: config.timeouts.dbStartSeconds,
    requires,
  }, (chart) => {
    new DbDeployment(chart, 'Db', {
      namespace: config.namespace,
      image: imageOf(config, 'db'),
      timezone: config.timezone,
      ports: containerPorts(serverServicesOf(config), 'db'),
      podsCIDR: config.db.podsCIDR,
      archiving: config.db.archiving?.enabled ?? false,
      ...(podAnnotations ? { podAnnotations } : {}),
    });
  });
}

/** The web exposure: Traefik's Middlewares and TCP routes, then the Ingresses (none with ingress.type none). */
export function addIngressStep(plan: PlanApp, config: UyuniConfig): void {
  const { ingress } = config;
  if (ingress.type === 'none') return;
  const traefik = ingress.type === 'traefik';
  const saltRoutes = traefik && (config.services.salt?.type ?? 'ClusterIP') === 'ClusterIP';
  plan.addStep('ingress', {
    description: `Ingresses (${ingress.type})${saltRoutes ? ', IngressRouteTCP for salt' : ''}`,
  }, (chart) => {
    const labels = commonLabels('uyuni', 'network');
    const className = ingress.className ?? ingress.type;
    if (traefik) {
      new TraefikRoutes(chart, 'Traefik', { namespace: config.namespace, ingressClass: className, saltRoutes, debugJava: config.debugJava, labels });
    }
    new UyuniIngresses(chart, 'Ingresses', {
      namespace: config.namespace,
      fqdn: config.fqdn,
      flavour: ingress.type as 'traefik' | 'nginx',
      className,
      monitoring: config.monitoring,
      hubApi: config.hubApi.replicas > 0,
      annotations: ingress.annotations,
      labels,
    });
  });
}

/**
 * Deployment uyuni, plus TFTP, the hub API and attestation when configured. `trust`: a CA
 * rotation's (the new CA beside the running one, the pod annotation of its phase); `requires`:
 * more requirements of the step.
 */
export function addServerStep(
  plan: PlanApp, config: UyuniConfig, trust: Pick<ServerPodProps, 'nextCa' | 'podAnnotations'> = {}, requires: readonly Requirement[] = [],
): void {
  const ns = config.namespace;
  const extras = [
    config.tftp.enabled ? TftpDeployment.NAME : '',
    config.hubApi.replicas > 0 ? HubApiDeployment.NAME : '',
    config.coco.replicas > 0 ? CocoDeployment.NAME : '',
  ].filter(Boolean);
  const sccSecret = config.server.sccSecret;
  plan.addStep('server', {
    description: `Deployment ${ServerDeployment.NAME}${extras.length ? ` (+ ${extras.join(', ')})` : ''}: the first start sets the server up`,
    timeoutSeconds: config.timeouts.serverStartSeconds,
    requires: [
      credentialRequirement(CREDENTIALS.admin, ns),
      ...(sccSecret ? [userCredentialRequirement(sccCredentials(sccSecret), ns, 'server.sccSecret')] : []),
      ...requires,
    ],
  }, (chart) => {
    new ServerDeployment(chart, 'Server', { namespace: ns, ...serverPodProps(config), ...trust });
    const services = serverServicesOf(config);
    if (config.tftp.enabled) {
      new TftpDeployment(chart, 'Tftp', {
        namespace: ns, image: imageOf(config, 'tftp'), fqdn: config.fqdn, hostNetwork: config.tftp.hostNetwork,
      });
    }
    if (config.hubApi.replicas > 0) {
      new HubApiDeployment(chart, 'HubApi', {
        namespace: ns, image: imageOf(config, 'hubApi'), replicas: config.hubApi.replicas, timezone: config.timezone,
        ports: containerPorts(services, 'hub-xmlrpc'),
      });
    }
    if (config.coco.replicas > 0) {
      new CocoDeployment(chart, 'Coco', { namespace: ns, image: imageOf(config, 'coco'), replicas: config.coco.replicas, timezone: config.timezone });
    }
  });
}

/** The steps every flow ends with: TLS → Services → database → Ingresses → server. */
export function addDeploySteps(plan: PlanApp, config: UyuniConfig): void {
  addTlsStep(plan, config);
  addServicesStep(plan, config);
  addDatabaseStep(plan, config);
  addIngressStep(plan, config);
  addServerStep(plan, config);
}


/** The install plan: a new, empty server, set up by its own first start. */
export function installPlan(config: UyuniConfig): PlanApp {
  const plan = serverPlan(config, 'install', `Install Uyuni ${config.fqdn} into namespace ${config.namespace}`, { notes: serverNotes(config) });
  addNamespaceStep(plan, config);
  addVolumesStep(plan, config);
  addDeploySteps(plan, config);
  return plan;
}
