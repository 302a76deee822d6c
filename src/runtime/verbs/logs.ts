/**
 * `uyuni-cdk logs`: the logs of a step's pods (its Jobs' and Deployments'), or of the plan's
 * running services (every Deployment) without a step; from the cluster while the pods exist,
 * else from the run directories where `run` saved them (`<run dir>/<step>/<pod>.<container>.log`).
 */
import * as fs from 'fs';
import * as path from 'path';
import type { V1Deployment, V1Pod } from '@kubernetes/client-node';
import { defaultRunsDir } from '../../plan/run-defaults';
import type { Plan, Step } from '../../plan/types';
import type { Cluster } from '../../kube/cluster';
import { BadInput } from '../../kube/api-errors';
import { jobPodQuery } from '../core/jobs';
import { safeComponent } from '../apply/step-logs';
import type { Manifest } from '../core/manifests';
import { attemptsNewestFirst } from '../core/run-dirs';
import { selectorString, startedContainers } from '../readiness';
import type { WatchHandle } from '../../kube/list-watch';

export interface LogsOptions {
  /** One step's pods; none: every Deployment of the plan (the server's own pods). */
  readonly step?: string;
  /** Follow the running containers until they end (or the caller stops). */
  readonly follow?: boolean;
  /** Lines from the end of each container's log. @default all */
  readonly tail?: number;
  /** Where the plan's runs are. @default defaultRunsDir(namespace, plan) */
  readonly runsDir?: string;
}

/** One container of one pod: where its lines come from. */
export interface LogSource {
  readonly pod: string;
  readonly container: string;
  /** Still running: what `follow` streams. */
  readonly running: boolean;
}

/** The workloads of some steps (all by default) of these kinds. */
export function workloadsOf(plan: Plan, objectsOf: (step: string) => Manifest[], kinds: readonly string[], steps: readonly Step[] = plan.steps): Manifest[] {
  return steps.flatMap((s) => objectsOf(s.name).filter((o) => kinds.includes(o.kind)));
}

/** The pods of these workloads (Jobs by job-name, Deployments by their selector), each once, oldest first. */
export async function podsOfWorkloads(cluster: Cluster, workloads: readonly Manifest[]): Promise<V1Pod[]> {
  const pods = new Map<string, V1Pod>();
  for (const w of workloads) for (const p of await podsOf(cluster, w)) pods.set(p.metadata?.uid ?? p.metadata?.name ?? '', p);
  return [...pods.values()].sort((a, b) => String(a.metadata?.creationTimestamp ?? '').localeCompare(String(b.metadata?.creationTimestamp ?? '')));
}

async function podsOf(cluster: Cluster, w: Manifest): Promise<V1Pod[]> {
  if (w.kind === 'Job') return (await cluster.list<V1Pod>(jobPodQuery({ name: w.metadata.name, namespace: w.metadata.namespace }))).items;
  const selector = (w as unknown as V1Deployment).spec?.selector;
  if (!selector) return [];
  return (await cluster.list<V1Pod>({ apiVersion: 'v1', kind: 'Pod', namespace: w.metadata.namespace, labelSelector: selectorString(selector) })).items;
}

const running = (pod: V1Pod, container: string) => [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])]
  .some((cs) => cs.name === container && cs.state?.running);

/** The containers that have a log (started), of the pods of the chosen workloads, oldest pod first. */
export async function logSources(cluster: Cluster, plan: Plan, objectsOf: (step: string) => Manifest[], stepName?: string): Promise<{ namespace: string; sources: LogSource[] }> {
  const step = stepName === undefined ? undefined : plan.steps.find((s) => s.name === stepName);
  if (stepName !== undefined && !step) throw new BadInput(`no step ${stepName} in plan ${plan.name} (steps: ${plan.steps.map((s) => s.name).join(', ')})`);
  // a step: its Jobs' and Deployments' pods; the plan: its running services, every Deployment's
  const pods = await podsOfWorkloads(cluster, step ? workloadsOf(plan, objectsOf, ['Job', 'Deployment'], [step]) : workloadsOf(plan, objectsOf, ['Deployment']));
  const sources = pods.flatMap((p) => startedContainers(p).map((c) => ({ pod: p.metadata?.name ?? '', container: c, running: running(p, c) })));
  return { namespace: plan.namespace, sources };
}

