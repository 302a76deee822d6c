import type { UyuniConfig } from '../config/schema';
import { CredentialsJob, GeneratedSecret } from '../constructs/credentials-job';
import { LABELS, MANAGED_BY, Requirement } from '../plan/types';
import type { PlanApp } from './plan-app';
import { imageOf } from './server-props';

/** The Secrets the runtime would generate for the plan: its requirements with `generate`, once each. */
export function generatedSecrets(requirements: readonly Requirement[]): GeneratedSecret[] {
  const out = new Map<string, GeneratedSecret>();
  for (const r of requirements) {
    if (r.ifMissing !== 'generate' || r.kind !== 'Secret' || out.has(r.name)) continue;
    const keys = Object.fromEntries(r.keys.map((k) => {
      const how = r.generate?.[k];
      if (!how) throw new Error(`requirement Secret ${r.name}: key ${k} has no generate entry`);
      return [k, how];
    }));
    out.set(r.name, { name: r.name, type: r.secretType ?? 'Opaque', keys });
  }
  return [...out.values()];
}

/**
 * `gitops.credentials: job`: step `credentials`, right after the namespace (first in a plan
 * without one), whose Job creates the Secrets the plan's later steps would have the runtime
 * generate, so a GitOps tool that applies dist/ without the runtime gets them too. The
 * requirements stay: the runtime then finds the Secrets present. A plan that generates nothing
 * (the proxy's) gets no step.
 */
export function addCredentialsStep(plan: PlanApp, config: UyuniConfig): void {
  const secrets = generatedSecrets(plan.requirements);
  if (secrets.length === 0) return;
  const image = imageOf(config, 'server');
  plan.insertStepAfter('namespace', 'credentials', {
    description: `create the missing credential Secrets (${secrets.map((s) => s.name).join(', ')}) with random passwords (Job ${CredentialsJob.NAME})`,
  }, (scope) => {
    new CredentialsJob(scope, 'Credentials', {
      namespace: plan.props.namespace,
      secrets,
      image: image.image,
      imagePullPolicy: image.pullPolicy,
      imagePullSecrets: image.pullSecrets ? [...image.pullSecrets] : undefined,
      // The labels the runtime gives the Secrets it generates: the plan's selector and the step.
      secretLabels: { [LABELS.partOf]: plan.props.partOf, [LABELS.managedBy]: MANAGED_BY, [LABELS.step]: 'credentials' },
      partOf: plan.props.partOf,
    });
  });
}
