import * as path from 'path';
import type { PlanName, UyuniConfig } from '../config/schema';
import { installPlan } from './install';
import { migratePlan } from './migrate';
import { nodeServicesProblems, nodeServicesSynthesizer } from './node-services';
import { upgradePlan } from './upgrade';
import type { PlanApp } from './plan-app';
import { proxyPlan } from './proxy';

/** Something that writes one or more directories under dist/ and says which. */
export interface Synthesizer {
  /** Writes into `root` (a staging directory) and returns the top-level directories written. */
  synth(root: string, generator: string): string[];
}

/** A plan that is one PlanApp, written to `<root>/<plan name>`. */
export function planAppSynthesizer(make: (config: UyuniConfig) => PlanApp): (config: UyuniConfig) => Synthesizer {
  return (config) => ({
    synth(root, generator) {
      const plan = make(config);
      plan.synth(path.join(root, plan.props.name), generator);
      return [plan.props.name];
    },
  });
}

/** Every plan by name (plansOf(config) decides which ones a configuration writes). */
export const PLANS: Record<PlanName, (config: UyuniConfig) => Synthesizer> = {
  'install': planAppSynthesizer(installPlan),
  'migrate': planAppSynthesizer(migratePlan),
  'upgrade': planAppSynthesizer(upgradePlan),
  'proxy': planAppSynthesizer(proxyPlan),
  'node-services': nodeServicesSynthesizer,
};

/**
 * Problems of a configuration that only the plans can see (a node pod the unit renderer
 * refuses, two pods sharing a unit name), worded as configuration errors with field paths.
 */
export function planProblems(config: UyuniConfig, plans: readonly PlanName[]): string[] {
  return plans.includes('node-services') ? nodeServicesProblems(config) : [];
}
