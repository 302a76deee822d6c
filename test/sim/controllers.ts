// The cluster's moving parts, as small functions on the virtual clock: scheduler + kubelet
// (pods run a JobScript and print its lines), the Job controller (1.31+ condition order),
// garbage collection on delete, Deployment/StatefulSet rollout status (a scripted Deployment:
// ReplicaSet, pods, startup/readiness probes, restarts, progress deadline), the PVC binder
// (Immediate and WaitForFirstConsumer), cert-manager (Issuer/Certificate Ready + the TLS
// Secret), namespace termination and CRD establishment.
import { createHash } from 'node:crypto';
import type {
  KubernetesObject, V1Container, V1ContainerStatus, V1DeploymentCondition, V1OwnerReference, V1Pod, V1PodCondition, V1PodTemplateSpec, V1ReplicaSet,
} from '@kubernetes/client-node';
import { admit } from './admission';
import type { VirtualClock } from './clock';
import { ApiError, notFound } from './errors';
import type { PodLogs } from './logs';
import type { ResourceType } from './resources';
import { Store, StoreEvent, clone, deepEqual } from './store';

export interface JobScript {
  /** What the Job's pod does. @default 'succeed' */
  outcome?: 'succeed' | 'fail' | 'image-pull-backoff' | 'create-container-config-error' | 'unschedulable' | 'hang';
  /** Virtual ms from container start to termination. @default 1000 */
  durationMs?: number;
  /** Lines the container prints, spread over durationMs. */
  logs?: string[];
  /** @default 0 for succeed, 1 for fail */
  exitCode?: number;
}

/**
 * What a Deployment's pods do (`SimOptions.deployments` / `setDeployment`, by Deployment name).
 * A Deployment with a script gets a ReplicaSet and pods that the kubelet runs; its status is
 * counted from them. Without one, its status is made up (see `rollout`) and no pods exist.
 */
export interface DeploymentScript {
  /**
   * `ready`: the containers start, pass their startup probe after `startupMs`, then their
   * readiness probe after `readyMs`. `crash-loop`: each run exits with `exitCode` after `runMs`,
   * restarted with the kubelet's back-off (10 s doubling to 5 min, CrashLoopBackOff meanwhile).
   * `startup-probe-fails`: the startup probe never passes; the kubelet kills the container (137)
   * after initialDelaySeconds + periodSeconds × failureThreshold, then restarts it with back-off.
   * `image-pull-backoff`: ErrImagePull, then ImagePullBackOff. @default 'ready'
   */
  outcome?: 'ready' | 'crash-loop' | 'startup-probe-fails' | 'image-pull-backoff';
  /**
   * Virtual ms from container start until the startup probe passes (`started: true`); `'hold'`
   * keeps the containers Running, not started and not ready, until `passStartupProbe(name)`.
   * @default initialDelaySeconds + periodSeconds of the container's startupProbe, 0 without one
   */
  startupMs?: number | 'hold';
  /** Virtual ms from started to ready. @default the readinessProbe's periodSeconds, 0 without one */
  readyMs?: number;
  /** `crash-loop`: virtual ms each run lasts. @default 1000 */
  runMs?: number;
  /** `crash-loop`: the exit code of each run. @default 1 */
  exitCode?: number;
  /** Lines each run of the first container prints, spread over its first second (or `runMs`). */
  logs?: string[];
}

export interface ControllerEvent {
  at: number;
  kind: string;
  name: string;
  namespace?: string;
  what: string;
}

/** Delays in virtual ms: each is what a small real cluster takes, roughly. */
export const TIMING = {
  schedule: 100,
  containerStart: 500,
  imagePullBackOff: 2000,
  jobFinish: 100,
  podKill: 1000,
  deploymentObserve: 200,
  deploymentReady: 2000,
  pvcBind: 100,
  issuerReady: 100,
  certificateIssue: 500,
  namespaceDelete: 200,
  /** A controller whose pod creation was refused tries again after this. */
  createRetry: 10_000,
  /** The kubelet's restart back-off: doubles from here per restart... */
  crashLoopBackOff: 10_000,
  /** ... up to this. */
  crashLoopBackOffMax: 300_000,
};

export const NODE_NAME = 'sim-node-1';
const NAME_CHARS = 'bcdfghjklmnpqrstvwxz2456789';

const cond = (type: string, status: 'True' | 'False', reason: string, message: string, time: string, extra: object = {}) => ({
  type, status, reason, message, lastProbeTime: undefined as any, lastTransitionTime: time, ...extra,
});
const hasCond = (o: any, type: string) => (o?.status?.conditions ?? []).some((c: any) => c.type === type && c.status === 'True');
const PVC_PROTECTION = 'kubernetes.io/pvc-protection';
const otherFinalizersOf = (o: any): string[] => (o.metadata.finalizers ?? []).filter((f: string) => f !== PVC_PROTECTION);
const isTerminal = (p: any) => p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed';
const REVISION = 'deployment.kubernetes.io/revision';
const ownerOf = (o: KubernetesObject | undefined, kind: string): V1OwnerReference | undefined => (o?.metadata?.ownerReferences ?? []).find((r) => r.kind === kind && r.controller);

/** Whether one of the pod's tolerations matches the taint (key, Equal value or Exists, effect). */
function tolerated(pod: any, t: any): boolean {
  return (pod.spec?.tolerations ?? []).some((tol: any) =>
    (tol.key === undefined || tol.key === '' ? tol.operator === 'Exists' : tol.key === t.key)
    && (tol.operator === 'Exists' || (tol.value ?? '') === (t.value ?? ''))
    && (!tol.effect || tol.effect === t.effect));
}

/** A pod-template-hash: stable per template, in the alphabet the controller uses. */
function templateHash(template: V1PodTemplateSpec | undefined): string {
  const bytes = createHash('sha256').update(JSON.stringify(template ?? {})).digest();
  let out = '';
  for (let i = 0; i < 10; i++) out += NAME_CHARS[bytes[i] % NAME_CHARS.length];
  return out;
}

export interface DeleteOptions {
  propagationPolicy?: string;
  gracePeriodSeconds?: number;
}

export class Controllers {
  private readonly unsubscribe: () => void;
  private readonly podTimers = new Map<string, Array<() => void>>();
  private readonly jobsQueued = new Set<string>();
  private readonly jobCreating = new Set<string>();
  private readonly jobDeadlines = new Set<string>();
  private readonly foreground = new Map<string, { rt: ResourceType; ns?: string; name: string }>();
  private readonly queued = new Set<string>();
  /** Scripted Deployments (by uid): the generation observed, the last counts, progress deadline state. */
  private readonly rollouts = new Map<string, { generation: number; counts: string; token: number; exceeded: boolean }>();
  /** Deployments whose held startup probes passed (`passStartupProbe`). */
  private readonly released = new Set<string>();
  /** Controllers waiting to retry a refused pod creation (one retry pending each). */
  private readonly retrying = new Set<string>();
  /** Nodes whose kubelet is outside the simulator (a node agent under test): their pods are left to it. */
  readonly externalNodes = new Set<string>();

  constructor(
    private readonly store: Store,
    private readonly clock: VirtualClock,
    private readonly logs: PodLogs,
    private readonly scripts: Map<string, JobScript>,
    private readonly record: (e: ControllerEvent) => void,
    private readonly deploymentScripts = new Map<string, DeploymentScript>(),
  ) {
    this.unsubscribe = store.subscribe((e) => this.dispatch(e));
  }

  stop(): void {
    this.unsubscribe();
  }

  private T(apiVersion: string, kind: string): ResourceType {
    return this.store.typeByKind(apiVersion, kind)!;
  }

  private now(): string {
    return this.clock.timestamp();
  }

  private note(kind: string, name: string, namespace: string | undefined, what: string): void {
    this.record({ at: Date.now(), kind, name, namespace, what });
  }

  /**
   * A core/v1 Event about `o`, as the controllers and kubelet record them: one object per
   * involved object and reason (`<name>.<hex>`), its count and lastTimestamp bumped on repeats.
   */
  private event(o: any, type: 'Normal' | 'Warning', reason: string, message: string, component: string): void {
    const evT = this.T('v1', 'Event');
    const ns = o.metadata.namespace ?? 'default';
    const now = this.now();
    const same = this.store.list(evT, ns).find((e) => e.involvedObject?.uid === o.metadata.uid && e.reason === reason && e.message === message);
    if (same) {
      this.store.update(evT, { ...same, count: (same.count ?? 1) + 1, lastTimestamp: now });
      return;
    }
    const suffix = createHash('sha256').update(`${o.metadata.uid}/${reason}/${message}/${Date.now()}/${Math.random()}`).digest('hex').slice(0, 16);
    this.store.create(evT, {
      apiVersion: 'v1', kind: 'Event',
      metadata: { name: `${o.metadata.name}.${suffix}`, namespace: ns, uid: createHash('sha256').update(suffix).digest('hex').slice(0, 32) },
      involvedObject: { apiVersion: o.apiVersion, kind: o.kind, name: o.metadata.name, namespace: o.metadata.namespace, uid: o.metadata.uid, resourceVersion: o.metadata.resourceVersion },
      reason, message, type, count: 1, firstTimestamp: now, lastTimestamp: now,
      source: { component }, reportingComponent: component, reportingInstance: '',
    });
  }

