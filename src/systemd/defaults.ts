/**
 * The node agent's defaults, defined once: the renderer, the agent's own unit, the CLI's
 * options and the configuration schema read them from here.
 */

/** Root under which a relative `command[0]` resolves, as `<packageDir>/<image-name>-<image-tag>/`. */
export const DEFAULT_PACKAGE_DIR = '/opt/stackable/packages';

/** The slice every pod unit is put into; the cleanup removes only units of it. */
export const DEFAULT_SLICE = 'system-stackable.slice';

/** Where the system manager's unit files go. */
export const SYSTEM_UNIT_DIR = '/lib/systemd/system';

/** D-Bus calls the cleanup has in flight at the same time (units looked at, units stopped). */
export const DEFAULT_CONCURRENCY = 64;

/** Limit for each page of the cleanup's pod list. */
export const DEFAULT_API_TIMEOUT_SECONDS = 30;

/** Limit for each stop job of the cleanup. */
export const DEFAULT_JOB_TIMEOUT_SECONDS = 120;

/** The `uyuni-cdk` executable the agent's unit runs (`npm install -g` with prefix /usr/local). */
export const DEFAULT_AGENT_EXECUTABLE = '/usr/local/bin/uyuni-cdk';

/**
 * The V8 heap settings the agent's unit runs `agent run` with (NODE_OPTIONS, which the npm
 * command and the single executable both read): a young generation of at most 1 MB per
 * semi-space instead of Node 20's 16 MB (the start-up's burst of list pages, D-Bus replies and
 * status patches grew it to 2 x 16 MB, which an idle agent keeps: 113 -> 90 MB idle RSS with
 * 100 pods, the reconcile latency unchanged), and V8's `gc`, with which the agent collects the
 * garbage a burst left once it is over (src/agent/heap.ts; docs/agent.md, issue 36).
 */
export const AGENT_NODE_OPTIONS = '--max-semi-space-size=1 --expose-gc';

/** `agent run`: seconds between full relists of the node's pods. */
export const DEFAULT_RESYNC_SECONDS = 300;

/** `agent run`: the node's Lease in kube-node-lease is renewed this often (the kubelet's 10 s)... */
export const LEASE_RENEW_SECONDS = 10;

/** ... and holds for this long (the kubelet's default, 40 s). */
export const LEASE_DURATION_SECONDS = 40;

/** The label and taint systemd-backed nodes register with; their pods select the label and tolerate the taint. */
export const SYSTEMD_NODE = { key: 'kubernetes.io/arch', value: 'stackable-linux' } as const;

/** The effects of that taint (the reference's: ordinary pods neither schedule nor stay there). */
export const SYSTEMD_NODE_TAINT_EFFECTS = ['NoSchedule', 'NoExecute'] as const;

/** `agent run --pod-security`: PodSecurity's levels, as the node's policy (src/agent/pod-policy.ts). */
export const POD_SECURITY_LEVELS = ['privileged', 'baseline', 'restricted'] as const;
export type PodSecurityLevel = (typeof POD_SECURITY_LEVELS)[number];
/** The node policy when none is given: baseline (no privileged containers, commands under the package directory). */
export const DEFAULT_POD_SECURITY: PodSecurityLevel = 'baseline';

/** `agent run --max-pods`: a kubelet's maxPods default. */
export const DEFAULT_MAX_PODS = 110;
