import type { Plan } from '../plan/types';

/**
 * The kustomization file of a plan directory: its step files in plan order, for
 * `kubectl apply -k`, a Flux Kustomization and an Argo CD application (docs/gitops.md).
 *
 * Named `Kustomization`, the one of kustomize's three accepted names without an extension:
 * `kubectl apply -f dist/<plan>/` reads every .json, .yaml and .yml file of the directory as a
 * manifest and refuses a `kustomization.yaml` (kind Kustomization is no API kind), but skips this.
 */
export const KUSTOMIZATION = 'Kustomization';

/** The file's text. `sortOptions: fifo` keeps the step order; kustomize's default sorts by kind. */
export function kustomization(plan: Plan): string {
  return [
    `# Written by ${plan.generator} for plan ${plan.name}: its step files in order (docs/gitops.md).`,
    'apiVersion: kustomize.config.k8s.io/v1beta1',
    'kind: Kustomization',
    'sortOptions:',
    '  order: fifo',
    'resources:',
    ...plan.steps.map((s) => `  - ${s.file}`),
    '',
  ].join('\n');
}
