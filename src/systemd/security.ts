/**
 * A pod's securityContext and resource limits as systemd directives, as a kubelet honours them
 * (container settings override the pod's):
 *
 * | Kubernetes | unit |
 * |---|---|
 * | `runAsUser` / `runAsGroup` (numeric) | `User=` / `Group=` |
 * | `runAsNonRoot: true` | refused unless `runAsUser` is set and not 0 |
 * | `allowPrivilegeEscalation: false` | `NoNewPrivileges=yes` |
 * | `capabilities.drop: [ALL]` + `add` | `CapabilityBoundingSet=<add>`, `AmbientCapabilities=<add>` |
 * | `capabilities.drop: [X, …]` (no ALL) | `CapabilityBoundingSet=~CAP_X …` |
 * | `readOnlyRootFilesystem: true` | `ProtectSystem=strict` (the whole tree read-only, as a container's root), `ReadWritePaths=` the `hostPath` volumes it mounts read-write |
 * | `privileged: false` | `ProtectKernelTunables=yes`, `ProtectKernelModules=yes`, `ProtectControlGroups=yes`, `RestrictSUIDSGID=yes`, `LockPersonality=yes` |
 * | `resources.limits.memory` / `.cpu` | `MemoryMax=<bytes>` / `CPUQuota=<percent>%` |
 *
 * A pod without any of these fields gets no directive: its unit is byte for byte what it was.
 */
import type { ContainerLike, PodLike } from './pod';

/** A problem with these fields; the renderer turns it into a PodRenderError naming pod and field. */
export class SecurityContextError extends Error {}

interface SecurityContext {
  readonly runAsUser?: unknown;
  readonly runAsGroup?: unknown;
  readonly runAsNonRoot?: unknown;
  readonly allowPrivilegeEscalation?: unknown;
  readonly privileged?: unknown;
  readonly readOnlyRootFilesystem?: unknown;
  readonly capabilities?: { readonly add?: unknown; readonly drop?: unknown };
}

const CAPABILITY = /^(CAP_)?[A-Z_]+$/;

/** The effective settings of a container: its own, else the pod's (the pod has no capabilities/privileged/readOnly fields). */
export function effectiveSecurity(pod: PodLike, c: ContainerLike): SecurityContext {
  const podSc = ((pod.spec as { securityContext?: SecurityContext } | undefined)?.securityContext ?? {}) as SecurityContext;
  const own = ((c as { securityContext?: SecurityContext }).securityContext ?? {}) as SecurityContext;
  return {
    runAsUser: own.runAsUser ?? podSc.runAsUser,
    runAsGroup: own.runAsGroup ?? podSc.runAsGroup,
    runAsNonRoot: own.runAsNonRoot ?? podSc.runAsNonRoot,
    allowPrivilegeEscalation: own.allowPrivilegeEscalation,
    privileged: own.privileged,
    readOnlyRootFilesystem: own.readOnlyRootFilesystem,
    capabilities: own.capabilities,
  };
}

function id(v: unknown, field: string): number | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > 0xfffffffe) throw new SecurityContextError(`securityContext.${field} must be a whole number ≥ 0, not ${JSON.stringify(v)}`);
  return v;
}

function bool(v: unknown, field: string): boolean | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'boolean') throw new SecurityContextError(`securityContext.${field} must be true or false, not ${JSON.stringify(v)}`);
  return v;
}

function capabilityList(v: unknown, field: string): string[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'string' || !CAPABILITY.test(x))) {
    throw new SecurityContextError(`securityContext.capabilities.${field} must be a list of capability names (NET_BIND_SERVICE, ALL, ...)`);
  }
  return v.map((x: string) => (x === 'ALL' ? 'ALL' : x.startsWith('CAP_') ? x : `CAP_${x}`));
}

/** `512Mi`, `1G`, `1000000` → bytes. */
export function memoryBytes(q: string): number {
  const m = /^([0-9]+(?:\.[0-9]+)?)(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E|m)?$/.exec(q);
  if (!m) throw new SecurityContextError(`resources.limits.memory ${JSON.stringify(q)} is not a quantity (512Mi, 1G, ...)`);
  const factor: Record<string, number> = { '': 1, m: 1e-3, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18, Ki: 1024, Mi: 1024 ** 2, Gi: 1024 ** 3, Ti: 1024 ** 4, Pi: 1024 ** 5, Ei: 1024 ** 6 };
  return Math.ceil(Number(m[1]) * factor[m[2] ?? '']);
}

