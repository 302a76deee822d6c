import type { UpgradeConfig, UyuniConfig } from '../config/schema';
import { DB_VOLUME } from '../model/volumes';
import type { ObjectRef } from '../plan/types';
import {
  addDbFinalizeStep, addDbUpgradeStep, addInspectDbStep, addInspectStep, deploymentRefs, flowRecord, sourceDbVolume,
  upgradeGates, upgradesPg,
} from './db-steps';
import {
  addDatabaseStep, addIngressStep, addServerStep, addServicesStep, addTlsStep, addVolumesStep, serverPlan,
} from './install';
import type { PlanApp } from './plan-app';
import { imageOf } from './server-props';

/**
 * Step `stop-server`: the gates decide, from the inspected facts, whether this upgrade may go
 * on; then every workload on the data (the database last) is scaled to 0 and the step waits
 * until no replica runs. Its object, ConfigMap uyuni-upgrade, records the upgrade (a step file
 * must hold an object; the actions run before it is applied).
 */
export function addStopServerStep(plan: PlanApp, config: UyuniConfig, u: UpgradeConfig): void {
  const stop = deploymentRefs(config.namespace);
  const record: ObjectRef = { apiVersion: 'v1', kind: 'ConfigMap', name: 'uyuni-upgrade', namespace: config.namespace };
  plan.addStep('stop-server', {
    description: `stop the server and its database for the upgrade (${stop.map((d) => d.name).join(', ')} to 0 replicas)`,
    gates: upgradeGates(config, u.postgresql, 'upgrade'),
    actions: stop.map((object) => ({ type: 'scale' as const, object, replicas: 0 })),
    waits: [...stop.map((object) => ({ object, for: 'scaled-down' as const })), { object: record, for: 'exists' }],
  }, (chart) => {
    flowRecord(chart, 'Record', config.namespace, record.name, {
      image: imageOf(config, 'server').image,
      db: imageOf(config, 'db').image,
      postgresql: `${u.postgresql.from} -> ${u.postgresql.to}`,
    });
  });
}

/**
 * The upgrade plan (docs/upstream.md): inspect the data and the new images (while the old
 * server runs) → gates, stop everything → [claim var-pgsql18, PostgreSQL major upgrade from
 * var-pgsql, which is kept] → TLS, Services, database with the new image → [db-finalize once:
 * REINDEX after a major upgrade] → Ingresses → server with the new image.
 */
export function upgradePlan(config: UyuniConfig): PlanApp {
  const u = config.upgrade;
  if (!u) throw new Error('the upgrade plan needs an upgrade section');
  const pg = u.postgresql;
  const plan = serverPlan(config, 'upgrade',
    `Upgrade Uyuni ${config.fqdn} in namespace ${config.namespace} to ${imageOf(config, 'server').image} (PostgreSQL ${pg.from} → ${pg.to})`,
    { flow: { kind: 'upgrade' } });
  addInspectStep(plan, config);
  addInspectDbStep(plan, config, sourceDbVolume(pg), { nearDb: true });
  addStopServerStep(plan, config, u);
  if (upgradesPg(pg)) {
    // Only the new claim: the others exist, and re-applying them could clash with settings
    // an older chart gave them (a claim's class is immutable).
    addVolumesStep(plan, config, [DB_VOLUME]);
    addDbUpgradeStep(plan, config, pg);
  }
  addTlsStep(plan, config);
  addServicesStep(plan, config);
  addDatabaseStep(plan, config);
  if (upgradesPg(pg)) addDbFinalizeStep(plan, config, { reindex: true, migration: false });
  addIngressStep(plan, config);
  addServerStep(plan, config);
  // Once per image generation: a finished upgrade's re-run stops nothing (docs/runtime.md, "Safety").
  return plan.markOneShot('upgrade', 'inspect', 'inspect-db', 'stop-server', ...(upgradesPg(pg) ? ['db-upgrade', 'db-finalize'] : []));
}
