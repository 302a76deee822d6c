import { checkConfig, ConfigError } from '../config/load';
import type { PlanName, UyuniConfig } from '../config/schema';

/**
 * A setting as a user writes it: every key that has a default may be left out (the defaults and
 * what is allowed: docs/configuration.md). The constructors check the values as synth checks
 * uyuni.yaml, so a key the type lets through but the schema requires is still named.
 */
export type Settings<T> = T extends readonly (infer E)[]
  ? readonly Settings<E>[]
  : T extends object ? { readonly [K in keyof T]?: Settings<T[K]> } : T;

/** A whole configuration, the keys of uyuni.yaml as a typed object: only `fqdn` is required. */
export type UyuniSettings = Settings<Omit<UyuniConfig, 'fqdn'>> & {
  /** The server's fully qualified domain name. */
  readonly fqdn: string;
};

/** The sections that make flows (plans run in order by `uyuni-cdk run`), not chart content. */
export const FLOW_SECTIONS = ['migration', 'upgrade', 'nodeServices', 'plans'] as const;
export type FlowSection = (typeof FLOW_SECTIONS)[number];

/** Why a construct does not take a section: where it goes instead. */
const ELSEWHERE: Record<FlowSection | 'proxy', string> = {
  migration: 'a migration is a plan that uyuni-cdk run runs step by step: write it with synthesizePlans',
  upgrade: 'an upgrade is a plan that uyuni-cdk run runs step by step: write it with synthesizePlans',
  nodeServices: 'node services are written with synthesizePlans',
  plans: 'a construct is one plan\'s objects; synthesizePlans writes plans',
  proxy: 'the proxy is UyuniProxy',
};

/**
 * The checked configuration of an L3 construct (`who`, e.g. `UyuniServer chart/uyuni`) whose
 * objects are those of `plan`: its props with the defaults filled in. Throws ConfigError naming
 * `who` and every bad prop, the `refused` sections among them.
 */
export function checkedProps(props: object, who: string, plan: PlanName, refused: readonly (keyof typeof ELSEWHERE)[]): UyuniConfig {
  const given = refused.filter((k) => (props as Record<string, unknown>)[k] !== undefined);
  if (given.length > 0) throw new ConfigError(who, given.map((k) => `${k}: not a prop here (${ELSEWHERE[k]})`));
  // A copy: the schema's defaults must not land in the caller's object.
  return checkConfig({ ...structuredClone(props), plans: [plan] }, who);
}
