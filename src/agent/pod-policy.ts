/**
 * The node's pod policy (`agent run --pod-security`): PodSecurity's levels, checked by the agent
 * before a unit is written, as far as they mean something on a systemd node, plus one rule of its
 * own: outside `privileged`, a command runs only from under the package directory.
 *
 * - `privileged`: anything the renderer accepts.
 * - `baseline`: no `privileged: true`; capabilities added only from the baseline set; commands
 *   under the package directory.
 * - `restricted`: baseline, and `runAsNonRoot: true` (pod or container) with no `runAsUser: 0`,
 *   `allowPrivilegeEscalation: false`, `capabilities.drop` containing ALL, nothing added but
 *   NET_BIND_SERVICE, `seccompProfile` RuntimeDefault or Localhost.
 *
 * Host namespaces (`hostNetwork`, `hostPID`, `hostIPC`) and `hostPath` are not refused: every unit
 * shares the host's network, process table and file tree anyway.
 */
import * as path from 'path';
import type { ApiPod } from './api-pod';
import { DEFAULT_MAX_PODS, DEFAULT_POD_SECURITY, PodSecurityLevel, POD_SECURITY_LEVELS } from '../systemd/defaults';

export { DEFAULT_MAX_PODS, DEFAULT_POD_SECURITY, POD_SECURITY_LEVELS };
export type { PodSecurityLevel };

/** PodSecurity baseline: the capabilities a container may add. */
const BASELINE_CAPS = new Set(['AUDIT_WRITE', 'CHOWN', 'DAC_OVERRIDE', 'FOWNER', 'FSETID', 'KILL', 'MKNOD', 'NET_BIND_SERVICE', 'SETFCAP', 'SETGID', 'SETPCAP', 'SETUID', 'SYS_CHROOT']);

type Sc = Record<string, unknown> & { capabilities?: { add?: unknown; drop?: unknown }; seccompProfile?: { type?: unknown } };
type Container = { name?: string; command?: readonly string[]; securityContext?: Sc };

const caps = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string').map((x) => x.replace(/^CAP_/, '')) : []);

/** What in `pod` the level forbids, each naming the field; empty when it may run. */
export function policyViolations(pod: ApiPod, level: PodSecurityLevel, packageDir: string): string[] {
  if (level === 'privileged') return [];
  const out: string[] = [];
  const spec = (pod.spec ?? {}) as { securityContext?: Sc; containers?: Container[]; initContainers?: Container[] };
  const podSc = spec.securityContext ?? {};
  const all = [
    ...(spec.initContainers ?? []).map((c, i) => ({ c, field: `spec.initContainers[${i}]` })),
    ...(spec.containers ?? []).map((c, i) => ({ c, field: `spec.containers[${i}]` })),
  ];
  for (const { c, field } of all) {
    const sc: Sc = c.securityContext ?? {};
    const cmd = c.command?.[0];
    if (typeof cmd === 'string' && cmd.startsWith('/')) {
      const rel = path.posix.relative(packageDir, path.posix.normalize(cmd));
      if (rel === '' || rel.startsWith('..')) out.push(`${field}.command[0] ${cmd} is outside the package directory ${packageDir} (only --pod-security privileged runs commands from elsewhere)`);
    }
    if (sc.privileged === true) out.push(`${field}.securityContext.privileged must not be true`);
    const added = caps(sc.capabilities?.add);
    const notBaseline = added.filter((x) => !BASELINE_CAPS.has(x));
    if (notBaseline.length) out.push(`${field}.securityContext.capabilities.add must not add ${notBaseline.join(', ')}`);
    if (level !== 'restricted') continue;
    const nonRoot = sc.runAsNonRoot ?? podSc.runAsNonRoot;
    if (nonRoot !== true) out.push(`${field}.securityContext.runAsNonRoot (or the pod's) must be true`);
    if ((sc.runAsUser ?? podSc.runAsUser) === 0) out.push(`${field}.securityContext.runAsUser must not be 0`);
    if (sc.allowPrivilegeEscalation !== false) out.push(`${field}.securityContext.allowPrivilegeEscalation must be false`);
    if (!caps(sc.capabilities?.drop).includes('ALL')) out.push(`${field}.securityContext.capabilities.drop must include ALL`);
    const beyond = added.filter((x) => x !== 'NET_BIND_SERVICE');
    if (beyond.length) out.push(`${field}.securityContext.capabilities.add may add only NET_BIND_SERVICE, not ${beyond.join(', ')}`);
    const seccomp = (sc.seccompProfile ?? podSc.seccompProfile)?.type;
    if (seccomp !== 'RuntimeDefault' && seccomp !== 'Localhost') out.push(`${field}.securityContext.seccompProfile.type (or the pod's) must be RuntimeDefault or Localhost`);
  }
  return out;
}
