/** Whose an object is (src/runtime/safety/ownership.ts), whether a lock is stale (src/runtime/safety/lock.ts), --lock-timeout's durations. */
import * as os from 'os';
import { duration } from '../../../src/cli/unlock';
import { applySetOf } from '../../../src/runtime/core/applyset';
import { staleness } from '../../../src/runtime/safety/lock';
import { ownerOf } from '../../../src/runtime/safety/ownership';
import type { Plan } from '../../../src/plan/types';

const plan = { name: 'proxy', namespace: 'uyuni', selector: { 'app.kubernetes.io/part-of': 'uyuni-proxy', 'app.kubernetes.io/managed-by': 'uyuni-cdk' }, steps: [] } as unknown as Plan;
const obj = (labels: Record<string, string> = {}, annotations: Record<string, string> = {}, managers: string[] = []) => ({
  apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: 'uyuni', labels, annotations, managedFields: managers.map((manager) => ({ manager })) },
});
const ours = { 'app.kubernetes.io/part-of': 'uyuni-proxy', 'app.kubernetes.io/managed-by': 'uyuni-cdk' };

describe('ownerOf', () => {
  it('is undefined for the plan\'s own objects, members of its own set included', () => {
    expect(ownerOf(obj(ours), plan)).toBeUndefined();
    expect(ownerOf(obj({ ...ours, 'applyset.kubernetes.io/part-of': applySetOf(plan).id }), plan)).toBeUndefined();
  });

  it('names another plan, another set, a Helm release, another tool, the field managers, or nobody', () => {
    expect(ownerOf(obj({ 'app.kubernetes.io/part-of': 'uyuni', 'app.kubernetes.io/managed-by': 'uyuni-cdk', 'uyuni-cdk.io/plan': 'install' }), plan))
      .toEqual({ owner: 'uyuni-cdk plan install (part-of uyuni)', reason: 'part-of uyuni, not uyuni-proxy' });
    expect(ownerOf(obj({ ...ours, 'applyset.kubernetes.io/part-of': 'applyset-other-v1' }), plan)?.owner).toBe('the uyuni-cdk ApplySet applyset-other-v1');
    expect(ownerOf(obj({ 'app.kubernetes.io/managed-by': 'Helm' }, { 'meta.helm.sh/release-name': 'uyuni', 'meta.helm.sh/release-namespace': 'uyuni' }), plan))
      .toEqual({ owner: 'Helm release uyuni/uyuni', reason: 'no app.kubernetes.io/managed-by=uyuni-cdk' });
    expect(ownerOf(obj({ 'app.kubernetes.io/managed-by': 'mgradm' }), plan)?.owner).toBe('mgradm (app.kubernetes.io/managed-by)');
    expect(ownerOf(obj({ 'applyset.kubernetes.io/part-of': 'applyset-kubectl-v1' }), plan)?.owner).toBe('ApplySet applyset-kubectl-v1');
    expect(ownerOf(obj({}, {}, ['kubectl-client-side-apply', 'uyuni-cdk', 'kubectl-edit']), plan)?.owner).toBe('field managers kubectl-client-side-apply, kubectl-edit');
    expect(ownerOf(obj(), plan)?.owner).toBe('nobody known (no managed-by label, no field manager)');
  });
});

describe('staleness of a lock', () => {
  const lease = (renewedMsAgo: number, host = 'elsewhere', pid = 1) => ({
    metadata: { annotations: { 'uyuni-cdk.io/lock-host': host, 'uyuni-cdk.io/lock-pid': String(pid) } },
    spec: { holderIdentity: 'install-x', leaseDurationSeconds: 60, renewTime: new Date(Date.now() - renewedMsAgo).toISOString() as never },
  });
  it('holds while renewed within leaseDurationSeconds; stale after; stale at once when its pid on this host is gone', () => {
    expect(staleness(lease(59_000))).toBeUndefined();
    expect(staleness(lease(61_000))).toMatch(/^not renewed since .* \(leaseDurationSeconds 60\)$/);
    expect(staleness(lease(1000, os.hostname(), process.pid))).toBeUndefined();
    expect(staleness(lease(1000, os.hostname(), 2 ** 22 + 12345))).toContain('is no longer running');
  });
});

describe('--lock-timeout', () => {
  it('takes seconds, s, m, h; refuses anything else', () => {
    expect([duration('90'), duration('30s'), duration('5m'), duration('1h'), duration('0')]).toEqual([90, 30, 300, 3600, 0]);
    expect(() => duration('soon')).toThrow('must be a duration');
    expect(() => duration('-5s')).toThrow('must be a duration');
  });
});
