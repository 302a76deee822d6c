/**
 * Waits for a step's objects: one watch per wait (by name), one pod watch per Job, one pod and
 * one ReplicaSet watch per namespace with rollouts, readiness decided by the rules in readiness/.
 * Resolves when every wait is done; rejects when a rule says failed, a Job's or a rollout's pod
 * stays stuck past the grace window, or the step's time runs out.
 */
import type { CoreV1Event, KubernetesObject, V1Deployment, V1Job, V1LabelSelector, V1PersistentVolumeClaim, V1Pod, V1ReplicaSet, V1StorageClass } from '@kubernetes/client-node';
import type { ObjectRef, Wait } from '../../plan/types';
import { apiSilenceBounds } from '../../kube/backoff';
import { Cluster, refString } from '../../kube/cluster';
import { isPodOfJob, jobPodQuery } from '../core/jobs';
import type { StepLogs } from './step-logs';
import { isObject } from '../core/manifests';
import { inStartupProbe, objectId, WaitingPod } from '../core/events';
import {
  blockerKind, describePod, podBlocker, podProgress, podReady, podSummary, rolloutPods, selectorString, storageClassOf, stuckTooLong, Verdict, verdictFor, waiting,
} from '../readiness';
import type { WatchHandle } from '../../kube/list-watch';

export interface WaitOutcome {
  readonly ok: boolean;
  /** On failure: why, naming the object and reason. */
  readonly reason?: string;
  /** On failure: the Jobs whose pods to report. */
  readonly failedJobs?: string[];
  /** On failure: other pods to report (a rollout's). */
  readonly failedPods?: V1Pod[];
  /** Timed out: the pods still in their startup probe then (coming up, not failing). */
  readonly starting?: WaitingPod[];
  /** The API server stopped answering (apiSilence): what the step's Jobs do is unknown. */
  readonly apiSilent?: boolean;
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
  /** The cluster's StorageClasses (for `bound` waits), read beside the step's applies (readStorageClasses); else read first. */
  readonly storageClasses?: Promise<V1StorageClass[]>;
  /** Objects as the apply answered them: when they already satisfy every wait, no watch is opened. */
  readonly initial?: readonly KubernetesObject[];
  readonly now?: () => number;
}

/** What the waiter read of a namespace's ReplicaSets and pods (undefined: not listed yet). */
interface RolloutPods {
  sets?: V1ReplicaSet[];
  pods?: V1Pod[];
  /** The pods cannot be read (the watch keeps failing). */
  unreadable?: boolean;
}

/** One evaluation: what still blocks, the pods shown, the moment. */
interface Tick {
  readonly t: number;
  readonly blockers: string[];
  readonly progress: WaitingPod[];
}

/** One wait's verdict, or the end of the wait (a failure found on the way). */
type Checked = { readonly verdict: Verdict; readonly extra: string } | { readonly end: WaitOutcome };

/**
 * The StorageClasses a `bound` wait judges claims by (a WaitForFirstConsumer claim is done while
 * Pending). Never rejects: unreadable, a claim is waited for until Bound.
 */
