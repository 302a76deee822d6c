/**
 * Waits for a step's objects: one watch per wait (by name), one pod watch per Job, one pod and
 * one ReplicaSet watch per namespace with rollouts, readiness decided by the rules in readiness/.
 * Resolves when every wait is done; rejects when a rule says failed, a Job's or a rollout's pod
 * stays stuck past the grace window, or the step's time runs out.
 */
import type { V1Deployment, V1LabelSelector, V1Pod, V1ReplicaSet } from '@kubernetes/client-node';
import type { ObjectRef, Wait } from '../plan/types';
import { Cluster, refString, WatchHandle } from './client';
import {
  blockerKind, describePod, podBlocker, podProgress, podReady, podSummary, rolloutPods, selectorString, storageClassOf, stuckTooLong, Verdict, verdictFor, waiting,
} from './readiness';
import type { StepLogs } from './logs';
import type { WaitingPod } from './progress';

export interface WaitOutcome {
  readonly ok: boolean;
  /** On failure: why, naming the object and reason. */
  readonly reason?: string;
  /** On failure: the Jobs whose pods to report. */
  readonly failedJobs?: string[];
  /** On failure: other pods to report (a rollout's). */
  readonly failedPods?: V1Pod[];
}

export interface WaiterOptions {
  readonly cluster: Cluster;
  readonly waits: readonly Wait[];
  /** The step's Jobs: their pods are watched for logs and for stuck reasons. */
  readonly jobs: readonly ObjectRef[];
  readonly logs?: StepLogs;
  /** Absolute time (ms) the step must be done by. */
  readonly deadline: number;
  readonly deadlineReason: string;
  /** How long a pod may stay stuck (ImagePullBackOff, Unschedulable, ...) before the step fails. */
  readonly stuckGraceMs: number;
  /** Called with what still blocks and the pods waited on, on every change and every tick. */
  readonly onProgress: (blockers: string[], pods: WaitingPod[]) => void;
  /** Objects as the apply answered them: when they already satisfy every wait, no watch is opened. */
  readonly initial?: ReadonlyArray<any>;
  readonly now?: () => number;
}

/** What the waiter read of a namespace's ReplicaSets and pods (undefined: not listed yet). */
interface RolloutPods {
  sets?: V1ReplicaSet[];
  pods?: V1Pod[];
  /** The pods cannot be read (the watch keeps failing). */
  unreadable?: boolean;
}

export class StepWaiter {
  private readonly objects = new Map<number, any>();
  private readonly seen = new Set<number>();
  private readonly pods = new Map<string, Map<string, any>>();
  private readonly stuckSince = new Map<string, { blocker: string; since: number }>();
  /** Per namespace with rollouts: its ReplicaSets and pods, once listed. */
  private readonly rollouts = new Map<string, RolloutPods>();
  private storageClasses?: any[];
  private readonly handles: WatchHandle[] = [];
  private timer?: NodeJS.Timeout;
  private finish?: (o: WaitOutcome) => void;
  private readonly now: () => number;
  /** Pods of each Job, current (for logs and the failure report). */
  readonly jobPods = new Map<string, any[]>();

  constructor(private readonly o: WaiterOptions) {
    this.now = o.now ?? Date.now;
  }

