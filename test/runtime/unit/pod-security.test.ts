/**
 * PodSecurity admission's warnings as kube-apiserver v1.34.4 sends them (test/cluster/pod-security.test.ts):
 * the `Warning` header's text, which level and what breaks it, and what plan and run print.
 */
import { warningText } from '../../../src/kube/transport';
import { podSecurityText, podSecurityWarning } from '../../../src/runtime/core/pod-security';

// a Warning header as kube-apiserver sent it for a dry run of dist/install's Deployment uyuni under enforce=baseline
const HEADER = '299 - "would violate PodSecurity \\"baseline:latest\\": non-default capabilities (container \\"uyuni\\" must not include \\"SYS_ADMIN\\" in securityContext.capabilities.add)"';

describe('PodSecurity warnings', () => {
  it('reads the text of a Warning header, its quotes unescaped', () => {
    expect(warningText(HEADER)).toBe('would violate PodSecurity "baseline:latest": non-default capabilities (container "uyuni" must not include "SYS_ADMIN" in securityContext.capabilities.add)');
    expect(warningText('not a warn-code')).toBe('not a warn-code');
  });

  it('tells the level and the violations of a PodSecurity warning, and nothing of another warning', () => {
    expect(podSecurityWarning(warningText(HEADER))).toEqual({ level: 'baseline:latest', violations: 'non-default capabilities (container "uyuni" must not include "SYS_ADMIN" in securityContext.capabilities.add)' });
    expect(podSecurityWarning('metadata.finalizers: "x": prefer a domain-qualified finalizer name')).toBeUndefined();
  });

  it('says which pods would be refused at the enforced level and which are only warned about', () => {
    const text = podSecurityText({
      namespace: 'uyuni', labels: ['enforce=baseline', 'warn=restricted'],
      findings: [
        { object: 'Deployment/uyuni (uyuni)', level: 'baseline:latest', violations: 'non-default capabilities', refused: true },
        { object: 'Deployment/db (uyuni)', level: 'restricted:latest', violations: 'runAsUser=0', refused: false },
      ],
    });
    expect(text).toBe([
      'pod security: namespace uyuni (pod-security.kubernetes.io/enforce=baseline, warn=restricted)',
      '  kube-apiserver\'s PodSecurity admission would refuse the pods of (run would apply them, then wait until its deadline for pods that are never created):',
      '    Deployment/uyuni (uyuni): violates "baseline:latest": non-default capabilities',
      '  warned about (a warn or audit level stricter than the enforced one; pods allowed):',
      '    Deployment/db (uyuni): would violate "restricted:latest": runAsUser=0',
      '  the level is the namespace\'s label (or the cluster\'s default); docs/runtime.md, "PodSecurity"',
    ].join('\n'));
  });

  it('names the cluster\'s defaults when the namespace has no label', () => {
    const text = podSecurityText({ namespace: 'uyuni', labels: [], findings: [{ object: 'Deployment/uyuni (uyuni)', level: 'baseline:latest', violations: 'x', refused: false }] });
    expect(text).toContain('namespace uyuni (no pod-security.kubernetes.io label: the cluster\'s PodSecurity defaults)');
    expect(text).toContain('would violate (no enforce label: the cluster\'s PodSecurity defaults decide whether these pods are refused)');
  });
});