/** `500m`, `2`, `0.5` → percent of one CPU (CPUQuota=). */
export function cpuPercent(q: string): number {
  const m = /^([0-9]+(?:\.[0-9]+)?)(m)?$/.exec(q);
  if (!m) throw new SecurityContextError(`resources.limits.cpu ${JSON.stringify(q)} is not a quantity (500m, 2, ...)`);
  return Math.max(1, Math.ceil(m[2] ? Number(m[1]) / 10 : Number(m[1]) * 100));
}

/** The [Service] directives these fields ask for (none when none is set). */
export function securityDirectives(pod: PodLike, c: ContainerLike): Array<[string, string]> {
  const sc = effectiveSecurity(pod, c);
  const out: Array<[string, string]> = [];
  const uid = id(sc.runAsUser, 'runAsUser');
  const gid = id(sc.runAsGroup, 'runAsGroup');
  if (bool(sc.runAsNonRoot, 'runAsNonRoot') === true && (uid === undefined || uid === 0)) {
    throw new SecurityContextError(`securityContext.runAsNonRoot is true but the container would run as uid 0 (${uid === undefined ? 'no runAsUser: a systemd unit runs as root' : 'runAsUser: 0'})`);
  }
  if (uid !== undefined) out.push(['User', String(uid)]);
  if (gid !== undefined) out.push(['Group', String(gid)]);
  if (bool(sc.allowPrivilegeEscalation, 'allowPrivilegeEscalation') === false) out.push(['NoNewPrivileges', 'yes']);
  if (sc.capabilities !== undefined && sc.capabilities !== null) {
    const add = capabilityList(sc.capabilities.add, 'add').filter((x) => x !== 'ALL');
    const drop = capabilityList(sc.capabilities.drop, 'drop');
    if (drop.includes('ALL')) {
      out.push(['CapabilityBoundingSet', add.join(' ')]);
      if (add.length) out.push(['AmbientCapabilities', add.join(' ')]);
    } else {
      if (drop.length) out.push(['CapabilityBoundingSet', `~${drop.join(' ')}`]);
      if (add.length) out.push(['AmbientCapabilities', add.join(' ')]);
    }
  }
  if (bool(sc.readOnlyRootFilesystem, 'readOnlyRootFilesystem') === true) {
    out.push(['ProtectSystem', 'strict']);
    const writable = writableHostPaths(pod, c);
    if (writable.length) out.push(['ReadWritePaths', writable.join(' ')]);
  }
  if (bool(sc.privileged, 'privileged') === false) {
    out.push(['ProtectKernelTunables', 'yes'], ['ProtectKernelModules', 'yes'], ['ProtectControlGroups', 'yes'], ['RestrictSUIDSGID', 'yes'], ['LockPersonality', 'yes']);
  }
  const limits = (c as { resources?: { limits?: Record<string, unknown> } }).resources?.limits;
  if (limits?.memory !== undefined) out.push(['MemoryMax', String(memoryBytes(String(limits.memory)))]);
  if (limits?.cpu !== undefined) out.push(['CPUQuota', `${cpuPercent(String(limits.cpu))}%`]);
  return out;
}

/** The host paths of the `hostPath` volumes the container mounts without `readOnly` (a systemd unit sees the host's tree). */
function writableHostPaths(pod: PodLike, c: ContainerLike): string[] {
  const volumes = (pod.spec as { volumes?: Array<{ name?: unknown; hostPath?: { path?: unknown } }> } | undefined)?.volumes ?? [];
  const mounts = (c as { volumeMounts?: Array<{ name?: unknown; readOnly?: unknown }> }).volumeMounts ?? [];
  const out: string[] = [];
  for (const m of Array.isArray(mounts) ? mounts : []) {
    if (m?.readOnly === true) continue;
    const p = (Array.isArray(volumes) ? volumes : []).find((v) => v?.name === m?.name)?.hostPath?.path;
    if (typeof p !== 'string' || !p.startsWith('/') || /[\s"'\\%$;]/.test(p)) {
      if (p !== undefined) throw new SecurityContextError(`the hostPath ${JSON.stringify(p)} of volume ${JSON.stringify(m?.name)} must be an absolute path without spaces, quotes, %, $ or backslashes`);
      continue;
    }
    out.push(p);
  }
  return out;
}
