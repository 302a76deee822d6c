/** Which plans a configuration asks for, and the sections that decide it. */
import type { PlanName, UyuniConfig } from './schema';
import type { ValidSections } from './errors';

/** The plans that write the server's objects into `namespace`. */
export const SERVER_PLANS: readonly PlanName[] = ['install', 'migrate', 'migrate-prepare', 'upgrade'];

/** The plans a configuration asks for (explicit `plans`, or derived from its sections). */
export function plansOf(config: UyuniConfig): PlanName[] {
  if (config.plans) return [...new Set(config.plans)];
  const server: PlanName[] = config.migration ? ['migrate', 'migrate-prepare'] : config.upgrade ? ['upgrade'] : ['install'];
  return [...server, ...(config.proxy ? ['proxy' as const] : []), ...(config.nodeServices ? ['node-services' as const] : []),
    ...(config.backup ? ['backup' as const, 'restore' as const] : []),
    ...(config.caRotation ? (config.caRotation.emergency ? ['ssl-rotate' as const] : ['ssl-addca' as const, 'ssl-rotate' as const]) : []),
    ...(config.db.archiving?.enabled ? ['db-basebackup' as const] : []),
    ...(config.db.archiving?.enabled && config.db.archiving.restoreTo ? ['db-pitr' as const] : [])];
}

/** The plans a refused configuration asks for, when every section that says which passed the schema. */
export function plansOfSections(v: ValidSections): PlanName[] | undefined {
  return PLAN_SECTIONS.some((s) => v.invalid.has(s)) ? undefined : plansOf(v.sections as UyuniConfig);
}

/** What plansOf reads. */
export const PLAN_SECTIONS = ['plans', 'migration', 'upgrade', 'proxy', 'nodeServices', 'backup', 'caRotation', 'db'] as const;
