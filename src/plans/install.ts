import type { UyuniConfig } from '../config/schema';
import { CocoDeployment } from '../constructs/coco-deployment';
import { DbDeployment } from '../constructs/db-deployment';
import { HubApiDeployment } from '../constructs/hub-api-deployment';
import { UyuniNamespace } from '../constructs/namespace';
import { readScript, ScriptJob } from '../constructs/script-job';
import { ServerDeployment } from '../constructs/server-deployment';
import { ROOT_CONTAINER, ROOT_POD, serverPodParts, serverServicesOf } from '../constructs/server-pod';
import { ServerVolumes } from '../constructs/server-volumes';
import { ServicesPerPort } from '../constructs/services-per-port';
import { UyuniIngresses } from '../constructs/uyuni-ingresses';
import { tlsRequirements, UyuniTls } from '../constructs/uyuni-tls';
import { CREDENTIALS, credentialEnv, credentialRequirement, SCC_CREDENTIALS } from '../model/credentials';
import { image, IMAGES } from '../model/images';
import { RELEASE_DIR, SERVER_VOLUMES, VolumeSpec } from '../model/volumes';
import { PlanApp } from './plan-app';

/**
 * The step builders of the server, shared by the install, migrate and upgrade plans: each flow
 * reuses these instead of copying them.
 */

export function serverPlan(config: UyuniConfig, name: string, description: string): PlanApp {
  return new PlanApp({
    name,
    description,
    namespace: config.namespace,
    partOf: 'uyuni',
    defaultStepTimeoutSeconds: config.timeouts.defaultStepSeconds,
    deadlineSeconds: config.timeouts.deadlineSeconds,
  });
}

export function addNamespaceStep(plan: PlanApp, config: UyuniConfig): void {
  plan.addStep('namespace', { description: `namespace ${config.namespace}` }, (chart) => {
    new UyuniNamespace(chart, 'Namespace', { name: config.namespace });
  });
}

/** The PVCs; `extra` adds volumes of a flow (migration-data). */
export function addVolumesStep(plan: PlanApp, config: UyuniConfig, extra: readonly VolumeSpec[] = []): void {
  const volumes = [...SERVER_VOLUMES, ...extra];
  plan.addStep('volumes', { description: `${volumes.length} persistent volume claims` }, (chart) => {
    new ServerVolumes(chart, 'Volumes', { namespace: config.namespace, config, volumes });
  });
}

export function addTlsStep(plan: PlanApp, config: UyuniConfig): void {
  plan.addStep('tls', {
    description: `TLS (${config.tls.mode})`,
    requires: tlsRequirements(config, config.namespace),
  }, (chart) => {
    new UyuniTls(chart, 'Tls', { namespace: config.namespace, config });
  });
}

export function addServicesStep(plan: PlanApp, config: UyuniConfig): void {
  const services = serverServicesOf(config);
  plan.addStep('services', { description: `Services ${services.map((s) => s.name).join(', ')}` }, (chart) => {
    new ServicesPerPort(chart, 'Services', { namespace: config.namespace, services, exposure: config.services });
  });
}

/** The database credentials, and the db Deployment when PostgreSQL runs apart. */
export function addDatabaseStep(plan: PlanApp, config: UyuniConfig): void {
  const ns = config.namespace;
  const requires = [CREDENTIALS.dbAdmin, CREDENTIALS.db, CREDENTIALS.reportdb].map((c) => credentialRequirement(c, ns));
  if (config.migration && config.coco.replicas > 0) {
    // A migrated database keeps the old server's password: a generated one would lock coco out.
    const db = requires.findIndex((r) => r.name === CREDENTIALS.db.secret);
    requires[db] = {
      ...requires[db],
      ifMissing: 'fail',
      generate: undefined,
      message: `the migrated database keeps the old server's credentials, which coco needs: create Secret ${CREDENTIALS.db.secret} `
        + `from db_user and db_password in the old server's /etc/rhn/rhn.conf: kubectl -n ${ns} create secret generic ${CREDENTIALS.db.secret} `
        + '--from-literal=username=<db_user> --from-literal=password=<db_password>',
    };
  }
  plan.addStep('database', {
    description: config.db.separate ? 'database Deployment db' : 'database credentials',
    requires,
  }, (chart) => {
    if (config.db.separate) new DbDeployment(chart, 'Db', { namespace: ns, config });
  });
}