  private retry(key: string, fn: () => void): void {
    if (this.retrying.has(key)) return;
    this.retrying.add(key);
    this.clock.after(TIMING.createRetry, () => {
      this.retrying.delete(key);
      fn();
    });
  }

  /** Reads, changes and writes back an object when the change did anything. */
  private mutate(rt: ResourceType, ns: string | undefined, name: string, fn: (o: any) => void, uid?: string): any | undefined {
    const o = this.store.get(rt, ns, name);
    if (!o || (uid && o.metadata.uid !== uid)) return undefined;
    const before = clone(o);
    fn(o);
    return deepEqual(before, o) ? o : this.store.update(rt, o);
  }

  private dispatch(e: StoreEvent): void {
    const o = e.object;
    switch (e.rt.group + '/' + e.rt.kind) {
      case '/Pod':
        this.onPod(e);
        break;
      case '/Node':
        // kube-scheduler tries its unschedulable pods again when a node changes (a node agent's
        // status now reporting allocatable pods, a new node).
        if (e.type !== 'DELETED') {
          for (const p of this.store.list(this.T('v1', 'Pod'))) {
            if (p.spec.nodeName === o.metadata.name && this.externalNodes.has(o.metadata.name)) this.evictUntolerated(p);
            if (!p.spec.nodeName && !p.metadata.deletionTimestamp && p.status?.conditions?.some((c: any) => c.type === 'PodScheduled' && c.reason === 'Unschedulable') && this.scriptOf(p)?.outcome !== 'unschedulable') {
              this.podTimer(p.metadata.uid, TIMING.schedule, () => this.schedule(p.metadata.namespace, p.metadata.name, p.metadata.uid));
            }
          }
        }
        break;
      case 'batch/Job':
        if (e.type !== 'DELETED') this.queueJob(o.metadata.namespace, o.metadata.name);
        break;
      case 'apps/Deployment':
      case 'apps/StatefulSet':
        // an object put() with its status already observed is left as seeded
        if (e.type !== 'DELETED' && o.metadata.generation !== e.old?.metadata.generation && !(o.status?.observedGeneration >= o.metadata.generation)) {
          if (this.scripted(o)) this.clock.after(TIMING.deploymentObserve, () => this.syncDeployment(o.metadata.namespace, o.metadata.name, o.metadata.uid));
          else this.rollout(e.rt, o);
        }
        break;
      case 'apps/ReplicaSet':
        if (e.type !== 'DELETED') this.queue('rs', o.metadata.namespace, o.metadata.name, () => this.syncReplicaSet(o.metadata.namespace, o.metadata.name));
        break;
      case '/PersistentVolumeClaim':
        if (e.type === 'ADDED') {
          this.onClaim(o);
          // kube-scheduler tries again the pods left Unschedulable for want of this claim (seen on
          // v1.34.4: scheduled within 2 s of the claim's creation)
          for (const p of this.store.list(this.T('v1', 'Pod'), o.metadata.namespace)) {
            if (!p.spec.nodeName && !p.metadata.deletionTimestamp && this.missingClaim(p) === undefined
              && (p.spec.volumes ?? []).some((v: any) => v.persistentVolumeClaim?.claimName === o.metadata.name)
              && p.status?.conditions?.some((c: any) => c.type === 'PodScheduled' && c.reason === 'Unschedulable')) {
              this.podTimer(p.metadata.uid, TIMING.schedule, () => this.schedule(p.metadata.namespace, p.metadata.name, p.metadata.uid));
            }
          }
        }
        if (e.type === 'DELETED' && o.spec?.volumeName) {
          const pv = this.T('v1', 'PersistentVolume');
          if (this.store.get(pv, undefined, o.spec.volumeName)?.spec?.persistentVolumeReclaimPolicy === 'Delete') this.store.remove(pv, undefined, o.spec.volumeName);
        }
        break;
      case '/Namespace':
        if (e.type === 'MODIFIED' && o.metadata.deletionTimestamp && !e.old.metadata.deletionTimestamp)
          this.clock.after(TIMING.namespaceDelete, () => this.finalizeNamespace(o.metadata.name));
        break;
      case 'apiextensions.k8s.io/CustomResourceDefinition':
        if (e.type === 'ADDED') this.establish(o);
        break;
      case 'cert-manager.io/Issuer':
      case 'cert-manager.io/ClusterIssuer':
        if (e.type !== 'DELETED' && o.metadata.generation !== e.old?.metadata.generation && !this.observed(o)) this.clock.after(TIMING.issuerReady, () => this.issuerReady(e.rt, o));
        break;
      case 'cert-manager.io/Certificate':
        if (e.type !== 'DELETED' && o.metadata.generation !== e.old?.metadata.generation && !this.observed(o)) this.clock.after(TIMING.certificateIssue, () => this.issue(o.metadata.namespace, o.metadata.name));
        break;
      case '/Secret':
        if (e.type === 'ADDED') this.retryIssuers();
        break;
    }
    if (e.type === 'DELETED') this.checkForeground();
  }

  /** A condition already reports on this generation (an object seeded with its status by put()). */
  private observed(o: any): boolean {
    return (o.status?.conditions ?? []).some((c: any) => c.observedGeneration !== undefined && c.observedGeneration >= o.metadata.generation);
  }

  // --- scheduler + kubelet ---

  private podTimer(uid: string, ms: number, fn: () => void): void {
    const list = this.podTimers.get(uid) ?? [];
    list.push(this.clock.after(ms, fn));
    this.podTimers.set(uid, list);
  }

  private cancelPod(uid: string): void {
    for (const c of this.podTimers.get(uid) ?? []) c();
    this.podTimers.delete(uid);
  }

  private scriptOf(pod: any): JobScript | undefined {
    const job = pod.metadata.labels?.['batch.kubernetes.io/job-name'] ?? pod.metadata.labels?.['job-name'];
    if (!job) return undefined;
    return this.scripts.get(job) ?? {};
  }

  private onPod(e: StoreEvent): void {
    const p = e.object;
    const { namespace: ns, name, uid } = p.metadata;
    const owner = p.metadata.ownerReferences?.find((r: any) => r.kind === 'Job' && r.controller);
    if (owner) this.queueJob(ns, owner.name);
    const rs = ownerOf(p, 'ReplicaSet');
    if (rs) this.queue('rs', ns, rs.name, () => this.syncReplicaSet(ns, rs.name));
    if (e.type === 'ADDED' && !p.spec.nodeName) this.podTimer(uid, TIMING.schedule, () => this.schedule(ns, name, uid));
    if (e.type !== 'DELETED' && this.externalNodes.has(p.spec.nodeName)) this.evictUntolerated(p);
    // That node's own kubelet stops the containers and deletes the object (grace period 0).
    if (this.externalNodes.has(p.spec.nodeName)) return;
    if (e.type === 'MODIFIED' && p.metadata.deletionTimestamp && !e.old.metadata.deletionTimestamp) {
      // SIGTERM: containers stop, the pod object goes after a short grace.
      this.cancelPod(uid);
      for (const c of p.spec.containers ?? []) this.logs.end(ns, name, c.name);
      this.podTimer(uid, Math.min(TIMING.podKill, (p.metadata.deletionGracePeriodSeconds ?? 30) * 1000), () => {
        if (this.store.get(e.rt, ns, name)?.metadata.uid === uid) this.store.remove(e.rt, ns, name);
      });
    }
    if (e.type === 'DELETED') {
      this.cancelPod(uid);
      this.logs.forget(ns, name);
      if ((p.spec.volumes ?? []).some((v: any) => v.persistentVolumeClaim)) this.clock.after(0, () => this.releaseClaims(ns));
    }
  }

