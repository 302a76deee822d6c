import { k8s } from 'cdk8s-plus-28';
import type { Construct } from 'constructs';
import { commonLabels, PartOf } from '../model/labels';

/**
 * The identity of a step Job that talks to the API (L2): a ServiceAccount, a Role with exactly
 * `rules` and their RoleBinding, all named `name` in `namespace`, as constructs `ServiceAccount`,
 * `Role` and `RoleBinding` of `scope`. Its Job runs as `serviceAccountName: name`.
 */
export function stepAccount(scope: Construct, namespace: string, name: string, partOf: PartOf, rules: k8s.PolicyRule[]): void {
  const metadata = { name, namespace, labels: commonLabels(partOf, 'step') };
  new k8s.KubeServiceAccount(scope, 'ServiceAccount', { metadata, automountServiceAccountToken: true });
  new k8s.KubeRole(scope, 'Role', { metadata, rules });
  new k8s.KubeRoleBinding(scope, 'RoleBinding', {
    metadata,
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
    subjects: [{ kind: 'ServiceAccount', name, namespace }],
  });
}
