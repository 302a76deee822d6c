import type { PlanName, UyuniConfig } from '../config/schema';
import { nodeServicesProblems } from './node-services';
import type { PlanApp } from './plan-app';
import { planAppSynthesizer, Synthesizer } from './synthesizer';

export type { Synthesizer };

/** A plan whose module is loaded only when a configuration asks for it (a synth writes one or two). */
function lazy<M>(load: () => M, make: (m: M) => (config: UyuniConfig) => PlanApp): (config: UyuniConfig) => Synthesizer {
  return (config) => planAppSynthesizer(make(load()))(config);
}

/** Every plan by name (plansOf(config) decides which ones a configuration writes). */
export const PLANS: Record<PlanName, (config: UyuniConfig) => Synthesizer> = {
  // with a caRotation section the install keeps the server on the rotated CA (src/plans/ca-rotation.ts)
  'install': (config) => (config.caRotation
    ? lazy(() => require('./ca-rotation') as typeof import('./ca-rotation'), (m) => m.rotatedInstallPlan)(config)
    : lazy(() => require('./install') as typeof import('./install'), (m) => m.installPlan)(config)),
  'migrate': lazy(() => require('./migrate') as typeof import('./migrate'), (m) => m.migratePlan),
  'migrate-prepare': lazy(() => require('./migrate') as typeof import('./migrate'), (m) => m.migratePreparePlan),
  'upgrade': lazy(() => require('./upgrade') as typeof import('./upgrade'), (m) => m.upgradePlan),
  'proxy': lazy(() => require('./proxy') as typeof import('./proxy'), (m) => m.proxyPlan),
  'node-services': (config) => (require('./node-services') as typeof import('./node-services')).nodeServicesSynthesizer(config),
  'backup': lazy(() => require('./backup') as typeof import('./backup'), (m) => m.backupPlan),
  'restore': lazy(() => require('./restore') as typeof import('./restore'), (m) => m.restorePlan),
  'ssl-addca': lazy(() => require('./ca-rotation') as typeof import('./ca-rotation'), (m) => m.sslAddCaPlan),
  'ssl-rotate': lazy(() => require('./ca-rotation') as typeof import('./ca-rotation'), (m) => m.sslRotatePlan),
  'db-pitr': lazy(() => require('./db-pitr') as typeof import('./db-pitr'), (m) => m.dbPitrPlan),
  'db-basebackup': lazy(() => require('./db-basebackup') as typeof import('./db-basebackup'), (m) => m.dbBaseBackupPlan),
};

/**
 * Problems of a configuration that only the plans can see (a node pod the unit renderer
 * refuses, two pods sharing a unit name), worded as configuration errors with field paths.
 */
export function planProblems(config: UyuniConfig, plans: readonly PlanName[]): string[] {
  return plans.includes('node-services') ? nodeServicesProblems(config) : [];
}
