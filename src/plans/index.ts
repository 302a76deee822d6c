import * as path from 'path';
import type { PlanName, UyuniConfig } from '../config/schema';
import { installPlan } from './install';
import { migratePlan } from './migrate';
import { nodeServicesSynthesizer } from './node-services';
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
