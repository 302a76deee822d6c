import { applySetId, groupKind, kindsAnnotation, splitGroupKind } from '../../../src/runtime/core/applyset';
import { fieldDiff, SENSITIVE, SENSITIVE_CHANGED } from '../../../src/runtime/decide/field-diff';
import { relocateHint } from '../../../src/runtime/core/manifests';

const secret = (data: Record<string, string>, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'v1', kind: 'Secret', metadata: { name: 'db-credentials', namespace: 'uyuni', uid: 'u1', resourceVersion: '7', labels: { 'uyuni-cdk.io/run': 'install-1' } }, data, ...extra,
});

describe('the field diff of plan', () => {
  it('never shows a Secret value, only which keys changed', () => {
    const d = fieldDiff(secret({ username: 'c3BhY2V3YWxr', password: 'b2xk' }), secret({ username: 'c3BhY2V3YWxr', password: 'bmV3', extra: 'eA==' }));
    expect(d).not.toMatch(/b2xk|bmV3|c3BhY2V3YWxr|eA==/);
    expect(d).toMatch(new RegExp(`^-  password: \\${SENSITIVE.slice(0, -1)}\\)$`, 'm'));
    expect(d).toContain(`\n+  password: ${SENSITIVE_CHANGED}\n`);
    expect(d).toContain(`+  extra: ${SENSITIVE}`);
    expect(d).not.toMatch(/^[-+]\s+username/m);
  });

  it('leaves out what the server and the runtime set: status, uid, resourceVersion, managedFields, timestamps, the run label', () => {
    const live: any = {
      apiVersion: 'v1', kind: 'ConfigMap', status: { x: 1 },
      metadata: { name: 'c', namespace: 'uyuni', uid: 'a', resourceVersion: '1', generation: 1, creationTimestamp: '2026-01-01T00:00:00Z', managedFields: [{ manager: 'm' }], labels: { 'uyuni-cdk.io/run': 'r1' } },
      data: { a: '1' },
    };
    const planned = { ...live, metadata: { ...live.metadata, uid: 'b', resourceVersion: '2', labels: { 'uyuni-cdk.io/run': 'r2' } } };
    expect(fieldDiff(live, planned)).toBe('');
    expect(fieldDiff(live, { ...planned, data: { a: '2' } })).toBe('--- live\n+++ planned\n@@ -1,6 +1,6 @@\n apiVersion: v1\n data:\n-  a: "1"\n+  a: "2"\n kind: ConfigMap\n metadata:\n   name: c\n');
  });
});

describe('the ApplySet id and kinds', () => {
  it('computes the id as kubectl does (checked against kubectl 1.32 in applyset-kubectl.test.ts)', () => {
    // kubectl apply --prune --applyset=configmap/uyuni-applyset -n uyuni labelled its parent so.
    expect(applySetId({ apiVersion: 'v1', kind: 'ConfigMap', name: 'uyuni-applyset', namespace: 'uyuni' })).toBe('applyset-bN25o7lXn-GbASxaDhbFL_e4AnFUE95DDzTprbTrL7I-v1');
    expect(groupKind('networking.k8s.io/v1', 'Ingress')).toBe('Ingress.networking.k8s.io');
    expect(groupKind('v1', 'Service')).toBe('Service');
    expect(splitGroupKind('Ingress.networking.k8s.io')).toEqual({ kind: 'Ingress', group: 'networking.k8s.io' });
    expect(kindsAnnotation(['Service', 'Deployment.apps', 'Service'])).toBe('Deployment.apps,Service');
  });
});

describe('hints under --namespace', () => {
  it('moves -n, --namespace and --namespace= of the plan\'s namespace, and nothing else', () => {
    expect(relocateHint('kubectl -n uyuni create secret x && kubectl --namespace=uyuni get x; kubectl --namespace uyuni logs job/y', 'uyuni', 'mig'))
      .toBe('kubectl -n mig create secret x && kubectl --namespace=mig get x; kubectl --namespace mig logs job/y');
    expect(relocateHint('kubectl -n uyuni-proxy create configmap uyuni-ca', 'uyuni', 'mig')).toBe('kubectl -n uyuni-proxy create configmap uyuni-ca');
  });
});