export function readStorageClasses(cluster: Cluster): Promise<V1StorageClass[]> {
  return cluster.list<V1StorageClass>({ apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass' }).then((l) => l.items, () => []);
}

export class StepWaiter {
  /** The object of each wait (by index), once its watch listed. */
  private readonly objects = new Map<number, KubernetesObject | undefined>();
  private readonly seen = new Set<number>();
  private readonly pods = new Map<string, ReadonlyMap<string, V1Pod>>();
  private readonly stuckSince = new Map<string, { blocker: string; since: number }>();
  /** Per namespace with rollouts: its ReplicaSets and pods, once listed. */
  private readonly rollouts = new Map<string, RolloutPods>();
  private storageClasses?: V1StorageClass[];
  private readonly handles: WatchHandle[] = [];
  private timer?: NodeJS.Timeout;
  private finish?: (o: WaitOutcome) => void;
  private watchError?: Error;
  private readonly now: () => number;
  /** The last state of each wait's object while it existed (by index). */
  private readonly lastSeen = new Map<number, KubernetesObject>();
  /** Waits whose object was deleted (or is being deleted) during the wait: its last state. */
  private readonly gone = new Map<number, KubernetesObject>();
  /** FailedCreate Events per namespace of the step's Jobs and rollouts (undefined: not listed, or unreadable). */
  private readonly failedCreates = new Map<string, CoreV1Event[]>();
  /** Since when (waiter time) an owner's pods are refused, by owner uid. */
  private readonly refusedSince = new Map<string, number>();
  /** What refuses an owner's pods right now, for the progress line (`Job/<name>`, `<ref>`). */
  private readonly refusedNow = new Map<string, string>();
  /** Pods of each Job, current (for logs and the failure report). */
  readonly jobPods = new Map<string, V1Pod[]>();
  /** A GET /version asked because the API was quiet, while it is under way. */
  private probing = false;

  constructor(private readonly o: WaiterOptions) {
    this.now = o.now ?? Date.now;
  }

  async run(): Promise<WaitOutcome> {
    if (this.o.waits.some((w) => w.for === 'bound')) this.storageClasses = await (this.o.storageClasses ?? readStorageClasses(this.o.cluster));
    const outcome = new Promise<WaitOutcome>((resolve) => { this.finish = resolve; });
    if (this.satisfiedByApply()) return outcome;
    this.watchWaits();
    this.watchRollouts();
    this.watchJobPods();
    this.watchFailedCreates();
    this.timer = setInterval(() => this.evaluate(), 250);
    this.evaluate();
    try {
      return await outcome;
    } finally {
      this.stop();
    }
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    for (const h of this.handles) h.stop();
    this.handles.length = 0;
  }

  /** The Job object of a step Job, when one of the waits watches it. */
  jobObject(name: string): V1Job | undefined {
    const i = this.o.waits.findIndex((w) => w.object.kind === 'Job' && w.object.name === name);
    return i >= 0 ? this.objects.get(i) : undefined;
  }

  /** Without Jobs, the objects the apply answered may already satisfy every wait: then no watch. */
  private satisfiedByApply(): boolean {
    if (!this.o.initial || this.o.jobs.length > 0) return false;
    this.o.waits.forEach((w, i) => {
      const found = this.o.initial!.find((x) => isObject(x, w.object));
      if (found) {
        this.objects.set(i, found);
        this.seen.add(i);
      }
    });
    if (this.seen.size !== this.o.waits.length) return false;
    this.evaluate();
    if (!this.finish) return true;
    this.seen.clear();
    this.objects.clear();
    return false;
  }

  private readonly onError = (e: Error) => {
    this.watchError = e;
    this.evaluate();
  };

  /** One watch per kind and namespace (by name when it is one object): a step of 27 volumes opens one watch, not 27. */
  private watchWaits(): void {
    const groups = new Map<string, number[]>();
    this.o.waits.forEach((w, i) => {
      const key = `${w.object.apiVersion}|${w.object.kind}|${w.object.namespace ?? ''}`;
      groups.set(key, [...(groups.get(key) ?? []), i]);
    });
    for (const idx of groups.values()) {
      const first = this.o.waits[idx[0]].object;
      const names = new Set(idx.map((i) => this.o.waits[i].object.name));
      const q = { apiVersion: first.apiVersion, kind: first.kind, namespace: first.namespace, fieldSelector: names.size === 1 ? `metadata.name=${first.name}` : undefined };
      this.handles.push(this.o.cluster.watch(q, (items) => {
        const byName = new Map([...items.values()].map((x) => [x.metadata?.name, x]));
        for (const i of idx) {
          this.seen.add(i);
          const obj = byName.get(this.o.waits[i].object.name);
          this.objects.set(i, obj);
          this.noteGone(i, obj);
        }
        this.evaluate();
      }, this.onError));
    }
  }

  /**
   * A rollout's pods, for the progress line and to tell a slow start from a failure: one pod
   * watch and one ReplicaSet watch per namespace, by the Deployment's selector when it is one.
   * They only inform: when they cannot be read (RBAC), the rollout is judged as before, by the
   * Deployment alone, instead of failing the step.
   */
  private watchRollouts(): void {
    const rolloutNs = new Map<string, ObjectRef[]>();
    for (const w of this.o.waits.filter((x) => x.for === 'rollout')) {
      rolloutNs.set(w.object.namespace ?? '', [...(rolloutNs.get(w.object.namespace ?? '') ?? []), w.object]);
    }
    for (const [ns, refs] of rolloutNs) {
      const seen: RolloutPods = {};
      this.rollouts.set(ns, seen);
      const selector = new Set(refs.map((r) => r.name)).size === 1 ? this.appliedSelector(refs[0]) : undefined;
      const q = { namespace: ns || undefined, labelSelector: (selector && selectorString(selector)) || undefined };
      this.handles.push(this.o.cluster.watch<V1ReplicaSet>({ apiVersion: 'apps/v1', kind: 'ReplicaSet', ...q }, (items) => {
        seen.sets = [...items.values()];
        this.evaluate();
      }, () => {
        seen.sets ??= []; // pods by selector then
        this.evaluate();
      }));
      this.handles.push(this.o.cluster.watch<V1Pod>({ apiVersion: 'v1', kind: 'Pod', ...q }, (items) => {
        seen.pods = [...items.values()];
        seen.unreadable = false;
        this.evaluate();
      }, () => {
        seen.unreadable = true;
        this.evaluate();
      }));
    }
  }

  /**
   * An object that existed during its wait (or that the apply answered) and is now gone, or has
   * a deletionTimestamp: someone deleted it, and waiting for it cannot end well.
   */
  private noteGone(i: number, obj: KubernetesObject | undefined): void {
    const w = this.o.waits[i];
    if (w.for === 'deleted' || this.gone.has(i)) return;
    const before = this.lastSeen.get(i) ?? (this.o.initial ?? []).find((x) => isObject(x, w.object));
    if (obj && !obj.metadata?.deletionTimestamp) {
      this.lastSeen.set(i, obj);
      return;
    }
    if (obj) this.gone.set(i, obj);
    else if (before) this.gone.set(i, before);
  }

  /**
   * FailedCreate Events of the namespaces with step Jobs or rollouts: a controller whose pods
   * admission refuses (quota, PodSecurity, a webhook) creates none, so only its Events tell why.
   * They only inform: unreadable Events (RBAC) leave the wait as it was.
   */
  private watchFailedCreates(): void {
    const namespaces = new Set([...this.o.jobs.map((j) => j.namespace ?? ''), ...this.o.waits.filter((w) => w.for === 'rollout').map((w) => w.object.namespace ?? '')]);
    for (const ns of namespaces) {
      this.handles.push(this.o.cluster.watch<CoreV1Event>({ apiVersion: 'v1', kind: 'Event', namespace: ns || undefined, fieldSelector: 'reason=FailedCreate' }, (items) => {
        this.failedCreates.set(ns, [...items.values()]);
        this.evaluate();
      }, () => undefined));
    }
  }

  /**
   * The newest FailedCreate of one of these owners while it has fewer live pods than it wants,
   * and how long its pods have been refused; undefined: nothing refused.
   */
  private refused(ns: string | undefined, owners: ReadonlyArray<{ uid?: string; short: boolean }>, t: number): { message: string; count: number; since: number } | undefined {
    const events = this.failedCreates.get(ns ?? '') ?? [];
    let found: { message: string; count: number; since: number } | undefined;
    for (const owner of owners) {
      if (!owner.uid) continue;
      const mine = owner.short ? events.filter((e) => e.involvedObject?.uid === owner.uid) : [];
      if (!mine.length) {
        this.refusedSince.delete(owner.uid);
        continue;
      }
      const last = mine.reduce((a, b) => (String(b.lastTimestamp ?? b.eventTime ?? '') > String(a.lastTimestamp ?? a.eventTime ?? '') ? b : a));
      const since = this.refusedSince.get(owner.uid) ?? t;
      this.refusedSince.set(owner.uid, since);
      found = { message: last.message ?? 'FailedCreate', count: last.count ?? 1, since };
    }
    return found;
  }

  private refusal(what: string, r: { message: string; count: number; since: number }, t: number): string | undefined {
    if (t - r.since < this.o.stuckGraceMs) return undefined;
    return `${what} cannot create its pods: ${r.message} (FailedCreate${r.count > 1 ? `, ${r.count} times` : ''})`;
  }

  private watchJobPods(): void {
    for (const job of this.o.jobs) {
      this.pods.set(job.name, new Map());
      this.handles.push(this.o.cluster.watch<V1Pod>(jobPodQuery(job), (items) => {
        this.pods.set(job.name, new Map(items));
        this.evaluate();
      }, this.onError));
    }
  }

  /** The selector of a Deployment as the apply answered it (undefined: not applied in this step). */
  private appliedSelector(ref: ObjectRef): V1LabelSelector | undefined {
    const d: V1Deployment | undefined = (this.o.initial ?? []).find((x) => isObject(x, ref));
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

  /**
   * The API server has said nothing for a while (apiSilenceBounds): probe it; name the silence on
   * the live line instead of the state as of then; past the bound, end the wait. True: said.
   */
  private apiSilence(): boolean {
    const limits = this.o.cluster.limits;
    const last = limits?.lastAnswerAt;
    if (last === undefined) return false;
    const b = apiSilenceBounds(limits.requestTimeoutMs);
    const silent = Date.now() - last;
    if (silent >= b.probeMs && !this.probing) {
      this.probing = true;
      void this.o.cluster.probe().finally(() => { this.probing = false; });
    }
    if (silent < b.nameMs) return false;
    const since = `the API server has not answered since ${new Date(last).toISOString()} (${Math.round(silent / 1000)} s: no list, watch event, bookmark or GET /version)`;
    if (silent >= b.failMs || this.now() >= this.o.deadline) {
      this.end({
        ok: false, apiSilent: true,
        reason: `${since}; stopped waiting after ${Math.round(b.failMs / 1000)} s: what the step's Jobs and pods do now is unknown (they may have finished)`,
      });
    } else {
      this.o.onProgress([`${since}; what is known is as of then`], []);
    }
    return true;
  }

  private evaluate(): void {
    if (!this.finish) return;
    if (this.apiSilence()) return;
    const tick: Tick = { t: this.now(), blockers: [], progress: [] };
    // Past the deadline the watches are cut too: the timeout is the reason then, with what still blocks.
    if (this.watchError && tick.t < this.o.deadline) return this.end({ ok: false, reason: this.watchError.message });
    const [goneAt, last] = [...this.gone][0] ?? [];
    if (last && goneAt !== undefined) {
      const w = this.o.waits[goneAt];
      return this.end({ ok: false, reason: goneReason(w, last), failedJobs: w.object.kind === 'Job' ? [w.object.name] : [] });
    }
    const stuckJob = this.checkJobPods(tick);
    if (stuckJob) return this.end(stuckJob);
    for (const [i, w] of this.o.waits.entries()) {
      if (!this.seen.has(i)) {
        tick.blockers.push(`${refString(w.object)} ${w.for}: listing`);
        continue;
      }
      const c = w.for === 'rollout' ? this.checkRollout(w, this.objects.get(i), tick) : this.checkOther(w, this.objects.get(i));
      if ('end' in c) return this.end(c.end);
      if (c.verdict.state === 'waiting') tick.blockers.push(`${refString(w.object)} ${w.for}: ${c.verdict.reason}${c.extra}`);
    }
    if (tick.blockers.length === 0) return this.end({ ok: true });
    if (tick.t >= this.o.deadline) {
      const starting = tick.progress.filter(inStartupProbe);
      return this.end({ ok: false, reason: `${this.o.deadlineReason}, still waiting for: ${tick.blockers.join('; ')}`, ...(starting.length ? { starting } : {}) });
    }
    this.o.onProgress(tick.blockers, tick.progress);
  }

  /** Pods of the step's Jobs: logs, and stuck reasons that never fail a Job by themselves. */
  private checkJobPods(tick: Tick): WaitOutcome | undefined {
    for (const job of this.o.jobs) {
      const uid = this.jobObject(job.name)?.metadata?.uid;
      const pods = [...(this.pods.get(job.name)?.values() ?? [])].filter((p) => isPodOfJob(p, uid));
      this.jobPods.set(job.name, pods);
      this.o.logs?.observe(pods);
      const stuck = this.stuck(pods, tick.t);
      if (stuck) return { ok: false, reason: `pod ${stuck.pod.metadata?.name} of Job ${job.name} is stuck: ${stuck.why}`, failedJobs: [job.name] };
      const live = pods.filter((p) => !p.metadata?.deletionTimestamp && p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed');
      const refused = this.refused(job.namespace, [{ uid, short: live.length === 0 }], tick.t);
      if (refused) {
        const why = this.refusal(`Job ${job.name}`, refused, tick.t);
        if (why) return { ok: false, reason: why, failedJobs: [job.name] };
        this.refusedNow.set(`Job/${job.name}`, refused.message);
      } else this.refusedNow.delete(`Job/${job.name}`);
      tick.progress.push(...pods.map((p) => ({ owner: objectId(job), ...podProgress(p) })));
    }
    return undefined;
  }

  private checkRollout(w: Wait, obj: V1Deployment | undefined, tick: Tick): Checked {
    const seen = this.rollouts.get(w.object.namespace ?? '');
    const pods = obj && seen?.sets && seen.pods ? rolloutPods(obj, seen.sets, seen.pods) : undefined;
    let extra = '';
    if (pods) {
      const stuck = this.stuck(pods, tick.t);
      if (stuck) return { end: { ok: false, reason: `pod ${stuck.pod.metadata?.name} of ${refString(w.object)} is stuck: ${stuck.why}`, failedPods: [stuck.pod] } };
      const shown = pods.slice(0, 3).map((p) => describePod(podProgress(p)));
      if (shown.length) extra = `; ${shown.join('; ')}${pods.length > 3 ? ` (+${pods.length - 3} more pods)` : ''}`;
      tick.progress.push(...pods.map((p) => ({ owner: objectId(w.object), ...podProgress(p) })));
    }
    if (obj && seen?.sets) {
      const podsOf = (uid?: string) => (seen.pods ?? []).filter((p) => !p.metadata?.deletionTimestamp && p.metadata?.ownerReferences?.some((r) => r.uid === uid)).length;
      const owned = seen.sets.filter((rs) => rs.metadata?.ownerReferences?.some((r) => r.uid === obj.metadata?.uid));
      const refused = this.refused(w.object.namespace, owned.map((rs) => ({ uid: rs.metadata?.uid, short: podsOf(rs.metadata?.uid) < (rs.spec?.replicas ?? 1) })), tick.t);
      if (refused) {
        const why = this.refusal(refString(w.object), refused, tick.t);
        if (why) return { end: { ok: false, reason: why, failedPods: [] } };
        extra += `; pods refused: ${refused.message}`;
      }
    }
    let v = verdictFor('rollout', { object: obj, pods });
    // Past its progress deadline may be a slow start: decided once its pods are known.
    if (v.state === 'failed' && !pods && !seen?.unreadable) v = waiting('listing its pods');
    if (v.state === 'failed') return { end: { ok: false, reason: `${refString(w.object)}: ${v.reason}`, failedPods: (pods ?? []).filter((p) => !podReady(p)) } };
    return { verdict: v, extra };
  }

  private checkOther(w: Wait, obj: KubernetesObject | undefined): Checked {
    const storageClass = w.for === 'bound' && obj ? storageClassOf(obj as V1PersistentVolumeClaim, this.storageClasses ?? []) : undefined;
    const v = verdictFor(w.for, { object: obj, storageClass });
    if (v.state === 'failed') return { end: { ok: false, reason: `${refString(w.object)}: ${v.reason}`, failedJobs: w.object.kind === 'Job' ? [w.object.name] : [] } };
    const pods = w.object.kind === 'Job' ? this.jobPods.get(w.object.name) ?? [] : [];
    const refused = w.object.kind === 'Job' ? this.refusedNow.get(`Job/${w.object.name}`) : undefined;
    const extra = (pods.length ? `; pods ${pods.map((p) => `${p.metadata?.name} ${podSummary(p)}`).join(', ')}` : '') + (refused ? `; pods refused: ${refused}` : '');
    return { verdict: v, extra };
  }

  private end(o: WaitOutcome): void {
    const f = this.finish;
    this.finish = undefined;
    f?.(o);
  }
}

/**
 * Why a wait ends because its object was deleted, naming who last wrote it where the API says
 * (managedFields: the newest entry's manager; a delete itself records no manager).
 */
function goneReason(w: Wait, last: KubernetesObject): string {
  const fields = [...(last.metadata?.managedFields ?? [])].sort((a, b) => String(a.time ?? '').localeCompare(String(b.time ?? '')));
  const newest = fields[fields.length - 1];
  const by = newest?.manager ? `; last written by "${newest.manager}"${newest.time ? ` at ${new Date(newest.time).toISOString()}` : ''} (${newest.operation ?? 'Update'})` : '';
  const when = last.metadata?.deletionTimestamp ? ` (deletionTimestamp ${new Date(last.metadata.deletionTimestamp).toISOString()})` : '';
  return `${refString(w.object)} was deleted while waiting for ${w.for}${when}${by}: someone else removed it; find who (kubectl get events, the audit log), then resume the run to apply it again`;
}
