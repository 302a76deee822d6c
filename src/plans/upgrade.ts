import type { UpgradeConfig, UyuniConfig } from '../config/schema';
import { CREDENTIALS } from '../model/credentials';
import { PG_MAJOR } from '../model/db';
import { TLS_NAMES } from '../model/tls';
import { DB_VOLUME, LEGACY_ROOT_VOLUME, SETUP_MARKER } from '../model/volumes';
import type { Gate, ObjectRef, Requirement } from '../plan/types';
import {
  addDbFinalizeStep, addDbUpgradeStep, addInspectDbStep, addInspectStep, addSetupMarkerStep, flowRecord, sourceDbVolume,
  upgradeGates, upgradesPg,
} from './db-steps';
import {
  addDatabaseStep, addIngressStep, addServerStep, addServicesStep, addTlsStep, addVolumesStep, installVolumes, serverPlan,
} from './install';
import type { PlanApp } from './plan-app';
import { addStopSteps } from './stop-steps';
import { imageOf } from './server-props';

/** Whether the install has the legacy root claim (servers before 5.2.5: PostgreSQL below 18). */
export function hasRootClaim(u: UpgradeConfig): boolean {
  return u.rootClaim ?? u.postgresql.from < PG_MAJOR;
}

/** The upgrade keeps the CA the running server's certificate comes from (not for third-party certificates). */
export function keepsCa(config: UyuniConfig, u: UpgradeConfig): boolean {
  return config.tls.mode === 'generated' && u.ca === 'keep';
}

/** The gates an upgrade adds to the data's: the setup marker, and the CA it keeps. */
function upgradeOnlyGates(config: UyuniConfig, u: UpgradeConfig): Gate[] {
  const where = hasRootClaim(u) ? `${SETUP_MARKER} nor on the ${LEGACY_ROOT_VOLUME.name} claim` : SETUP_MARKER;
  return [
    {
      type: 'present', fact: 'setup_marker',
      message: `the server's data has no setup marker (not at ${where}): the new server would set itself up again on the live database `
        + `(spacewalk-setup --clear-db). ${hasRootClaim(u) ? '' : `An install made before server 5.2.5 keeps it on its ${LEGACY_ROOT_VOLUME.name} claim: set upgrade.rootClaim: true. `}`
        + 'Nothing was changed',
    },
    ...(keepsCa(config, u) ? [{
      type: 'present' as const, fact: 'ca_fingerprint',
      message: `Secret ${TLS_NAMES.serverCert} carries no CA certificate (ca.crt) to keep: the upgrade keeps the CA every client trusts. `
        + 'Set upgrade.ca: new to mint a new CA instead (every minion and proxy must then be given it)',
    }] : []),
  ];
}

/**
 * Steps `stop-server` and `stop-db` (src/plans/stop-steps.ts): the gates decide, from the
 * inspected facts, whether this upgrade may go on; then the server and its helpers stop, then the
 * database, each waited for until its pods are gone. ConfigMap uyuni-upgrade records the upgrade.
 */
export function addStopServerStep(plan: PlanApp, config: UyuniConfig, u: UpgradeConfig): void {
  const record: ObjectRef = { apiVersion: 'v1', kind: 'ConfigMap', name: 'uyuni-upgrade', namespace: config.namespace };
  addStopSteps(plan, config, {
    why: 'for the upgrade',
    gates: [...upgradeGates(config, u.postgresql, 'upgrade'), ...upgradeOnlyGates(config, u)],
    waits: [{ object: record, for: 'exists' }],
    partOf: 'uyuni',
    chart: (chart) => {
      flowRecord(chart, 'Record', config.namespace, record.name, {
        image: imageOf(config, 'server').image,
        db: imageOf(config, 'db').image,
        postgresql: `${u.postgresql.from} -> ${u.postgresql.to}`,
        ca: config.tls.mode === 'generated' ? u.ca : config.tls.mode,
      });
    },
  });
}

/**
 * The TLS step of an upgrade. Keeping the CA (the default), step `keep-tls` applies nothing of
 * cert-manager and prunes nothing of the install's step `tls`:
 * Secrets uyuni-cert and db-cert stay as their Certificates renew them, from whichever issuer made
 * them (the chart's ClusterIssuer uyuni-issuer with the CA in cert-manager's namespace, uyuni-charts
 * server-selfsigned/templates/certificates.yaml @ fbbe779; mgradm's Issuer uyuni-ca-issuer beside a
 * self-signed uyuni-issuer, uyuni-tools @ c09ccfba; or ours). They must exist. With upgrade.ca new,
 * the namespaced CA is made as for an install, after the running Issuer uyuni-issuer is deleted
 * (mgradm's is self-signed: merged with our CA Issuer, cert-manager's webhook refuses it).
 */
