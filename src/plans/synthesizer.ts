import * as path from 'path';
import type { UyuniConfig } from '../config/schema';
import { addCredentialsStep } from './credentials-step';
import type { PlanApp } from './plan-app';

/** Something that writes one or more directories under dist/ and says which. */
export interface Synthesizer {
  /** Writes into `root` (a staging directory) and returns the top-level directories written. */
  synth(root: string, generator: string): string[];
}

/**
 * A plan that is one PlanApp, written to `<root>/<plan name>`; with `gitops.credentials: job`
 * it also makes its generated credentials itself (src/plans/credentials-step.ts).
 */
export function planAppSynthesizer(make: (config: UyuniConfig) => PlanApp): (config: UyuniConfig) => Synthesizer {
  return (config) => ({
    synth(root, generator) {
      const plan = make(config);
      if (config.gitops.credentials === 'job') addCredentialsStep(plan, config);
      plan.synth(path.join(root, plan.props.name), generator);
      return [plan.props.name];
    },
  });
}
