/**
 * PodSecurity admission (kube-apiserver's built-in plugin, the Pod Security Standards): a
 * namespace labelled `pod-security.kubernetes.io/enforce=baseline` (or `restricted`) makes the API
 * server refuse the pods that break the level, not the Deployments and Jobs that make them. Those
 * are accepted with a warning (the `Warning` header: `would violate PodSecurity "baseline:latest":
 * non-default capabilities (...)`), and their pods are then refused one by one by the
 * controllers' creates: a run applies every step and waits until its deadline for pods that
 * never come (seen on kube-apiserver v1.34.4: test/cluster/pod-security.test.ts).
 *
 * Asked before the first write, the server's own verdict: a server-side apply dry run of every
 * workload of the plan in the namespace (when it exists: a dry run cannot create one) returns
 * those warnings. They also come from a cluster-wide default (the AdmissionConfiguration of
 * PodSecurity) that no namespace label shows.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import { collectWarnings } from '../../kube/transport';
import { Limit, limiter, READ_CONCURRENCY } from '../../kube/limit';
import type { Plan } from '../../plan/types';
import { Cluster, refString } from '../../kube/cluster';
import { Manifest, refOf } from './manifests';

export const POD_SECURITY_LABEL = 'pod-security.kubernetes.io/';

/** The kinds whose objects make pods (PodSecurity admission checks their pod templates). */
const WORKLOADS: ReadonlySet<string> = new Set(['Pod', 'Deployment', 'ReplicaSet', 'StatefulSet', 'DaemonSet', 'Job', 'CronJob', 'ReplicationController']);

export interface PodSecurityFinding {
  /** `Deployment/uyuni (ns)`. */
  readonly object: string;
  /** The level and version the server named: `baseline:latest`. */
  readonly level: string;
  /** What breaks it, as the server says. */
  readonly violations: string;
  /** The level is the namespace's `enforce` one: its pods are refused (else: warned about, audited). */
  readonly refused: boolean;
}

export interface PodSecurityReport {
  readonly namespace: string;
  /** The namespace's `pod-security.kubernetes.io/*` labels, as `enforce=baseline`. */
  readonly labels: readonly string[];
  readonly findings: readonly PodSecurityFinding[];
}

const VIOLATION = /^would violate PodSecurity "([^"]+)": ([\s\S]*)$/;

/** `{ level: 'baseline:latest', violations }` of a PodSecurity warning, or undefined for any other warning. */
export function podSecurityWarning(text: string): { level: string; violations: string } | undefined {
  const m = VIOLATION.exec(text);
  return m ? { level: m[1], violations: m[2] } : undefined;
}

/** The level a namespace enforces, as the warnings name it: `baseline:latest` (version `latest` when unlabelled). */
function enforced(labels: Record<string, string>): string | undefined {
  const level = labels[`${POD_SECURITY_LABEL}enforce`];
  return level ? `${level}:${labels[`${POD_SECURITY_LABEL}enforce-version`] ?? 'latest'}` : undefined;
}

/**
 * The plan's workloads that PodSecurity admission refuses or warns about in the plan's namespace,
 * by a server-side apply dry run of each; undefined when the namespace does not exist yet (its
 * labels are then the plan's) or nothing is said; within `limit`'s bound of requests in flight. A dry run the server refuses (an immutable
 * field, a permission) tells nothing here: `plan` and `run` report those on their own.
 */
export async function checkPodSecurity(
  cluster: Cluster, plan: Plan, objectsOf: (step: string) => readonly Manifest[], limit: Limit = limiter(READ_CONCURRENCY),
): Promise<PodSecurityReport | undefined> {
  const ns = await limit(() => cluster.get<KubernetesObject>({ apiVersion: 'v1', kind: 'Namespace', name: plan.namespace }));
  if (!ns) return undefined;
  const labels = ns.metadata?.labels ?? {};
  const enforce = enforced(labels);
  const workloads = plan.steps.flatMap((s) => objectsOf(s.name)).filter((o) => WORKLOADS.has(o.kind));
  const said = await Promise.all(workloads.map((obj) => limit(async () => {
    const r = await collectWarnings(() => cluster.apply(obj, true)).catch(() => undefined);
    return (r?.warnings ?? []).flatMap((w) => {
      const v = podSecurityWarning(w);
      return v ? [{ object: refString(refOf(obj)), ...v, refused: v.level === enforce }] : [];
    });
  })));
  const findings = said.flat();
  if (!findings.length) return undefined;
  return {
    namespace: plan.namespace,
    labels: Object.entries(labels).filter(([k]) => k.startsWith(POD_SECURITY_LABEL)).map(([k, v]) => `${k.slice(POD_SECURITY_LABEL.length)}=${v}`),
    findings,
  };
}

/** What plan prints and run says on stderr before its first write. */
export function podSecurityText(r: PodSecurityReport): string {
  const labelled = r.labels.length ? `pod-security.kubernetes.io/${r.labels.join(', ')}` : 'no pod-security.kubernetes.io label: the cluster\'s PodSecurity defaults';
  const refused = r.findings.filter((f) => f.refused);
  const warned = r.findings.filter((f) => !f.refused);
  const lines = [`pod security: namespace ${r.namespace} (${labelled})`];
  if (refused.length) {
    lines.push(`  kube-apiserver's PodSecurity admission would refuse the pods of (run would apply them, then wait until its deadline for pods that are never created):`);
    lines.push(...refused.map((f) => `    ${f.object}: violates "${f.level}": ${f.violations}`));
  }
  if (warned.length) {
    lines.push(r.labels.some((l) => l.startsWith('enforce='))
      ? '  warned about (a warn or audit level stricter than the enforced one; pods allowed):'
      : '  would violate (no enforce label: the cluster\'s PodSecurity defaults decide whether these pods are refused):');
    lines.push(...warned.map((f) => `    ${f.object}: would violate "${f.level}": ${f.violations}`));
  }
  lines.push(`  the level is the namespace's label (or the cluster's default); docs/runtime.md, "PodSecurity"`);
  return lines.join('\n');
}