  private schedule(ns: string, name: string, uid: string): void {
    const podT = this.T('v1', 'Pod');
    const pod = this.store.get(podT, ns, name);
    if (!pod || pod.metadata.uid !== uid || pod.metadata.deletionTimestamp) return;
    const script = this.scriptOf(pod);
    const now = this.now();
    if (script?.outcome === 'unschedulable') {
      this.mutate(podT, ns, name, (p) => {
        p.status.conditions = [cond('PodScheduled', 'False', 'Unschedulable', "0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.", now)];
      });
      this.note('Pod', name, ns, 'Unschedulable');
      return;
    }
    // A claim the pod mounts that does not exist: kube-scheduler (v1.34.4) leaves the pod Pending,
    // `0/1 nodes are available: persistentvolumeclaim "x" not found. not found` (its condition and
    // its FailedScheduling event, seen on the real plane), until the claim is made.
    const missing = this.missingClaim(pod);
    if (missing !== undefined) {
      const message = `0/${this.store.list(this.T('v1', 'Node')).length} nodes are available: persistentvolumeclaim "${missing}" not found. not found`;
      this.mutate(podT, ns, name, (p) => {
        p.status.conditions = [cond('PodScheduled', 'False', 'Unschedulable', message, now)];
      });
      this.note('Pod', name, ns, 'Unschedulable');
      return;
    }
    const fit = this.fittingNode(pod);
    if (!fit.node) {
      this.mutate(podT, ns, name, (p) => {
        p.status.conditions = [cond('PodScheduled', 'False', 'Unschedulable', fit.message, now)];
      });
      this.note('Pod', name, ns, 'Unschedulable');
      return;
    }
    if (fit.node !== NODE_NAME) {
      // Bound to a node agent's node: its own kubelet (the agent) runs the pod and writes its status.
      this.mutate(podT, ns, name, (p) => {
        p.spec.nodeName = fit.node;
        p.status = { ...p.status, phase: 'Pending', conditions: [cond('PodScheduled', 'True', undefined as any, undefined as any, now)] };
      });
      return;
    }
    for (const v of pod.spec.volumes ?? []) if (v.persistentVolumeClaim) this.consumeClaim(ns, v.persistentVolumeClaim.claimName);
    this.mutate(podT, ns, name, (p) => {
      p.spec.nodeName = NODE_NAME;
      p.status = {
        ...p.status,
        phase: 'Pending',
        hostIP: '10.0.0.10',
        startTime: now,
        conditions: [cond('PodScheduled', 'True', undefined as any, undefined as any, now)],
        containerStatuses: p.spec.containers.map((c: any) => ({
          name: c.name, image: c.image, imageID: '', ready: false, restartCount: 0, started: false,
          state: { waiting: { reason: 'ContainerCreating' } }, lastState: {},
        })),
      };
    });
    const served = this.deploymentScriptOf(pod);
    this.podTimer(uid, TIMING.containerStart, () => (served ? this.serve(ns, name, uid, served.script, served.deployment) : this.startContainers(ns, name, uid, script)));
  }

  /**
   * kube-controller-manager's taint eviction: a pod bound to a node with a NoExecute taint it does
   * not tolerate is deleted (gracefully) at once, even one bound by nodeName without the
   * scheduler (seen on v1.34: a pod bound to the node agent's node without the toleration of
   * `kubernetes.io/arch=stackable-linux:NoExecute` was deleted by kube-controller-manager within a
   * second). Modelled for external nodes (the agent's); tolerationSeconds is not.
   */
  private evictUntolerated(pod: any): void {
    if (pod.metadata.deletionTimestamp || isTerminal(pod)) return;
    const node = this.store.get(this.T('v1', 'Node'), undefined, pod.spec.nodeName);
    if (!(node?.spec?.taints ?? []).some((t: any) => t.effect === 'NoExecute' && !tolerated(pod, t))) return;
    const { namespace, name, uid } = pod.metadata;
    this.clock.after(0, () => {
      const p = this.store.get(this.T('v1', 'Pod'), namespace, name);
      if (p?.metadata.uid !== uid || p.metadata.deletionTimestamp) return;
      this.delete(this.T('v1', 'Pod'), namespace, name, {});
      this.note('Pod', name, namespace, 'TaintManagerEviction');
    });
  }

  /**
   * kube-scheduler's filters as far as the simulated pods meet them (as v1.34 applies them): the
   * node's labels match the pod's nodeSelector, the pod tolerates the node's NoSchedule and
   * NoExecute taints, and a node agent's node (externalNodes) has room in `status.allocatable.pods`:
   * a node that reports none takes no pod ("Too many pods"; an agent's Node without allocatable
   * was never chosen by the real scheduler). The simulator's own node comes first.
   */
  /** The first claim the pod mounts that does not exist, if any. */
  private missingClaim(pod: any): string | undefined {
    const pvcT = this.T('v1', 'PersistentVolumeClaim');
    return (pod.spec.volumes ?? []).map((v: any) => v.persistentVolumeClaim?.claimName).find((c: string | undefined) => c !== undefined && !this.store.get(pvcT, pod.metadata.namespace, c));
  }

