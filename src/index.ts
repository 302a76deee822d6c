/**
 * uyuni-cdk as a construct library (`import { UyuniServer } from 'uyuni-cdk'`; docs/library.md):
 * the L3 constructs for a chart of your own cdk8s app, their typed props, and the flows
 * (install, migrate, upgrade, proxy, node services) as plan directories for `uyuni-cdk run`.
 */
export { UyuniServer } from './plans/uyuni-server';
export type { UyuniServerProps } from './plans/uyuni-server';
export { UyuniProxy } from './plans/uyuni-proxy';
export type { UyuniProxyProps } from './plans/uyuni-proxy';
export type { Settings, UyuniSettings } from './plans/settings';
export { synthesizePlans } from './synth';
export { ConfigError } from './config/load';
export type { UyuniConfig, MigrationConfig, UpgradeConfig, ProxyConfig, NodeServicesConfig, PlanName } from './config/schema';
export { packageVersion } from './version';
