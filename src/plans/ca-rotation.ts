/**
 * A CA rotation in two phases, as uyuni-tools' `mgradm ssl addca` and `mgradm ssl rotate`
 * (c46f1238, mgradm/cmd/ssl/; docs/ca-rotation.md):
 *
 * - dist/ssl-addca/ (phase 1): the new root CA (a new self-signed root made by cert-manager, or
 *   the given Secret) and its Issuer; the server restarts publishing both CAs where clients fetch
 *   the CA (pub/RHN-ORG-TRUSTED-SSL-CERT, salt's certs) and trusting both for its database. The
 *   serving certificates stay as they are. Clients and proxies then take the bundle.
 * - dist/ssl-rotate/ (phase 2): uyuni-cert and db-cert are issued from the new CA (their
 *   Certificates name Issuer uyuni-issuer-next; third-party: the user's new Secrets, checked),
 *   the database and the server restart on them, and the server publishes the new CA alone. The
 *   runtime refuses it without a recorded phase 1 and while a proxy does not trust the new CA
 *   (caRotation.force lets it), and asks first (src/runtime/safety/identity.ts).
 * - caRotation.emergency: dist/ssl-rotate/ alone, making the new CA and switching at once.
 */
import type { CaRotationConfig, UyuniConfig } from '../config/schema';
import { NextCa } from '../constructs/next-ca';
import { PROXY_CONFIG } from '../constructs/proxy-config';
import { CA_ROTATION_ANNOTATION, TLS_NAMES } from '../model/tls';
import type { CaRotation, Requirement } from '../plan/types';
import {
  addDatabaseStep, addIngressStep, addNamespaceStep, addServerStep, addServicesStep, addTlsStep, addVolumesStep, rotatedCaSecret, serverIdentity,
} from './install';
import { serverNotes } from './notes';
import { configTimeouts, PlanApp } from './plan-app';


const certManaged = (config: UyuniConfig) => config.tls.mode !== 'third-party';

function rotationOf(config: UyuniConfig): CaRotationConfig {
  if (!config.caRotation) throw new Error('the CA rotation plans need a caRotation section');
  return config.caRotation;
}

/** The new CA's Secret (a configuration with a caRotation section). */
function nextCaSecret(config: UyuniConfig): string {
  return rotatedCaSecret(config)!;
}

/** `rotated`: the plan brings the server onto the new CA (its identity names it); else the server keeps the CA of Secret uyuni-ca. */
function rotationPlan(config: UyuniConfig, name: string, description: string, caRotation: CaRotation, rotated: boolean, notes = false): PlanApp {
  const { caSecret, ...kept } = serverIdentity(config);
  return new PlanApp({
    name,
    description,
    namespace: config.namespace,
    partOf: 'uyuni',
    ...configTimeouts(config),
    identity: rotated ? { ...kept, caSecret } : kept,
    caRotation,
    ...(notes ? { notes: serverNotes(config) } : {}),
  });
}

/** The given CA's Secret, which the user makes (a generated CA has none to make). */
function givenCa(config: UyuniConfig, r: CaRotationConfig): Requirement[] {
  if (r.ca !== 'secret') return [];
  const keys = certManaged(config) ? ['ca.crt', 'tls.crt', 'tls.key'] : ['ca.crt'];
  return [{
    kind: 'Secret', name: r.secret!, namespace: config.namespace, keys, ifMissing: 'fail',
    message: `caRotation.secret: the new CA: kubectl -n ${config.namespace} create secret generic ${r.secret} --from-file=ca.crt=<new root CA>`
      + (certManaged(config) ? ' --from-file=tls.crt=<the CA certificate cert-manager issues from> --from-file=tls.key=<its key>' : ''),
  }];
}

/** Step ca-next: the new CA and Issuer uyuni-issuer-next (with cert-manager). Third-party: nothing to apply. */
function addNextCaStep(plan: PlanApp, config: UyuniConfig, r: CaRotationConfig): void {
  if (!certManaged(config)) return;
  plan.addStep('ca-next', {
    description: r.ca === 'secret'
      ? `the new CA of Secret ${r.secret}, Issuer ${TLS_NAMES.nextCaIssuer}`
      : `a new self-signed root CA (Certificate ${TLS_NAMES.nextCa}), Issuer ${TLS_NAMES.nextCaIssuer}`,
    requires: givenCa(config, r),
  }, (chart) => {
    new NextCa(chart, 'NextCa', {
      namespace: config.namespace, fqdn: config.fqdn, subject: config.tls.ca, caDuration: config.tls.caDuration,
      ...(r.ca === 'secret' ? { secret: r.secret } : {}),
    });
  });
}