/** Job `uyuni-setup`: the server's first-time setup, on the server pod template. */
export function addSetupStep(plan: PlanApp, config: UyuniConfig): void {
  const ns = config.namespace;
  plan.addStep('setup', {
    description: 'first-time server setup (Job uyuni-setup)',
    timeoutSeconds: config.timeouts.setupSeconds,
    requires: [credentialRequirement(CREDENTIALS.admin, ns)],
  }, (chart) => {
    const parts = serverPodParts(config);
    const dbHosts = config.db.separate ? 'db reportdb' : '';
    new ScriptJob(chart, 'Setup', {
      name: 'uyuni-setup',
      namespace: ns,
      image: parts.image,
      imagePullPolicy: config.images.pullPolicy,
      imagePullSecrets: parts.imagePullSecrets,
      script: 'setup.sh',
      env: [
        ...parts.env,
        { name: 'UYUNI_FQDN', value: config.fqdn },
        { name: 'RELEASE_DIR', value: RELEASE_DIR },
        ...(config.db.separate ? [{ name: 'MANAGER_DB_HOST', value: 'db' }, { name: 'REPORT_DB_HOST', value: 'reportdb' }] : []),
        ...credentialEnv(CREDENTIALS.admin),
        ...credentialEnv(CREDENTIALS.db),
        ...credentialEnv(CREDENTIALS.reportdb),
        ...credentialEnv(SCC_CREDENTIALS, true),
      ],
      volumes: parts.volumes,
      volumeMounts: parts.mounts,
      initContainers: [
        parts.initVolumes,
        ...(config.db.separate ? [{
          name: 'wait-for-db',
          image: image(config, IMAGES.postgresql),
          imagePullPolicy: config.images.pullPolicy,
          command: ['sh', '-c', readScript('wait-for-db.sh')],
          env: [{ name: 'DB_HOSTS', value: dbHosts }],
        }] : []),
      ],
      securityContext: ROOT_CONTAINER,
      podSecurityContext: ROOT_POD,
    });
  });
}

export function addIngressStep(plan: PlanApp, config: UyuniConfig): void {
  plan.addStep('ingress', { description: 'Ingresses uyuni-ingress-ssl and uyuni-ingress-nossl' }, (chart) => {
    new UyuniIngresses(chart, 'Ingresses', { namespace: config.namespace, fqdn: config.fqdn, className: config.ingress.className });
  });
}

/** Deployment `uyuni`, plus the hub API and attestation when configured. */
export function addServerStep(plan: PlanApp, config: UyuniConfig): void {
  const extras = [config.hubApi.replicas > 0 ? 'uyuni-hub-api' : '', config.coco.replicas > 0 ? 'uyuni-coco-attestation' : ''].filter(Boolean);
  plan.addStep('server', {
    description: `Deployment uyuni${extras.length ? ` (+ ${extras.join(', ')})` : ''}`,
    timeoutSeconds: config.timeouts.serverStartSeconds,
  }, (chart) => {
    new ServerDeployment(chart, 'Server', { namespace: config.namespace, config });
    if (config.hubApi.replicas > 0) new HubApiDeployment(chart, 'HubApi', { namespace: config.namespace, config });
    if (config.coco.replicas > 0) new CocoDeployment(chart, 'Coco', { namespace: config.namespace, config });
  });
}

/**
 * The deploy steps every flow ends with: TLS → Services → database → [setup] → Ingresses →
 * server. Migrate and upgrade call this without the setup (their data is already set up).
 */
export function addDeploySteps(plan: PlanApp, config: UyuniConfig, opts: { setup: boolean }): void {
  addTlsStep(plan, config);
  addServicesStep(plan, config);
  addDatabaseStep(plan, config);
  if (opts.setup) addSetupStep(plan, config);
  addIngressStep(plan, config);
  addServerStep(plan, config);
}

/** The install plan (uyuni-server.md §6): a new, empty server. */
export function installPlan(config: UyuniConfig): PlanApp {
  const plan = serverPlan(config, 'install', `Install Uyuni ${config.fqdn} into namespace ${config.namespace}`);
  addNamespaceStep(plan, config);
  addVolumesStep(plan, config);
  addDeploySteps(plan, config, { setup: true });
  return plan;
}