/** The saved logs of a step in the newest attempt (of any run series: src/runtime/core/run-dirs.ts) that has any: `{ runDir, files }`. */
export function savedLogs(plan: Plan, step: string, runsDir = defaultRunsDir(plan.namespace, plan.name)): { runDir: string; files: string[] } | undefined {
  for (const attempt of attemptsNewestFirst(runsDir)) {
    const dir = path.join(attempt, safeComponent(step));
    let files: string[];
    try {
      files = fs.readdirSync(dir).filter((f) => f.endsWith('.log')).sort();
    } catch {
      continue;
    }
    if (files.length) return { runDir: attempt, files: files.map((f) => path.join(dir, f)) };
  }
  return undefined;
}

/** Each line of `text` with `prefix`, a last line without its newline completed. */
export function prefixed(prefix: string, text: string): string {
  if (text === '') return '';
  const body = text.endsWith('\n') ? text.slice(0, -1) : text;
  return `${body.split('\n').map((l) => `${prefix}${l}`).join('\n')}\n`;
}

export interface LogsOutput {
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
  /** Called with what stops the followed streams (Ctrl-C). */
  readonly onStop?: (stop: () => void) => void;
}

/**
 * Prints the logs: each line prefixed `[pod/container] ` (as `kubectl logs --prefix`); with
 * `follow`, the running containers' new lines until every one has ended. Returns how many
 * containers were shown; throws BadInput when there is nothing at all to show.
 */
export async function showLogs(cluster: Cluster, plan: Plan, objectsOf: (step: string) => Manifest[], o: LogsOptions, io: LogsOutput): Promise<number> {
  const { namespace, sources } = await logSources(cluster, plan, objectsOf, o.step);
  if (sources.length === 0) {
    const saved = o.step === undefined ? undefined : savedLogs(plan, o.step, o.runsDir);
    if (!saved) {
      throw new BadInput(o.step === undefined
        ? `no pod of plan ${plan.name} runs in namespace ${namespace} (uyuni-cdk status shows where the plan is)`
        : `step ${o.step} has no pods in namespace ${namespace} and no saved logs in ${o.runsDir ?? defaultRunsDir(plan.namespace, plan.name)}`);
    }
    io.err(`uyuni-cdk: the pods of step ${o.step} are gone; its logs as run saved them in ${saved.runDir}\n`);
    for (const f of saved.files) io.out(prefixed(`[${path.basename(f, '.log').replace(/\.(?=[^.]*$)/, '/')}] `, fs.readFileSync(f, 'utf8')));
    return saved.files.length;
  }
  const tag = (s: LogSource) => `[${s.pod}/${s.container}] `;
  if (!o.follow) {
    for (const s of sources) io.out(prefixed(tag(s), await cluster.readLog(namespace, s.pod, s.container, o.tail)));
    return sources.length;
  }
  // Following: what ended is printed whole; the running ones stream, line by line, until they end.
  for (const s of sources.filter((x) => !x.running)) io.out(prefixed(tag(s), await cluster.readLog(namespace, s.pod, s.container, o.tail)));
  const handles: WatchHandle[] = [];
  const ended = Promise.all(sources.filter((x) => x.running).map((s) => new Promise<void>((resolve, reject) => {
    let partial = '';
    const lines = (text: string) => {
      const all = partial + text;
      const cut = all.lastIndexOf('\n') + 1;
      partial = all.slice(cut);
      io.out(prefixed(tag(s), all.slice(0, cut)));
    };
    const end = () => {
      io.out(prefixed(tag(s), partial));
      partial = '';
      resolve();
    };
    cluster.followLog(namespace, s.pod, s.container, lines, end).then((h) => { handles.push(h); }, reject);
  })));
  const stopped = new Promise<void>((resolve) => io.onStop?.(() => {
    for (const h of handles) h.stop();
    resolve();
  }));
  await Promise.race([ended, stopped]);
  return sources.length;
}