export function addUpgradeTlsStep(plan: PlanApp, config: UyuniConfig, u: UpgradeConfig): void {
  if (!keepsCa(config, u)) {
    const issuer: ObjectRef = { apiVersion: 'cert-manager.io/v1', kind: 'Issuer', name: TLS_NAMES.caIssuer, namespace: config.namespace };
    addTlsStep(plan, config, undefined, config.tls.mode === 'generated' ? [{ type: 'delete', object: issuer }] : []);
    return;
  }
  const ns = config.namespace;
  const secret = (name: string) => ({
    kind: 'Secret' as const, name, namespace: ns, keys: ['tls.crt', 'tls.key', 'ca.crt'], ifMissing: 'fail' as const,
    message: `the upgrade keeps the running server's CA, but Secret ${name} is missing: is namespace ${ns} the server's? `
      + '(upgrade.ca: new mints a new CA instead)',
  });
  // Not named `tls`: a plan prunes the members of the steps it has, and the install's TLS
  // objects (ours, when uyuni-cdk made the install) are members of its step `tls`.
  plan.addStep('keep-tls', {
    description: `TLS: keep the CA of the running server (Secrets ${TLS_NAMES.serverCert}, ${TLS_NAMES.dbCert} as they are)`,
    requires: [secret(TLS_NAMES.serverCert), secret(TLS_NAMES.dbCert)],
  }, (chart) => {
    flowRecord(chart, 'Record', ns, 'uyuni-tls', {
      ca: `kept: the CA of Secret ${TLS_NAMES.serverCert} (fact ca_fingerprint)`,
    });
  });
}

/**
 * The running database's roles have the passwords of the install's Secrets: an upgrade must
 * find them (a generated one would not open the database), as a migration must.
 */
export function upgradeDatabaseRequirements(config: UyuniConfig): Requirement[] {
  const ns = config.namespace;
  return [CREDENTIALS.dbAdmin, CREDENTIALS.db, CREDENTIALS.reportdb].map((c) => ({
    kind: 'Secret' as const,
    name: c.secret,
    namespace: ns,
    keys: ['username', 'password'],
    ifMissing: 'fail' as const,
    message: `the running database keeps the passwords its install gave ${c.role}: Secret ${c.secret} (keys username, password) `
      + `must be the install's; an upgrade never makes a new one. Is namespace ${ns} the server's?`,
  }));
}

/**
 * The upgrade plan (docs/flows.md): inspect the data and the new images (while the old server
 * runs, on its node) → gates, stop everything → [move the setup marker off the legacy root claim]
 * → [claim var-pgsql18, PostgreSQL major upgrade from var-pgsql, which is kept] → TLS (the
 * running CA kept) → Services → database with the new image → [db-finalize once: the image's
 * collation check and REINDEX after a major upgrade] → Ingresses → server with the new image.
 */
export function upgradePlan(config: UyuniConfig): PlanApp {
  const u = config.upgrade;
  if (!u) throw new Error('the upgrade plan needs an upgrade section');
  const pg = u.postgresql;
  const plan = serverPlan(config, 'upgrade',
    `Upgrade Uyuni ${config.fqdn} in namespace ${config.namespace} to ${imageOf(config, 'server').image} (PostgreSQL ${pg.from} → ${pg.to})`,
    { flow: { kind: 'upgrade' } });
  addInspectStep(plan, config, { setupMarker: { rootClaim: hasRootClaim(u) }, caFingerprint: keepsCa(config, u) });
  addInspectDbStep(plan, config, sourceDbVolume(pg), { nearDb: true });
  addStopServerStep(plan, config, u);
  if (hasRootClaim(u)) addSetupMarkerStep(plan, config);
  // Only the new claims (the new database's, the WAL archive's with db.archiving): the others
  // exist, and re-applying them could clash with settings an older chart gave them (a claim's
  // class is immutable).
  const newClaims = installVolumes(config, upgradesPg(pg) ? [DB_VOLUME] : []);
  if (newClaims.length > 0) addVolumesStep(plan, config, newClaims);
  if (upgradesPg(pg)) addDbUpgradeStep(plan, config, pg);
  addUpgradeTlsStep(plan, config, u);
  addServicesStep(plan, config);
  addDatabaseStep(plan, config, upgradeDatabaseRequirements(config));
  if (upgradesPg(pg)) addDbFinalizeStep(plan, config, { migration: false });
  addIngressStep(plan, config);
  addServerStep(plan, config);
  // Once per image generation: a finished upgrade's re-run stops nothing (docs/runtime.md, "Safety").
  return plan.markOneShot('upgrade', 'inspect', 'inspect-db', 'stop-server', 'stop-db', ...(hasRootClaim(u) ? ['setup-marker'] : []), ...(upgradesPg(pg) ? ['db-upgrade', 'db-finalize'] : []));
}