  async run(): Promise<WaitOutcome> {
    if (this.o.waits.some((w) => w.for === 'bound')) {
      this.storageClasses = (await this.o.cluster.list({ apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass' }).catch(() => ({ items: [] }))).items;
    }
    const outcome = new Promise<WaitOutcome>((resolve) => { this.finish = resolve; });
    if (this.o.initial && this.o.jobs.length === 0) {
      this.o.waits.forEach((w, i) => {
        const found = this.o.initial!.find((x) => x?.kind === w.object.kind && x?.metadata?.name === w.object.name && (x.metadata.namespace ?? '') === (w.object.namespace ?? ''));
        if (found) {
          this.objects.set(i, found);
          this.seen.add(i);
        }
      });
      if (this.seen.size === this.o.waits.length) {
        this.evaluate();
        if (!this.finish) return outcome;
        this.seen.clear();
        this.objects.clear();
      }
    }
    let watchError: Error | undefined;
    const onError = (e: Error) => { watchError = e; this.evaluate(); };
    // One watch per kind and namespace (by name when it is one object): a step of 27 volumes
    // opens one watch, not 27.
    const groups = new Map<string, number[]>();
    this.o.waits.forEach((w, i) => {
      const key = `${w.object.apiVersion}|${w.object.kind}|${w.object.namespace ?? ''}`;
      groups.set(key, [...(groups.get(key) ?? []), i]);
    });
    for (const idx of groups.values()) {
      const first = this.o.waits[idx[0]].object;
      const names = new Set(idx.map((i) => this.o.waits[i].object.name));
      this.handles.push(this.o.cluster.watch(
        {
          apiVersion: first.apiVersion, kind: first.kind, namespace: first.namespace,
          fieldSelector: names.size === 1 ? `metadata.name=${first.name}` : undefined,
        },
        (items) => {
          const byName = new Map([...items.values()].map((x) => [x.metadata?.name, x]));
          for (const i of idx) {
            this.seen.add(i);
            this.objects.set(i, byName.get(this.o.waits[i].object.name));
          }
          this.evaluate();
        }, onError));
    }
    // A rollout's pods, for the progress line and to tell a slow start from a failure: one pod
    // watch and one ReplicaSet watch per namespace, by the Deployment's selector when it is one.
    const rolloutNs = new Map<string, ObjectRef[]>();
    for (const w of this.o.waits.filter((x) => x.for === 'rollout')) {
      rolloutNs.set(w.object.namespace ?? '', [...(rolloutNs.get(w.object.namespace ?? '') ?? []), w.object]);
    }
    // They only inform: when they cannot be read (RBAC), the rollout is judged as before, by
    // the Deployment alone, instead of failing the step.
    for (const [ns, refs] of rolloutNs) {
      const seen: RolloutPods = {};
      this.rollouts.set(ns, seen);
      const selector = new Set(refs.map((r) => r.name)).size === 1 ? this.appliedSelector(refs[0]) : undefined;
      const q = { namespace: ns || undefined, labelSelector: (selector && selectorString(selector)) || undefined };
      this.handles.push(this.o.cluster.watch({ apiVersion: 'apps/v1', kind: 'ReplicaSet', ...q }, (items) => {
        seen.sets = [...items.values()];
        this.evaluate();
      }, () => {
        seen.sets ??= []; // pods by selector then
        this.evaluate();
      }));
      this.handles.push(this.o.cluster.watch({ apiVersion: 'v1', kind: 'Pod', ...q }, (items) => {
        seen.pods = [...items.values()];
        seen.unreadable = false;
        this.evaluate();
      }, () => {
        seen.unreadable = true;
        this.evaluate();
      }));
    }
    for (const job of this.o.jobs) {
      this.pods.set(job.name, new Map());
      this.handles.push(this.o.cluster.watch(
        { apiVersion: 'v1', kind: 'Pod', namespace: job.namespace, labelSelector: `job-name=${job.name}` },
        (items) => {
          this.pods.set(job.name, new Map(items));
          this.evaluate();
        }, onError));
    }
    this.timer = setInterval(() => this.evaluate(), 250);
    this.errorCheck = () => watchError;
    this.evaluate();
    try {
      return await outcome;
    } finally {
      this.stop();
    }
  }

  private errorCheck: () => Error | undefined = () => undefined;

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    for (const h of this.handles) h.stop();
    this.handles.length = 0;
  }

  /** The selector of a Deployment as the apply answered it (undefined: not applied in this step). */
  private appliedSelector(ref: ObjectRef): V1LabelSelector | undefined {
    const d: V1Deployment | undefined = (this.o.initial ?? []).find((x) => x?.kind === ref.kind && x?.metadata?.name === ref.name && (x.metadata.namespace ?? '') === (ref.namespace ?? ''));
    return d?.spec?.selector;
  }

  /**
   * The first of these pods stuck past the grace window. A blocker of the same kind keeps its
   * window (ErrImagePull and ImagePullBackOff alternate as the kubelet retries); no blocker ends it.
   */
  private stuck(pods: readonly V1Pod[], t: number): { pod: V1Pod; why: string } | undefined {
    for (const p of pods) {
      const key = `${p.metadata?.namespace}/${p.metadata?.name}`;
      const blocker = podBlocker(p);
      const prev = this.stuckSince.get(key);
      if (!blocker) this.stuckSince.delete(key);
      else if (!prev || blockerKind(prev.blocker) !== blockerKind(blocker)) this.stuckSince.set(key, { blocker, since: t });
      else prev.blocker = blocker;
      const s = this.stuckSince.get(key);
      const why = stuckTooLong(s?.blocker, s?.since, t, this.o.stuckGraceMs);
      if (why) return { pod: p, why };
    }
    return undefined;
  }

  /** The Job object of a step Job, when one of the waits watches it. */
  jobObject(name: string): any | undefined {
    const i = this.o.waits.findIndex((w) => w.object.kind === 'Job' && w.object.name === name);
    return i >= 0 ? this.objects.get(i) : undefined;
  }

  private evaluate(): void {
    if (!this.finish) return;
    const t = this.now();
    const blockers: string[] = [];
    const progress: WaitingPod[] = [];
    const err = this.errorCheck();
    if (err) return this.end({ ok: false, reason: err.message });

    // Pods of the step's Jobs: logs, and stuck reasons that never fail a Job by themselves.
    for (const job of this.o.jobs) {
      const uid = this.jobObject(job.name)?.metadata?.uid;
      const pods = [...(this.pods.get(job.name)?.values() ?? [])].filter((p) =>
        !uid || p.metadata?.labels?.['controller-uid'] === uid || p.metadata?.labels?.['batch.kubernetes.io/controller-uid'] === uid
        || (p.metadata?.ownerReferences ?? []).some((r: any) => r.uid === uid));
      this.jobPods.set(job.name, pods);
      this.o.logs?.observe(pods);
      const stuck = this.stuck(pods, t);
      if (stuck) return this.end({ ok: false, reason: `pod ${stuck.pod.metadata?.name} of Job ${job.name} is stuck: ${stuck.why}`, failedJobs: [job.name] });
      progress.push(...pods.map((p) => ({ owner: refString(job), ...podProgress(p) })));
    }

    for (const [i, w] of this.o.waits.entries()) {
      if (!this.seen.has(i)) {
        blockers.push(`${refString(w.object)} ${w.for}: listing`);
        continue;
      }
      const obj = this.objects.get(i);
      let extra = '';
      let v: Verdict;
      if (w.for === 'rollout') {
        const seen = this.rollouts.get(w.object.namespace ?? '');
        const pods = obj && seen?.sets && seen.pods ? rolloutPods(obj, seen.sets, seen.pods) : undefined;
        if (pods) {
          const stuck = this.stuck(pods, t);
          if (stuck) return this.end({ ok: false, reason: `pod ${stuck.pod.metadata?.name} of ${refString(w.object)} is stuck: ${stuck.why}`, failedPods: [stuck.pod] });
          const shown = pods.slice(0, 3).map((p) => describePod(podProgress(p)));
          if (shown.length) extra = `; ${shown.join('; ')}${pods.length > 3 ? ` (+${pods.length - 3} more pods)` : ''}`;
          progress.push(...pods.map((p) => ({ owner: refString(w.object), ...podProgress(p) })));
        }
        v = verdictFor('rollout', { object: obj, pods });
        // Past its progress deadline may be a slow start: decided once its pods are known.
        if (v.state === 'failed' && !pods && !seen?.unreadable) v = waiting('listing its pods');
        if (v.state === 'failed') return this.end({ ok: false, reason: `${refString(w.object)}: ${v.reason}`, failedPods: (pods ?? []).filter((p) => !podReady(p)) });
      } else {
        v = verdictFor(w.for, { object: obj, storageClass: w.for === 'bound' && obj ? storageClassOf(obj, this.storageClasses ?? []) : undefined });
        if (v.state === 'failed') return this.end({ ok: false, reason: `${refString(w.object)}: ${v.reason}`, failedJobs: w.object.kind === 'Job' ? [w.object.name] : [] });
        if (w.object.kind === 'Job') {
          const pods = this.jobPods.get(w.object.name) ?? [];
          if (pods.length) extra = `; pods ${pods.map((p) => `${p.metadata.name} ${podSummary(p)}`).join(', ')}`;
        }
      }
      if (v.state === 'waiting') blockers.push(`${refString(w.object)} ${w.for}: ${v.reason}${extra}`);
    }
    if (blockers.length === 0) return this.end({ ok: true });
    if (t >= this.o.deadline) return this.end({ ok: false, reason: `${this.o.deadlineReason}, still waiting for: ${blockers.join('; ')}` });
    this.o.onProgress(blockers, progress);
  }

  private end(o: WaitOutcome): void {
    const f = this.finish;
    this.finish = undefined;
    f?.(o);
  }
}