  private fittingNode(pod: any): { node?: string; message: string } {
    const nodes = this.store.list(this.T('v1', 'Node')).sort((a, b) => Number(b.metadata.name === NODE_NAME) - Number(a.metadata.name === NODE_NAME));
    const reasons = new Map<string, number>();
    const miss = (r: string): void => { reasons.set(r, (reasons.get(r) ?? 0) + 1); };
    const tolerates = (t: any): boolean => tolerated(pod, t);
    for (const node of nodes) {
      const name = node.metadata.name;
      if (Object.entries(pod.spec.nodeSelector ?? {}).some(([k, v]) => node.metadata.labels?.[k] !== v)) { miss("node(s) didn't match Pod's node affinity/selector"); continue; }
      const untolerated = (node.spec?.taints ?? []).find((t: any) => ['NoSchedule', 'NoExecute'].includes(t.effect) && !tolerates(t));
      if (untolerated) { miss(`node(s) had untolerated taint {${untolerated.key}: ${untolerated.value ?? ''}}`); continue; }
      if (name !== NODE_NAME) {
        if (!this.externalNodes.has(name)) continue;
        const bound = this.store.list(this.T('v1', 'Pod')).filter((p) => p.spec.nodeName === name && !isTerminal(p)).length;
        if (bound >= Number(node.status?.allocatable?.pods ?? 0)) { miss('Too many pods'); continue; }
      }
      return { node: name, message: '' };
    }
    // Sorted in byte order, as the scheduler's sort.Strings.
    const why = [...reasons].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([r, n]) => `${n} ${r}`).join(', ');
    return { message: `0/${nodes.length} nodes are available: ${why}. preemption: 0/${nodes.length} nodes are available: ${nodes.length} Preemption is not helpful for scheduling.` };
  }

  private setWaiting(ns: string, name: string, uid: string, reason: string, message: (image: string) => string): void {
    this.mutate(this.T('v1', 'Pod'), ns, name, (p) => {
      for (const cs of p.status.containerStatuses) cs.state = { waiting: { reason, message: message(cs.image) } };
    }, uid);
    this.note('Pod', name, ns, reason);
  }

  private startContainers(ns: string, name: string, uid: string, script: JobScript | undefined): void {
    const outcome = script?.outcome ?? 'succeed';
    if (outcome === 'image-pull-backoff') {
      this.setWaiting(ns, name, uid, 'ErrImagePull', (img) => `rpc error: code = NotFound desc = failed to pull and unpack image "${img}": not found`);
      this.podTimer(uid, TIMING.imagePullBackOff, () => this.setWaiting(ns, name, uid, 'ImagePullBackOff', (img) => `Back-off pulling image "${img}"`));
      return;
    }
    if (outcome === 'create-container-config-error') {
      const pod = this.store.get(this.T('v1', 'Pod'), ns, name);
      const ref = JSON.stringify(pod?.spec ?? {}).match(/"secretKeyRef":\{[^}]*"name":"([^"]+)"/)?.[1];
      this.setWaiting(ns, name, uid, 'CreateContainerConfigError', () => (ref ? `secret "${ref}" not found` : 'configmap references non-existent config key'));
      return;
    }
    const now = this.now();
    const pod = this.mutate(this.T('v1', 'Pod'), ns, name, (p) => {
      p.status.phase = 'Running';
      p.status.podIP = `10.244.0.${(parseInt(uid.slice(0, 2), 16) % 250) + 2}`;
      p.status.conditions = ['PodReadyToStartContainers', 'Initialized', 'Ready', 'ContainersReady', 'PodScheduled'].map((t) => cond(t, 'True', undefined as any, undefined as any, now));
      for (const cs of p.status.containerStatuses) {
        cs.state = { running: { startedAt: now } };
        cs.ready = true;
        cs.started = true;
        cs.containerID = `containerd://${uid.replace(/-/g, '')}${cs.name}`;
      }
    }, uid);
    if (!pod) return;
    this.note('Pod', name, ns, 'Running');
    if (!script) return; // not a Job's pod: runs until deleted
    const duration = script.durationMs ?? 1000;
    const lines = script.logs ?? [];
    const container = pod.spec.containers[0].name;
    lines.forEach((text, i) => this.podTimer(uid, ((i + 1) * duration) / (lines.length + 1), () => this.logs.append(ns, name, container, text, Date.now())));
    if (outcome !== 'hang') {
      const exitCode = script.exitCode ?? (outcome === 'fail' ? 1 : 0);
      this.podTimer(uid, duration, () => this.terminate(ns, name, uid, exitCode));
    }
  }

  private terminate(ns: string, name: string, uid: string, exitCode: number): void {
    const now = this.now();
    const pod = this.mutate(this.T('v1', 'Pod'), ns, name, (p) => {
      p.status.phase = exitCode === 0 ? 'Succeeded' : 'Failed';
      for (const c of p.status.conditions) if (c.type === 'Ready' || c.type === 'ContainersReady' || c.type === 'PodReadyToStartContainers') {
        c.status = 'False';
        c.reason = 'PodCompleted';
        c.lastTransitionTime = now;
      }
      for (const cs of p.status.containerStatuses) {
        cs.state = { terminated: { exitCode, reason: exitCode === 0 ? 'Completed' : 'Error', startedAt: cs.state.running?.startedAt ?? now, finishedAt: now, containerID: cs.containerID } };
        cs.ready = false;
        cs.started = false;
      }
    }, uid);
    if (!pod) return;
    for (const c of pod.spec.containers) this.logs.end(ns, name, c.name);
    this.note('Pod', name, ns, pod.status.phase);
  }

  // --- Job controller ---

  private queueJob(ns: string, name: string): void {
    const k = `${ns}/${name}`;
    if (this.jobsQueued.has(k)) return;
    this.jobsQueued.add(k);
    this.clock.after(0, () => {
      this.jobsQueued.delete(k);
      this.syncJob(ns, name);
    });
  }

  private syncJob(ns: string, name: string): void {
    const jobT = this.T('batch/v1', 'Job');
    const job = this.store.get(jobT, ns, name);
    if (!job || job.metadata.deletionTimestamp || hasCond(job, 'Complete') || hasCond(job, 'Failed') || job.spec.suspend) return;
    const uid = job.metadata.uid;
    const pods = this.store.list(this.T('v1', 'Pod'), ns).filter((p) => p.metadata.ownerReferences?.some((r: any) => r.uid === uid));
    const active = pods.filter((p) => !isTerminal(p) && !p.metadata.deletionTimestamp);
    const st = job.status ?? {};
    const succeeded = Math.max(st.succeeded ?? 0, pods.filter((p) => p.status?.phase === 'Succeeded').length);
    const failed = Math.max(st.failed ?? 0, pods.filter((p) => p.status?.phase === 'Failed').length);
    const now = this.now();
    const next: any = {
      ...st,
      startTime: st.startTime ?? now,
      active: active.length || undefined,
      succeeded: succeeded || undefined,
      failed: failed || undefined,
      ready: active.filter((p) => hasCond(p, 'Ready')).length,
      terminating: pods.filter((p) => p.metadata.deletionTimestamp).length,
      uncountedTerminatedPods: {},
    };
    const conditions = [...(st.conditions ?? [])];
    const deadline = job.spec.activeDeadlineSeconds;
    if (deadline !== undefined && !this.jobDeadlines.has(uid)) {
      this.jobDeadlines.add(uid);
      this.clock.after(deadline * 1000, () => this.failJob(ns, name, uid, 'DeadlineExceeded', 'Job was active longer than specified deadline'));
    }
    if (succeeded >= job.spec.completions) {
      if (!hasCond(job, 'SuccessCriteriaMet')) {
        conditions.push(cond('SuccessCriteriaMet', 'True', 'CompletionsReached', 'Reached expected number of succeeded pods', now));
        this.clock.after(TIMING.jobFinish, () => this.finishJob(ns, name, uid, 'Complete'));
      }
    } else if (failed > job.spec.backoffLimit) {
      if (!hasCond(job, 'FailureTarget')) {
        conditions.push(cond('FailureTarget', 'True', 'BackoffLimitExceeded', 'Job has reached the specified backoff limit', now));
        for (const p of active) this.delete(this.T('v1', 'Pod'), ns, p.metadata.name, {});
        this.clock.after(TIMING.jobFinish, () => this.finishJob(ns, name, uid, 'Failed'));
      }
    } else if (hasCond(job, 'FailureTarget')) {
      // failing for another reason (deadline): no new pods
    } else {
      const want = Math.min(job.spec.parallelism, job.spec.completions - succeeded) - active.length;
      if (want > 0 && !this.jobCreating.has(uid)) {
        this.jobCreating.add(uid);
        // the Job controller's pod backoff: 10 s doubling per failure, at most 6 min
        const delay = failed > 0 ? Math.min(10_000 * 2 ** (failed - 1), 360_000) : 0;
        this.clock.after(delay, () => {
          this.jobCreating.delete(uid);
          const now = this.store.get(jobT, ns, name);
          if (now?.metadata.uid !== uid || now.metadata.deletionTimestamp) return;
          for (let i = 0; i < want; i++) this.createJobPod(now);
        });
      }
    }
    next.conditions = conditions.length ? conditions : undefined;
    if (!deepEqual(st, next)) {
      this.store.update(jobT, { ...job, status: next });
      for (const c of conditions.slice((st.conditions ?? []).length)) this.note('Job', name, ns, c.type);
    }
  }

  /** activeDeadlineSeconds passed: FailureTarget now, running pods killed, Failed after. */
  private failJob(ns: string, name: string, uid: string, reason: string, message: string): void {
    const jobT = this.T('batch/v1', 'Job');
    const job = this.store.get(jobT, ns, name);
    if (!job || job.metadata.uid !== uid || hasCond(job, 'FailureTarget') || hasCond(job, 'SuccessCriteriaMet')) return;
    job.status.conditions = [...(job.status.conditions ?? []), cond('FailureTarget', 'True', reason, message, this.now())];
    this.store.update(jobT, job);
    this.note('Job', name, ns, 'FailureTarget');
    for (const p of this.store.list(this.T('v1', 'Pod'), ns)) {
      if (p.metadata.ownerReferences?.some((r: any) => r.uid === uid) && !isTerminal(p)) this.tryDelete(this.T('v1', 'Pod'), ns, p.metadata.name, 'Background');
    }
    this.clock.after(TIMING.jobFinish, () => this.finishJob(ns, name, uid, 'Failed'));
  }

  private finishJob(ns: string, name: string, uid: string, type: 'Complete' | 'Failed'): void {
    const now = this.now();
    const job = this.mutate(this.T('batch/v1', 'Job'), ns, name, (j) => {
      if (hasCond(j, type)) return;
      const interim = j.status.conditions.find((c: any) => c.type === (type === 'Complete' ? 'SuccessCriteriaMet' : 'FailureTarget'));
      j.status.conditions.push(cond(type, 'True', interim.reason, interim.message, now));
      if (type === 'Complete') j.status.completionTime = now;
      j.status.active = undefined;
      j.status.ready = 0;
    }, uid);
    if (job) this.note('Job', name, ns, type);
  }

  private createJobPod(job: any): void {
    const podT = this.T('v1', 'Pod');
    let suffix = '';
    for (let i = 0; i < 5; i++) suffix += NAME_CHARS[Math.floor(Math.random() * NAME_CHARS.length)];
    const tpl = job.spec.template;
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: `${job.metadata.name}-${suffix}`,
        generateName: `${job.metadata.name}-`,
        namespace: job.metadata.namespace,
        labels: { ...tpl.metadata?.labels },
        annotations: tpl.metadata?.annotations,
        ownerReferences: [{ apiVersion: 'batch/v1', kind: 'Job', name: job.metadata.name, uid: job.metadata.uid, controller: true, blockOwnerDeletion: true }],
      },
      spec: clone(tpl.spec),
    };
    try {
      this.store.create(podT, admit(this.store, podT, pod, undefined));
      this.note('Pod', pod.metadata.name, pod.metadata.namespace, 'created');
      this.event(job, 'Normal', 'SuccessfulCreate', `Created pod: ${pod.metadata.name}`, 'job-controller');
    } catch (e) {
      this.note('Job', job.metadata.name, job.metadata.namespace, `pod creation failed: ${(e as Error).message}`);
      this.event(job, 'Warning', 'FailedCreate', `Error creating: ${(e as Error).message}`, 'job-controller');
      // the controller retries with its back-off
      this.retry(`Job/${job.metadata.namespace}/${job.metadata.name}`, () => this.queueJob(job.metadata.namespace, job.metadata.name));
    }
  }

  // --- deletion and garbage collection ---

  private dependents(owner: any): Array<{ rt: ResourceType; o: any }> {
    const ns = owner.metadata.namespace;
    return this.store.types()
      .filter((rt) => rt.namespaced === true && ns !== undefined)
      .flatMap((rt) => this.store.list(rt, ns).map((o) => ({ rt, o })))
      .filter(({ o }) => o.metadata.ownerReferences?.some((r: any) => r.uid === owner.metadata.uid));
  }

  /**
   * DELETE as the API server + garbage collector do it: namespaces terminate, running pods get a
   * grace period, objects with finalizers only get a deletionTimestamp, and dependents are
   * deleted (Background/Foreground) or orphaned (Orphan; the default for batch/v1 Jobs).
   */
  delete(rt: ResourceType, ns: string | undefined, name: string, opts: DeleteOptions): any {
    const o = this.store.get(rt, ns, name);
    if (!o) throw notFound(rt, name);
    const now = this.now();
    if (rt.kind === 'Namespace' && rt.group === '') {
      if (['default', 'kube-system', 'kube-public'].includes(name))
        throw new ApiError(403, 'Forbidden', `namespaces "${name}" is forbidden: this namespace may not be deleted`, { name, kind: 'namespaces' });
      if (o.metadata.deletionTimestamp) return o;
      o.metadata.deletionTimestamp = now;
      o.status = { phase: 'Terminating' };
      return this.store.update(rt, o);
    }
    if (o.metadata.deletionTimestamp) {
      // A kubelet that has stopped a terminating pod's containers ends its grace period now (the API server's shortened-grace rule).
      if (rt.kind === 'Pod' && rt.group === '' && opts.gracePeriodSeconds === 0 && !(o.metadata.finalizers ?? []).length) return this.store.remove(rt, ns, name);
      return o;
    }
    const policy = opts.propagationPolicy ?? (rt.group === 'batch' ? 'Orphan' : 'Background');
    if (!['Orphan', 'Background', 'Foreground'].includes(policy))
      throw new ApiError(422, 'Invalid', `DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "${policy}": supported values: "Foreground", "Background", "Orphan"`);
    const deps = this.dependents(o);
    if (policy === 'Orphan') {
      for (const d of deps) {
        d.o.metadata.ownerReferences = d.o.metadata.ownerReferences.filter((r: any) => r.uid !== o.metadata.uid);
        if (!d.o.metadata.ownerReferences.length) delete d.o.metadata.ownerReferences;
        this.store.update(d.rt, d.o);
      }
    }
    if (rt.kind === 'PersistentVolumeClaim' && rt.group === '' && this.claimInUse(ns!, name)) {
      // kube-controller-manager's pvc-protection (seen on 1.34): a claim a scheduled pod refers to
      // stays Terminating until no such pod is left, a Succeeded or Failed one included (only a
      // pod deleted with grace 0 no longer counts, its podIsShutDown).
      o.metadata.deletionTimestamp = now;
      o.metadata.finalizers = [...otherFinalizersOf(o), PVC_PROTECTION];
      return this.store.update(rt, o);
    }
    const grace = opts.gracePeriodSeconds ?? o.spec?.terminationGracePeriodSeconds ?? 30;
    const running = rt.kind === 'Pod' && rt.group === '' && o.spec?.nodeName && !isTerminal(o);
    const otherFinalizers = o.metadata.finalizers ?? [];
    let result: any;
    if (policy === 'Foreground' && deps.length) {
      o.metadata.deletionTimestamp = now;
      o.metadata.finalizers = [...(o.metadata.finalizers ?? []), 'foregroundDeletion'];
      result = this.store.update(rt, o);
      this.foreground.set(o.metadata.uid, { rt, ns, name });
    } else if ((running && grace > 0) || otherFinalizers.length) {
      o.metadata.deletionTimestamp = now;
      o.metadata.deletionGracePeriodSeconds = running ? grace : 0;
      result = this.store.update(rt, o);
    } else {
      result = this.store.remove(rt, ns, name);
    }
    if (policy !== 'Orphan') for (const d of deps) this.clock.after(0, () => this.tryDelete(d.rt, d.o.metadata.namespace, d.o.metadata.name, 'Background'));
    return result;
  }

  private tryDelete(rt: ResourceType, ns: string | undefined, name: string, propagationPolicy: string, gracePeriodSeconds?: number): void {
    try {
      this.delete(rt, ns, name, { propagationPolicy, gracePeriodSeconds });
    } catch {
      /* already gone */
    }
  }

  /** A scheduled pod, not shut down (deleted with grace 0), refers to the claim: pvc-protection's `podUsesPVC`. */
  private claimInUse(ns: string, claim: string): boolean {
    return this.store.list(this.T('v1', 'Pod'), ns).some((p: any) => p.spec?.nodeName
      && !(p.metadata.deletionTimestamp && p.metadata.deletionGracePeriodSeconds === 0)
      && (p.spec.volumes ?? []).some((v: any) => v.persistentVolumeClaim?.claimName === claim));
  }

  /** pvc-protection again once a pod is gone: the claims it held that are being deleted and no longer in use go. */
  private releaseClaims(ns: string): void {
    const pvcT = this.T('v1', 'PersistentVolumeClaim');
    for (const c of this.store.list(pvcT, ns)) {
      if (!c.metadata.deletionTimestamp || !(c.metadata.finalizers ?? []).includes(PVC_PROTECTION) || this.claimInUse(ns, c.metadata.name)) continue;
      c.metadata.finalizers = c.metadata.finalizers.filter((f: string) => f !== PVC_PROTECTION);
      if (!c.metadata.finalizers.length) delete c.metadata.finalizers;
      this.finalizersChanged(pvcT, this.store.update(pvcT, c));
    }
  }

  /** An update removed the last finalizer of an object being deleted: it goes now. */
  finalizersChanged(rt: ResourceType, o: any): void {
    // a terminating Namespace goes when the namespace controller has emptied it, not on an update
    if (rt.kind === 'Namespace' && rt.group === '') return;
    if (o.metadata.deletionTimestamp && !(o.metadata.finalizers ?? []).length && !(rt.kind === 'Pod' && o.metadata.deletionGracePeriodSeconds)) {
      this.store.remove(rt, o.metadata.namespace, o.metadata.name);
    }
  }

  private checkForeground(): void {
    for (const [uid, f] of this.foreground) {
      const o = this.store.get(f.rt, f.ns, f.name);
      if (!o || o.metadata.uid !== uid) this.foreground.delete(uid);
      else if (this.dependents(o).length === 0) {
        this.foreground.delete(uid);
        this.store.remove(f.rt, f.ns, f.name);
      }
    }
  }

  /** The namespace controller: deletes the contents, then the namespace once nothing is left (finalizers hold it). */
  private finalizeNamespace(name: string): void {
    const nsT = this.T('v1', 'Namespace');
    if (!this.store.get(nsT, undefined, name)?.metadata.deletionTimestamp) return;
    let left = 0;
    for (const rt of this.store.types().filter((t) => t.namespaced)) {
      for (const o of this.store.list(rt, name)) {
        if (!o.metadata.deletionTimestamp) this.tryDelete(rt, name, o.metadata.name, 'Background', 0);
        if (this.store.get(rt, name, o.metadata.name)) left++;
      }
    }
    if (left) {
      this.clock.after(TIMING.namespaceDelete, () => this.finalizeNamespace(name));
      return;
    }
    this.store.remove(nsT, undefined, name);
    this.note('Namespace', name, undefined, 'deleted');
  }

  // --- Deployment / StatefulSet rollout ---

  private rollout(rt: ResourceType, o: any): void {
    const { namespace: ns, name, uid, generation } = o.metadata;
    const hash = uid.replace(/-/g, '').slice(0, 10);
    const n = (v: number) => v || undefined; // the API omits zero counts
    this.clock.after(TIMING.deploymentObserve, () => {
      const now = this.now();
      const d = this.mutate(rt, ns, name, (x) => {
        if (x.metadata.generation !== generation) return;
        const desired = x.spec.replicas ?? 1;
        const ready = Math.min(x.status?.readyReplicas ?? 0, desired);
        x.status = { ...x.status, observedGeneration: generation, replicas: n(desired), updatedReplicas: n(desired), readyReplicas: n(ready), availableReplicas: n(ready), unavailableReplicas: n(desired - ready) };
        if (rt.kind === 'Deployment') {
          x.status.conditions = [
            ready >= desired ? cond('Available', 'True', 'MinimumReplicasAvailable', 'Deployment has minimum availability.', now, { lastUpdateTime: now }) : cond('Available', 'False', 'MinimumReplicasUnavailable', 'Deployment does not have minimum availability.', now, { lastUpdateTime: now }),
            cond('Progressing', 'True', 'ReplicaSetUpdated', `ReplicaSet "${name}-${hash}" is progressing.`, now, { lastUpdateTime: now }),
          ];
        } else {
          x.status.currentReplicas = n(desired);
          x.status.currentRevision = x.status.updateRevision = `${name}-${hash}`;
        }
      }, uid);
      if (!d || d.metadata.generation !== generation) return;
      this.clock.after(TIMING.deploymentReady, () => {
        const later = this.now();
        const done = this.mutate(rt, ns, name, (x) => {
          if (x.metadata.generation !== generation) return;
          const desired = x.spec.replicas ?? 1;
          x.status = { ...x.status, replicas: n(desired), updatedReplicas: n(desired), readyReplicas: n(desired), availableReplicas: n(desired), unavailableReplicas: undefined };
          if (rt.kind === 'Deployment') {
            x.status.conditions = [
              cond('Available', 'True', 'MinimumReplicasAvailable', 'Deployment has minimum availability.', later, { lastUpdateTime: later }),
              cond('Progressing', 'True', 'NewReplicaSetAvailable', `ReplicaSet "${name}-${hash}" has successfully progressed.`, later, { lastUpdateTime: later }),
            ];
          }
        }, uid);
        if (done?.metadata.generation === generation) this.note(rt.kind, name, ns, 'Available');
      });
    });
  }

  // --- Deployments with a script: ReplicaSet, pods, probes, restarts, progress deadline ---

  private scripted(d: KubernetesObject): boolean {
    return d.kind === 'Deployment' && this.deploymentScripts.has(d.metadata?.name ?? '');
  }

  /** The script a pod runs when it belongs (through its ReplicaSet) to a scripted Deployment. */
  private deploymentScriptOf(pod: V1Pod): { script: DeploymentScript; deployment: string } | undefined {
    const rsRef = ownerOf(pod, 'ReplicaSet');
    const rs = rsRef && this.store.get(this.T('apps/v1', 'ReplicaSet'), pod.metadata?.namespace, rsRef.name);
    const deployment = ownerOf(rs, 'Deployment')?.name;
    const script = deployment && this.deploymentScripts.get(deployment);
    return script ? { script, deployment } : undefined;
  }

  /** Runs fn once on the next tick however often it is asked for (controllers react to bursts of writes). */
  private queue(what: string, ns: string, name: string, fn: () => void): void {
    const k = `${what}/${ns}/${name}`;
    if (this.queued.has(k)) return;
    this.queued.add(k);
    this.clock.after(0, () => {
      this.queued.delete(k);
      fn();
    });
  }

  private ownedBy(rt: ResourceType, ns: string, uid: string): any[] {
    return this.store.list(rt, ns).filter((o) => o.metadata.ownerReferences?.some((r: V1OwnerReference) => r.uid === uid));
  }

  /** The Deployment controller on a spec change: the template's ReplicaSet at the desired size, the others at 0 (as Recreate does). */
  private syncDeployment(ns: string, name: string, uid: string): void {
    const depT = this.T('apps/v1', 'Deployment');
    const rsT = this.T('apps/v1', 'ReplicaSet');
    const d = this.store.get(depT, ns, name);
    if (!d || d.metadata.uid !== uid || d.metadata.deletionTimestamp) return;
    const hash = templateHash(d.spec.template);
    const rsName = `${name}-${hash}`;
    const owned = this.ownedBy(rsT, ns, uid);
    const desired = d.spec.replicas ?? 1;
    let rs = owned.find((x) => x.metadata.name === rsName);
    const tpl = d.spec.template ?? {};
    if (!rs) {
      const revision = Math.max(0, ...owned.map((x) => Number(x.metadata.annotations?.[REVISION] ?? 0))) + 1;
      const labels = { ...tpl.metadata?.labels, 'pod-template-hash': hash };
      rs = this.store.create(rsT, {
        metadata: {
          name: rsName, namespace: ns, labels,
          annotations: { [REVISION]: String(revision), 'deployment.kubernetes.io/desired-replicas': String(desired) },
          ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name, uid, controller: true, blockOwnerDeletion: true }],
        },
        spec: {
          replicas: desired,
          selector: { ...d.spec.selector, matchLabels: { ...d.spec.selector?.matchLabels, 'pod-template-hash': hash } },
          template: { ...tpl, metadata: { ...tpl.metadata, labels } },
        },
      });
      this.note('ReplicaSet', rsName, ns, 'created');
    } else if (rs.spec.replicas !== desired) {
      rs = this.store.update(rsT, { ...rs, spec: { ...rs.spec, replicas: desired } });
    }
    for (const old of owned) if (old.metadata.name !== rsName && old.spec.replicas !== 0) this.store.update(rsT, { ...old, spec: { ...old.spec, replicas: 0 } });
    const st = this.rollouts.get(uid) ?? { generation: 0, counts: '', token: 0, exceeded: false };
    st.generation = d.metadata.generation;
    this.rollouts.set(uid, st);
    this.mutate(depT, ns, name, (x) => {
      x.metadata.annotations = { ...x.metadata.annotations, [REVISION]: rs.metadata.annotations[REVISION] };
    }, uid);
    this.progressed(ns, name, uid);
    this.syncDeploymentStatus(ns, name);
  }

  /** The ReplicaSet controller: as many live pods as spec.replicas; status counted from them. */
  private syncReplicaSet(ns: string, name: string): void {
    const rsT = this.T('apps/v1', 'ReplicaSet');
    const podT = this.T('v1', 'Pod');
    const rs = this.store.get(rsT, ns, name);
    const deployment = ownerOf(rs, 'Deployment')?.name;
    if (!rs || rs.metadata.deletionTimestamp || !deployment || !this.deploymentScripts.has(deployment)) return;
    const live = this.ownedBy(podT, ns, rs.metadata.uid).filter((p) => !p.metadata.deletionTimestamp);
    const want = rs.spec.replicas ?? 1;
    for (let i = live.length; i < want; i++) this.createReplicaSetPod(rs);
    for (const p of live.slice(want)) this.tryDelete(podT, ns, p.metadata.name, 'Background');
    const kept = live.slice(0, want);
    const ready = kept.filter((p) => hasCond(p, 'Ready')).length;
    const n = (v: number) => v || undefined;
    this.mutate(rsT, ns, name, (x) => {
      x.status = { replicas: kept.length, fullyLabeledReplicas: n(kept.length), readyReplicas: n(ready), availableReplicas: n(ready), observedGeneration: x.metadata.generation };
    });
    const d = this.store.get(this.T('apps/v1', 'Deployment'), ns, deployment);
    if (d) this.syncDeploymentStatus(ns, deployment);
  }

  private createReplicaSetPod(rs: V1ReplicaSet): void {
    const podT = this.T('v1', 'Pod');
    let suffix = '';
    for (let i = 0; i < 5; i++) suffix += NAME_CHARS[Math.floor(Math.random() * NAME_CHARS.length)];
    const { name = '', namespace, uid = '' } = rs.metadata ?? {};
    const tpl = rs.spec?.template;
    const pod = {
      apiVersion: 'v1', kind: 'Pod',
      metadata: {
        name: `${name}-${suffix}`, generateName: `${name}-`, namespace,
        labels: { ...tpl?.metadata?.labels }, annotations: tpl?.metadata?.annotations,
        ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name, uid, controller: true, blockOwnerDeletion: true }],
      },
      spec: { restartPolicy: 'Always', ...clone(tpl?.spec) },
    };
    try {
      this.store.create(podT, admit(this.store, podT, pod, undefined));
      this.note('Pod', pod.metadata.name, namespace, 'created');
      this.event({ apiVersion: 'apps/v1', kind: 'ReplicaSet', ...rs }, 'Normal', 'SuccessfulCreate', `Created pod: ${pod.metadata.name}`, 'replicaset-controller');
    } catch (e) {
      this.note('ReplicaSet', name, namespace, `pod creation failed: ${(e as Error).message}`);
      this.event({ apiVersion: 'apps/v1', kind: 'ReplicaSet', ...rs }, 'Warning', 'FailedCreate', `Error creating: ${(e as Error).message}`, 'replicaset-controller');
      this.retry(`ReplicaSet/${namespace}/${name}`, () => this.syncReplicaSet(namespace ?? '', name));
    }
  }

  /** Deployment status from its ReplicaSets' pods; Progressing from progress and the deadline. */
  private syncDeploymentStatus(ns: string, name: string): void {
    const depT = this.T('apps/v1', 'Deployment');
    const d = this.store.get(depT, ns, name);
    const st = d && this.rollouts.get(d.metadata.uid);
    if (!d || !st) return;
    const uid = d.metadata.uid;
    const rsName = `${name}-${templateHash(d.spec.template)}`;
    const sets = this.ownedBy(this.T('apps/v1', 'ReplicaSet'), ns, uid);
    const newest = sets.find((x) => x.metadata.name === rsName);
    const podT = this.T('v1', 'Pod');
    const live = (rs: V1ReplicaSet | undefined) => (rs ? this.ownedBy(podT, ns, rs.metadata?.uid ?? '').filter((p) => !p.metadata.deletionTimestamp) : []);
    const all = sets.flatMap(live);
    const updated = live(newest).length;
    const ready = all.filter((p) => hasCond(p, 'Ready')).length;
    const desired = d.spec.replicas ?? 1;
    const complete = updated === desired && all.length === desired && live(newest).filter((p) => hasCond(p, 'Ready')).length === desired;
    const counts = `${rsName}/${updated}/${ready}/${all.length}`;
    if (st.counts && counts !== st.counts) this.progressed(ns, name, uid);
    st.counts = counts;
    const now = this.now();
    const n = (v: number) => v || undefined;
    const wasComplete = (d.status?.conditions ?? []).some((c: V1DeploymentCondition) => c.type === 'Progressing' && c.reason === 'NewReplicaSetAvailable');
    this.mutate(depT, ns, name, (x) => {
      // A condition keeps its object (and times) while it says the same; a new status is a transition.
      const condition = (type: string, status: 'True' | 'False', reason: string, message: string) => {
        const old = (x.status?.conditions ?? []).find((c: V1DeploymentCondition) => c.type === type);
        if (old?.status === status && old.reason === reason && old.message === message) return old;
        return cond(type, status, reason, message, old?.status === status ? old.lastTransitionTime : now, { lastUpdateTime: now });
      };
      x.status = {
        observedGeneration: st.generation, replicas: n(all.length), updatedReplicas: n(updated), readyReplicas: n(ready), availableReplicas: n(ready),
        unavailableReplicas: n(Math.max(0, desired - ready)),
        conditions: [
          ready >= desired ? condition('Available', 'True', 'MinimumReplicasAvailable', 'Deployment has minimum availability.')
            : condition('Available', 'False', 'MinimumReplicasUnavailable', 'Deployment does not have minimum availability.'),
          complete ? condition('Progressing', 'True', 'NewReplicaSetAvailable', `ReplicaSet "${rsName}" has successfully progressed.`)
            : st.exceeded ? condition('Progressing', 'False', 'ProgressDeadlineExceeded', `ReplicaSet "${rsName}" has timed out progressing.`)
              : condition('Progressing', 'True', 'ReplicaSetUpdated', `ReplicaSet "${rsName}" is progressing.`),
        ],
      };
    }, uid);
    if (complete && !wasComplete) this.note('Deployment', name, ns, 'Available');
  }

  /** Progress (a new ReplicaSet, a pod more or less ready): the deadline starts over. */
  private progressed(ns: string, name: string, uid: string): void {
    const st = this.rollouts.get(uid);
    if (!st) return;
    const token = ++st.token;
    st.exceeded = false;
    const d = this.store.get(this.T('apps/v1', 'Deployment'), ns, name);
    this.clock.after((d?.spec?.progressDeadlineSeconds ?? 600) * 1000, () => {
      if (st.token !== token || this.rollouts.get(uid) !== st) return;
      const now = this.store.get(this.T('apps/v1', 'Deployment'), ns, name);
      if (!now || now.metadata.uid !== uid || (now.status?.conditions ?? []).some((c: V1DeploymentCondition) => c.reason === 'NewReplicaSetAvailable')) return;
      st.exceeded = true;
      this.syncDeploymentStatus(ns, name);
      this.note('Deployment', name, ns, 'ProgressDeadlineExceeded');
    });
  }

  // --- the kubelet for a Deployment's pods: containers restart, probes gate started and ready ---

  private serve(ns: string, name: string, uid: string, script: DeploymentScript, deployment: string): void {
    if (script.outcome === 'image-pull-backoff') {
      this.setWaiting(ns, name, uid, 'ErrImagePull', (img) => `rpc error: code = NotFound desc = failed to pull and unpack image "${img}": not found`);
      this.podTimer(uid, TIMING.imagePullBackOff, () => this.setWaiting(ns, name, uid, 'ImagePullBackOff', (img) => `Back-off pulling image "${img}"`));
      return;
    }
    const pod = this.store.get(this.T('v1', 'Pod'), ns, name);
    for (const c of pod?.spec.containers ?? []) this.runContainer(ns, name, uid, c.name, script, deployment);
  }

  /** Virtual ms until a container's startup probe passes ('hold': until passStartupProbe). */
  private startupOf(spec: V1Container, script: DeploymentScript, deployment: string): number | 'hold' {
    if (script.startupMs === 'hold') return this.released.has(deployment) ? 0 : 'hold';
    if (script.startupMs !== undefined) return script.startupMs;
    const p = spec.startupProbe;
    return p ? ((p.initialDelaySeconds ?? 0) + (p.periodSeconds ?? 10)) * 1000 : 0;
  }

  private readyOf(spec: V1Container | undefined, script: DeploymentScript): number {
    return script.readyMs ?? (spec?.readinessProbe ? (spec.readinessProbe.periodSeconds ?? 10) * 1000 : 0);
  }

  /** Pod conditions from its containers (Ready and ContainersReady follow them). */
  private podConditions(p: any, now: string): void {
    const unready = p.status.containerStatuses.filter((cs: V1ContainerStatus) => !cs.ready).map((cs: V1ContainerStatus) => cs.name);
    const set = (type: string, ok: boolean) => {
      const c = (p.status.conditions ?? []).find((x: V1PodCondition) => x.type === type);
      const status = ok ? 'True' : 'False';
      const next = ok ? cond(type, 'True', undefined as any, undefined as any, now) : cond(type, 'False', 'ContainersNotReady', `containers with unready status: [${unready.join(' ')}]`, now);
      if (c?.status === status && c.reason === next.reason && c.message === next.message) return c;
      return next;
    };
    p.status.conditions = [
      set('PodReadyToStartContainers', true), set('Initialized', true),
      set('Ready', unready.length === 0), set('ContainersReady', unready.length === 0), set('PodScheduled', true),
    ];
  }

  /** One run of a container: Running, started once its startup probe passes, ready after; or it exits (crash-loop, failed probe). */
  private runContainer(ns: string, name: string, uid: string, container: string, script: DeploymentScript, deployment: string): void {
    const podT = this.T('v1', 'Pod');
    const now = this.now();
    let spec: V1Container | undefined;
    const pod = this.mutate(podT, ns, name, (p) => {
      spec = p.spec.containers.find((c: V1Container) => c.name === container);
      const cs = p.status.containerStatuses.find((c: V1ContainerStatus) => c.name === container);
      if (!spec || !cs) return;
      p.status.phase = 'Running';
      p.status.podIP ??= `10.244.0.${(parseInt(uid.slice(0, 2), 16) % 250) + 2}`;
      // Without a startup probe a running container is started; without a readiness probe, ready
      // (so a crash-looping one without probes counts ready while it runs, as on a real node).
      const crashes = script.outcome === 'crash-loop';
      const neverStarts = script.outcome === 'startup-probe-fails' && spec.startupProbe;
      cs.state = { running: { startedAt: now } };
      cs.started = !neverStarts && (crashes ? !spec.startupProbe : this.startupOf(spec, script, deployment) === 0);
      cs.ready = cs.started && (crashes ? !spec.readinessProbe : this.readyOf(spec, script) === 0);
      cs.containerID = `containerd://${uid.replace(/-/g, '')}${container}${cs.restartCount}`;
      this.podConditions(p, now);
    }, uid);
    const cs = pod?.status.containerStatuses.find((c: V1ContainerStatus) => c.name === container);
    if (!pod || !cs || !spec) return;
    this.note('Pod', name, ns, cs.restartCount ? `Running (restart ${cs.restartCount})` : 'Running');
    const runMs = script.runMs ?? 1000;
    if (container === pod.spec.containers[0].name) {
      const lines = script.logs ?? [];
      lines.forEach((text, i) => this.podTimer(uid, ((i + 1) * runMs) / (lines.length + 1), () => this.logs.append(ns, name, container, text, Date.now())));
    }
    if (script.outcome === 'crash-loop') {
      this.podTimer(uid, runMs, () => this.crash(ns, name, uid, container, script.exitCode ?? 1, script, deployment));
    } else if (script.outcome === 'startup-probe-fails' && spec.startupProbe) {
      const p = spec.startupProbe;
      this.podTimer(uid, ((p.initialDelaySeconds ?? 0) + (p.periodSeconds ?? 10) * (p.failureThreshold ?? 3)) * 1000, () => this.crash(ns, name, uid, container, 137, script, deployment));
    } else if (!cs.started) {
      const startup = this.startupOf(spec, script, deployment);
      if (startup !== 'hold') this.podTimer(uid, startup, () => this.passStartup(ns, name, uid, container, script));
    } else if (!cs.ready) {
      this.podTimer(uid, this.readyOf(spec, script), () => this.markReady(ns, name, uid, container));
    }
  }

  private passStartup(ns: string, name: string, uid: string, container: string, script: DeploymentScript): void {
    let readyIn = 0;
    const pod = this.mutate(this.T('v1', 'Pod'), ns, name, (p) => {
      const cs = p.status.containerStatuses.find((c: V1ContainerStatus) => c.name === container);
      if (!cs?.state?.running || cs.started) return;
      readyIn = this.readyOf(p.spec.containers.find((c: V1Container) => c.name === container), script);
      cs.started = true;
      cs.ready = readyIn === 0;
      this.podConditions(p, this.now());
    }, uid);
    if (pod) this.note('Pod', name, ns, `${container} started`);
    if (pod && readyIn > 0) this.podTimer(uid, readyIn, () => this.markReady(ns, name, uid, container));
  }

  private markReady(ns: string, name: string, uid: string, container: string): void {
    const pod = this.mutate(this.T('v1', 'Pod'), ns, name, (p) => {
      const cs = p.status.containerStatuses.find((c: V1ContainerStatus) => c.name === container);
      if (!cs?.state?.running || !cs.started) return;
      cs.ready = true;
      this.podConditions(p, this.now());
    }, uid);
    if (pod) this.note('Pod', name, ns, `${container} ready`);
  }

  /** The container exits (or its failed startup probe killed it): CrashLoopBackOff, then a restart after the back-off. */
  private crash(ns: string, name: string, uid: string, container: string, exitCode: number, script: DeploymentScript, deployment: string): void {
    const now = this.now();
    let backoff = 0;
    const pod = this.mutate(this.T('v1', 'Pod'), ns, name, (p) => {
      const cs = p.status.containerStatuses.find((c: V1ContainerStatus) => c.name === container);
      if (!cs?.state?.running) return;
      backoff = Math.min(TIMING.crashLoopBackOff * 2 ** cs.restartCount, TIMING.crashLoopBackOffMax);
      cs.lastState = { terminated: { exitCode, reason: 'Error', startedAt: cs.state.running.startedAt, finishedAt: now, containerID: cs.containerID } };
      cs.state = { waiting: { reason: 'CrashLoopBackOff', message: `back-off ${backoff / 1000}s restarting failed container=${container} pod=${name}_${ns}(${uid})` } };
      cs.ready = false;
      cs.started = false;
      this.podConditions(p, now);
    }, uid);
    if (!pod) return;
    this.logs.restart(ns, name, container);
    this.note('Pod', name, ns, `${container} CrashLoopBackOff`);
    this.event(pod, 'Warning', 'BackOff', 'Back-off restarting failed container', 'kubelet');
    this.podTimer(uid, backoff, () => {
      const restarted = this.mutate(this.T('v1', 'Pod'), ns, name, (p) => {
        const cs = p.status.containerStatuses.find((c: V1ContainerStatus) => c.name === container);
        if (cs?.state?.waiting) cs.restartCount += 1;
      }, uid);
      if (restarted) this.runContainer(ns, name, uid, container, script, deployment);
    });
  }

  /** A held startup probe passes (`SimOptions.deployments[name].startupMs: 'hold'`): now, and for later pods. */
  passStartupProbe(deployment: string): void {
    this.released.add(deployment);
    const podT = this.T('v1', 'Pod');
    for (const pod of this.store.list(podT)) {
      const served = this.deploymentScriptOf(pod);
      if (served?.deployment !== deployment || pod.metadata.deletionTimestamp) continue;
      for (const cs of pod.status?.containerStatuses ?? []) {
        if (cs.state?.running && !cs.started) this.passStartup(pod.metadata.namespace, pod.metadata.name, pod.metadata.uid, cs.name, served.script);
      }
    }
  }

  // --- PVC binder ---

  private onClaim(pvc: any): void {
    const sc = pvc.spec.storageClassName && this.store.get(this.T('storage.k8s.io/v1', 'StorageClass'), undefined, pvc.spec.storageClassName);
    if (!sc) return; // no class, no provisioner: stays Pending as on a real cluster
    if ((sc.volumeBindingMode ?? 'Immediate') === 'Immediate') this.clock.after(TIMING.pvcBind, () => this.bind(pvc.metadata.namespace, pvc.metadata.name));
  }

  /** The scheduler placed a pod that uses this claim (WaitForFirstConsumer binds now). */
  private consumeClaim(ns: string, name: string): void {
    const pvcT = this.T('v1', 'PersistentVolumeClaim');
    const pvc = this.mutate(pvcT, ns, name, (c) => {
      if (c.status?.phase === 'Pending') c.metadata.annotations = { ...c.metadata.annotations, 'volume.kubernetes.io/selected-node': NODE_NAME };
    });
    if (pvc?.status?.phase === 'Pending' && pvc.spec.storageClassName) this.clock.after(TIMING.pvcBind, () => this.bind(ns, name));
  }

  private bind(ns: string, name: string): void {
    const pvcT = this.T('v1', 'PersistentVolumeClaim');
    const pvc = this.store.get(pvcT, ns, name);
    if (!pvc || pvc.status?.phase !== 'Pending') return;
    const sc = this.store.get(this.T('storage.k8s.io/v1', 'StorageClass'), undefined, pvc.spec.storageClassName);
    const pvName = `pvc-${pvc.metadata.uid}`;
    const capacity = { storage: pvc.spec.resources?.requests?.storage ?? '1Gi' };
    const accessModes = pvc.spec.accessModes ?? ['ReadWriteOnce'];
    this.store.create(this.T('v1', 'PersistentVolume'), {
      metadata: { name: pvName, annotations: { 'pv.kubernetes.io/provisioned-by': sc?.provisioner ?? 'sim.local/hostpath' } },
      spec: {
        capacity, accessModes, persistentVolumeReclaimPolicy: sc?.reclaimPolicy ?? 'Delete', storageClassName: pvc.spec.storageClassName, volumeMode: 'Filesystem',
        claimRef: { kind: 'PersistentVolumeClaim', apiVersion: 'v1', namespace: ns, name, uid: pvc.metadata.uid, resourceVersion: pvc.metadata.resourceVersion },
        hostPath: { path: `/var/lib/sim/${pvName}`, type: '' },
      },
      status: { phase: 'Bound' },
    });
    this.mutate(pvcT, ns, name, (c) => {
      c.spec.volumeName = pvName;
      c.metadata.annotations = { ...c.metadata.annotations, 'pv.kubernetes.io/bind-completed': 'yes', 'pv.kubernetes.io/bound-by-controller': 'yes' };
      c.status = { phase: 'Bound', accessModes, capacity };
    });
    this.note('PersistentVolumeClaim', name, ns, 'Bound');
  }

  // --- CRDs ---

  private establish(crd: any): void {
    const now = this.now();
    this.mutate(this.T('apiextensions.k8s.io/v1', 'CustomResourceDefinition'), undefined, crd.metadata.name, (c) => {
      c.status = {
        acceptedNames: c.spec.names,
        storedVersions: (c.spec.versions ?? []).filter((v: any) => v.storage).map((v: any) => v.name),
        conditions: [cond('NamesAccepted', 'True', 'NoConflicts', 'no conflicts found', now), cond('Established', 'True', 'InitialNamesAccepted', 'the initial names have been accepted', now)],
      };
    });
  }

  // --- cert-manager ---

  private issuerReady(rt: ResourceType, o: any): void {
    const { namespace: ns, name, uid, generation } = o.metadata;
    const now = this.now();
    const caSecret = o.spec?.ca?.secretName;
    const secretNs = rt.kind === 'ClusterIssuer' ? 'cert-manager' : ns;
    const missing = caSecret && !this.store.get(this.T('v1', 'Secret'), secretNs, caSecret);
    const [status, reason, message] = missing
      ? ['False', 'ErrGetKeyPair', `Error getting keypair for CA issuer: secrets "${caSecret}" not found`]
      : o.spec?.ca ? ['True', 'KeyPairVerified', 'Signing CA verified']
        : o.spec?.acme ? ['True', 'ACMEAccountRegistered', 'The ACME account was registered with the ACME server']
          : ['True', 'IsReady', ''];
    const done = this.mutate(rt, ns, name, (x) => {
      x.status = { ...x.status, conditions: [cond('Ready', status as 'True', reason, message, now, { observedGeneration: generation })] };
    }, uid);
    if (done && status === 'True') {
      this.note(rt.kind, name, ns, 'Ready');
      for (const c of this.certificates()) if (!hasCond(c, 'Ready')) this.issue(c.metadata.namespace, c.metadata.name);
    }
  }

  private certificates(): any[] {
    const certT = this.store.typeByKind('cert-manager.io/v1', 'Certificate');
    return certT ? this.store.list(certT) : [];
  }

  private retryIssuers(): void {
    for (const kind of ['Issuer', 'ClusterIssuer']) {
      const rt = this.store.typeByKind('cert-manager.io/v1', kind);
      for (const i of rt ? this.store.list(rt) : []) if (i.spec?.ca && !hasCond(i, 'Ready')) this.issuerReady(rt!, i);
    }
  }

  private issue(ns: string, name: string): void {
    const certT = this.store.typeByKind('cert-manager.io/v1', 'Certificate');
    const cert = certT && this.store.get(certT, ns, name);
    if (!cert) return;
    const ref = cert.spec?.issuerRef ?? {};
    const issuerT = this.store.typeByKind('cert-manager.io/v1', ref.kind === 'ClusterIssuer' ? 'ClusterIssuer' : 'Issuer');
    const issuer = issuerT && this.store.get(issuerT, ns, ref.name);
    const now = this.now();
    if (!hasCond(issuer, 'Ready')) {
      this.mutate(certT, ns, name, (c) => {
        if (hasCond(c, 'Ready')) return;
        c.status = { ...c.status, conditions: [cond('Ready', 'False', 'DoesNotExist', 'Issuing certificate as Secret does not exist', now, { observedGeneration: c.metadata.generation })] };
      });
      return;
    }
    const pem = (label: string) => Buffer.from(`-----BEGIN ${label}-----\nU0lNVUxBVEVE${Buffer.from(`${ns}/${name}`).toString('base64')}\n-----END ${label}-----\n`).toString('base64');
    const secretT = this.T('v1', 'Secret');
    const secret = {
      apiVersion: 'v1', kind: 'Secret', type: 'kubernetes.io/tls',
      metadata: {
        name: cert.spec.secretName, namespace: ns,
        labels: { 'controller.cert-manager.io/fao': 'true', ...cert.spec.secretTemplate?.labels },
        annotations: {
          ...cert.spec.secretTemplate?.annotations,
          'cert-manager.io/certificate-name': name, 'cert-manager.io/issuer-name': ref.name, 'cert-manager.io/issuer-kind': ref.kind ?? 'Issuer',
          'cert-manager.io/issuer-group': ref.group ?? 'cert-manager.io', 'cert-manager.io/common-name': cert.spec.commonName ?? '', 'cert-manager.io/alt-names': (cert.spec.dnsNames ?? []).join(','),
        },
      },
      data: { 'tls.crt': pem('CERTIFICATE'), 'tls.key': pem('PRIVATE KEY'), 'ca.crt': pem('CERTIFICATE') },
    };
    const existing = this.store.get(secretT, ns, cert.spec.secretName);
    if (existing) this.store.update(secretT, { ...existing, type: secret.type, metadata: { ...existing.metadata, annotations: { ...existing.metadata.annotations, ...secret.metadata.annotations } }, data: secret.data });
    else this.store.create(secretT, secret);
    const at = Date.now();
    const ts = (ms: number) => this.clock.timestamp(at + ms);
    this.mutate(certT, ns, name, (c) => {
      c.status = {
        conditions: [cond('Ready', 'True', 'Ready', 'Certificate is up to date and has not expired', now, { observedGeneration: c.metadata.generation })],
        notBefore: now, notAfter: ts(90 * 86400e3), renewalTime: ts(60 * 86400e3), revision: (c.status?.revision ?? 0) + 1,
      };
    });
    this.note('Certificate', name, ns, 'Ready');
  }
}
