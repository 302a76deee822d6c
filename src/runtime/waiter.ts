/**
 * Waits for a step's objects: one watch per wait (by name), one pod watch per Job, readiness
 * decided by the rules in readiness/. Resolves when every wait is done; rejects when a rule
 * says failed, a Job's pod stays stuck past the grace window, or the step's time runs out.
 */
import type { ObjectRef, Wait } from '../plan/types';
import { Cluster, refString, WatchHandle } from './client';
import { podBlocker, podSummary, storageClassOf, stuckTooLong, Verdict, verdictFor } from './readiness';
import type { StepLogs } from './logs';

export interface WaitOutcome {
  readonly ok: boolean;
  /** On failure: why, naming the object and reason. */
  readonly reason?: string;
  /** On failure: the Jobs whose pods to report. */
  readonly failedJobs?: string[];
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
  /** Called with what still blocks, on every change and every tick. */
  readonly onProgress: (blockers: string[]) => void;
  /** Objects as the apply answered them: when they already satisfy every wait, no watch is opened. */
  readonly initial?: ReadonlyArray<any>;
  readonly now?: () => number;
}

export class StepWaiter {
  private readonly objects = new Map<number, any>();
  private readonly seen = new Set<number>();
  private readonly pods = new Map<string, Map<string, any>>();
  private readonly stuckSince = new Map<string, { blocker: string; since: number }>();
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

  /** The Job object of a step Job, when one of the waits watches it. */
  jobObject(name: string): any | undefined {
    const i = this.o.waits.findIndex((w) => w.object.kind === 'Job' && w.object.name === name);
    return i >= 0 ? this.objects.get(i) : undefined;
  }

  private evaluate(): void {
    if (!this.finish) return;
    const t = this.now();
    const blockers: string[] = [];
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
      for (const p of pods) {
        const name = p.metadata.name;
        const blocker = podBlocker(p);
        const prev = this.stuckSince.get(name);
        if (!blocker) this.stuckSince.delete(name);
        else if (!prev || prev.blocker.split(':')[0] !== blocker.split(':')[0]) this.stuckSince.set(name, { blocker, since: t });
        const s = this.stuckSince.get(name);
        const fail = stuckTooLong(s?.blocker, s?.since, t, this.o.stuckGraceMs);
        if (fail) return this.end({ ok: false, reason: `pod ${name} of Job ${job.name} is stuck: ${fail}`, failedJobs: [job.name] });
      }
    }

    this.o.waits.forEach((w, i) => {
      if (!this.seen.has(i)) {
        blockers.push(`${refString(w.object)} ${w.for}: listing`);
        return;
      }
      const obj = this.objects.get(i);
      const v: Verdict = verdictFor(w.for, { object: obj, storageClass: w.for === 'bound' && obj ? storageClassOf(obj, this.storageClasses ?? []) : undefined });
      if (v.state === 'failed') {
        this.end({ ok: false, reason: `${refString(w.object)}: ${v.reason}`, failedJobs: w.object.kind === 'Job' ? [w.object.name] : [] });
        return;
      }
      if (v.state === 'waiting') {
        let extra = '';
        if (w.object.kind === 'Job') {
          const pods = this.jobPods.get(w.object.name) ?? [];
          if (pods.length) extra = `; pods ${pods.map((p) => `${p.metadata.name} ${podSummary(p)}`).join(', ')}`;
        }
        blockers.push(`${refString(w.object)} ${w.for}: ${v.reason}${extra}`);
      }
    });
    if (!this.finish) return;
    if (blockers.length === 0) return this.end({ ok: true });
    if (t >= this.o.deadline) return this.end({ ok: false, reason: `${this.o.deadlineReason}, still waiting for: ${blockers.join('; ')}` });
    this.o.onProgress(blockers);
  }

  private end(o: WaitOutcome): void {
    const f = this.finish;
    this.finish = undefined;
    f?.(o);
  }
}