/** Phase 1: dist/ssl-addca/. */
export function sslAddCaPlan(config: UyuniConfig): PlanApp {
  const r = rotationOf(config);
  const secret = nextCaSecret(config);
  const plan = rotationPlan(config, 'ssl-addca',
    `CA rotation, phase 1: the new CA (Secret ${secret}) joins what clients trust; the certificates of ${config.fqdn} stay`,
    { phase: 'addca', caSecret: secret }, false);
  addNextCaStep(plan, config, r);
  addServerStep(plan, config, {
    nextCa: { secret, key: 'ca.crt' },
    podAnnotations: { [CA_ROTATION_ANNOTATION]: `addca ${secret}` },
  }, certManaged(config) ? [] : givenCa(config, r));
  return plan;
}

/** What must trust the new CA before phase 2, as far as the server can tell. */
function trustedBy(config: UyuniConfig): NonNullable<CaRotation['trustedBy']> {
  return [
    ...(config.proxy ? [{
      kind: 'ConfigMap' as const, name: PROXY_CONFIG.ca, namespace: config.proxy.namespace, key: 'ca.crt',
      what: `the proxy ${config.proxy.fqdn}'s CA`,
    }] : []),
    ...(certManaged(config) ? [] : [TLS_NAMES.serverCert, TLS_NAMES.dbCert].map((name) => ({
      kind: 'Secret' as const, name, namespace: config.namespace, key: 'ca.crt',
      what: `the third-party certificate of Secret ${name} (put the one the new CA signed into it after phase 1)`,
    }))),
  ];
}

/** What phase 2 asks of the runtime (plan.json `caRotation`). */
function rotateField(config: UyuniConfig): CaRotation {
  const r = rotationOf(config);
  const checks = trustedBy(config);
  return {
    phase: 'rotate', caSecret: nextCaSecret(config),
    ...(r.emergency ? { emergency: true } : {}), ...(r.force ? { force: true } : {}),
    ...(checks.length ? { trustedBy: checks } : {}),
  };
}

/** The steps of a server on the new CA: the new CA, the certificates from it, the database and the server restarted on them (`withServices`: and the install's Services and Ingresses between). */
function addRotatedSteps(plan: PlanApp, config: UyuniConfig, withServices: boolean): void {
  const restart = { [CA_ROTATION_ANNOTATION]: `rotate ${nextCaSecret(config)}` };
  addNextCaStep(plan, config, rotationOf(config));
  if (certManaged(config)) addTlsStep(plan, config, undefined, [], TLS_NAMES.nextCaIssuer);
  if (withServices) addServicesStep(plan, config);
  addDatabaseStep(plan, config, undefined, restart);
  if (withServices) addIngressStep(plan, config);
  addServerStep(plan, config, { podAnnotations: restart });
}

/** Phase 2, or both at once with caRotation.emergency: dist/ssl-rotate/. */
export function sslRotatePlan(config: UyuniConfig): PlanApp {
  const r = rotationOf(config);
  const secret = nextCaSecret(config);
  const plan = rotationPlan(config, 'ssl-rotate',
    r.emergency
      ? `CA rotation, EMERGENCY: a new CA (Secret ${secret}) replaces the CA of ${config.fqdn} at once; every client and proxy breaks until it is given the new CA`
      : `CA rotation, phase 2: the certificates of ${config.fqdn} from the new CA (Secret ${secret}); the old CA is dropped`,
    rotateField(config), true);
  addRotatedSteps(plan, config, false);
  return plan;
}

/**
 * dist/install of a configuration with a caRotation section: the server on the rotated CA, so
 * that the install run after phase 2 keeps it (and is refused, as phase 2, before phase 1).
 */
export function rotatedInstallPlan(config: UyuniConfig): PlanApp {
  const plan = rotationPlan(config, 'install', `Install Uyuni ${config.fqdn} into namespace ${config.namespace}, on the CA of Secret ${nextCaSecret(config)} (caRotation)`,
    rotateField(config), true, true);
  addNamespaceStep(plan, config);
  addVolumesStep(plan, config);
  addRotatedSteps(plan, config, true);
  return plan;
}
