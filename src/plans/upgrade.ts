import type { UpgradeConfig, UyuniConfig } from '../config/schema';
import { image, IMAGES } from '../model/images';
import type { ObjectRef } from '../plan/types';
import { addDbSteps, addInspectStep, deploymentRefs, flowRecord, upgradeGates } from './db-steps';
import { addDeploySteps, serverPlan } from './install';
import type { PlanApp } from './plan-app';

/**
 * Step `stop-server`: the gates decide, from the inspected facts, whether this upgrade may go
 * on; then the server (and the attestation, the other database user) is scaled to 0 and the
 * step waits until no replica runs. Its object, ConfigMap uyuni-upgrade, records the upgrade
 * (a step file must hold an object; the actions run before it is applied).
 */
export function addStopServerStep(plan: PlanApp, config: UyuniConfig, u: UpgradeConfig): void {
  const stop = deploymentRefs(config.namespace);
  const record: ObjectRef = { apiVersion: 'v1', kind: 'ConfigMap', name: 'uyuni-upgrade', namespace: config.namespace };
  plan.addStep('stop-server', {
    description: `stop the server for the upgrade (${stop.map((d) => `Deployment ${d.name}`).join(', ')} to 0 replicas)`,
    gates: upgradeGates(config, u.postgresql, 'upgrade'),
    actions: stop.map((object) => ({ type: 'scale' as const, object, replicas: 0 })),
    waits: [...stop.map((object) => ({ object, for: 'scaled-down' as const })), { object: record, for: 'exists' }],
  }, (chart) => {
    flowRecord(chart, 'Record', config.namespace, record.name, {
      image: image(config, IMAGES.server),
      postgresql: `${u.postgresql.from} -> ${u.postgresql.to}`,
    });
  });
}

/**
 * The upgrade plan (uyuni-server.md §6): inspect (the new image reads the volumes) → gates and
 * stop the server → [db-upgrade] → db-finalize → post-upgrade → the deploy steps (no setup).
 * Namespace and claims exist already; the deploy steps re-apply everything else with the new
 * image.
 */
export function upgradePlan(config: UyuniConfig): PlanApp {
  const u = config.upgrade;
  if (!u) throw new Error('the upgrade plan needs an upgrade section');
  const plan = serverPlan(config, 'upgrade',
    `Upgrade Uyuni ${config.fqdn} in namespace ${config.namespace} to ${image(config, IMAGES.server)} (PostgreSQL ${u.postgresql.from} → ${u.postgresql.to})`);
  addInspectStep(plan, config);
  addStopServerStep(plan, config, u);
  addDbSteps(plan, config, { pg: u.postgresql, gates: [], reindex: false });
  addDeploySteps(plan, config, { setup: false });
  return plan;
}
