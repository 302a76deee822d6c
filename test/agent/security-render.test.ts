/**
 * securityContext and limits → unit directives (src/systemd/security.ts), and a pod without those
 * fields rendering exactly as before (the #312 example, byte for byte).
 */
import { renderPodUnits } from '../../src/systemd';
import { cpuPercent, memoryBytes } from '../../src/systemd/security';
import { REFERENCE_UNIT as REFERENCE } from './reference';

const OPTS = { packageDir: '/opt/stackable/packages', kubeconfig: '/root/.kube/config' };

function reference(extra: Record<string, unknown> = {}, podSc?: Record<string, unknown>): any {
  return {
    metadata: { name: 'cleanup-test-ok', namespace: 'default' },
    spec: {
      ...(podSc ? { securityContext: podSc } : {}),
      containers: [{ name: 'noop-service', image: 'noop-service:1.0.0', command: ['noop-service-1.0.0/start.sh'], ...extra }],
    },
  };
}


const serviceLines = (content: string): string[] => content.split('\n\n')[1].split('\n');

describe('securityContext and limits in the unit', () => {
  it('renders a pod without them exactly as the reference (#312), also with empty securityContexts', () => {
    expect(renderPodUnits(reference(), OPTS)[0].content).toBe(REFERENCE);
    expect(renderPodUnits(reference({ securityContext: {} }, {}), OPTS)[0].content).toBe(REFERENCE);
  });

  it('maps a restricted pod, its capabilities, sandboxing and limits to directives', () => {
    const pod = reference({
      securityContext: { allowPrivilegeEscalation: false, privileged: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'], add: ['NET_BIND_SERVICE'] } },
      resources: { limits: { memory: '512Mi', cpu: '500m' } },
      volumeMounts: [{ name: 'data', mountPath: '/srv/data' }, { name: 'conf', mountPath: '/etc/app', readOnly: true }],
    }, { runAsNonRoot: true, runAsUser: 1000, runAsGroup: 1001 });
    pod.spec.volumes = [{ name: 'data', hostPath: { path: '/srv/data' } }, { name: 'conf', hostPath: { path: '/etc/app' } }];
    const lines = serviceLines(renderPodUnits(pod, OPTS)[0].content);
    expect(lines).toEqual(expect.arrayContaining([
      'User=1000', 'Group=1001', 'NoNewPrivileges=yes',
      'CapabilityBoundingSet=CAP_NET_BIND_SERVICE', 'AmbientCapabilities=CAP_NET_BIND_SERVICE',
      'ProtectSystem=strict', 'ReadWritePaths=/srv/data',
      'ProtectKernelTunables=yes', 'ProtectKernelModules=yes', 'ProtectControlGroups=yes', 'RestrictSUIDSGID=yes', 'LockPersonality=yes',
      `MemoryMax=${512 * 1024 * 1024}`, 'CPUQuota=50%',
    ]));
    expect(lines.filter((l) => l.startsWith('ReadWritePaths='))).toEqual(['ReadWritePaths=/srv/data']);
  });

  it('drops named capabilities from the bounding set; the container overrides the pod', () => {
    const lines = serviceLines(renderPodUnits(reference({ securityContext: { runAsUser: 7, capabilities: { drop: ['NET_RAW', 'CAP_SYS_ADMIN'] } } }, { runAsUser: 1000 }), OPTS)[0].content);
    expect(lines).toContain('CapabilityBoundingSet=~CAP_NET_RAW CAP_SYS_ADMIN');
    expect(lines).toContain('User=7');
    expect(lines.filter((l) => l.startsWith('User='))).toHaveLength(1);
  });

  it('refuses runAsNonRoot as uid 0 or without a uid, and bad values, naming the pod and field', () => {
    expect(() => renderPodUnits(reference({}, { runAsNonRoot: true }), OPTS)).toThrow(/pod default\/cleanup-test-ok: spec.containers\[0\]: securityContext.runAsNonRoot is true but the container would run as uid 0/);
    expect(() => renderPodUnits(reference({ securityContext: { runAsUser: 0, runAsNonRoot: true } }), OPTS)).toThrow(/runAsUser: 0/);
    expect(() => renderPodUnits(reference({ securityContext: { runAsUser: '1000' } }), OPTS)).toThrow(/securityContext.runAsUser must be a whole number/);
    expect(() => renderPodUnits(reference({ securityContext: { capabilities: { add: ['NET_BIND_SERVICE; rm'] } } }), OPTS)).toThrow(/capabilities.add must be a list of capability names/);
    expect(() => renderPodUnits(reference({ resources: { limits: { memory: 'lots' } } }), OPTS)).toThrow(/limits.memory "lots" is not a quantity/);
  });

  it('reads quantities as Kubernetes writes them', () => {
    expect(memoryBytes('1Gi')).toBe(1024 ** 3);
    expect(memoryBytes('1G')).toBe(1e9);
    expect(memoryBytes('1500000')).toBe(1500000);
    expect(cpuPercent('2')).toBe(200);
    expect(cpuPercent('250m')).toBe(25);
    expect(cpuPercent('0.5')).toBe(50);
  });
});
