/**
 * A fake kubelet for the real control plane (test/cluster/plane): one Node whose pods "run" without
 * containers, talking to kube-apiserver through @kubernetes/client-node only. Modelled on what the
 * real controllers need from a kubelet (and on kwok's pod stages):
 *
 * - the Node: registered with capacity, InternalIP 127.0.0.1 and its kubelet port in
 *   `status.daemonEndpoints`, Ready, its Lease in kube-node-lease renewed every 10 s (the node
 *   lifecycle controller marks a node without one NotReady and evicts its pods);
 * - pods the scheduler bound to it: Running with every condition True; a Job's pod then ends as
 *   its scenario says (Succeeded/Failed with the container's exit code), keeping the
 *   `batch.kubernetes.io/job-tracking` finalizer for the Job controller to count and remove;
 *   a Deployment's pod is started and ready (or held in its startup probe);
 * - deletions: a pod with a deletionTimestamp is removed with gracePeriodSeconds 0, as a kubelet
 *   confirms a stopped pod (without this, namespaces and rollouts hang in Terminating);
 * - volumes: claims of the StorageClass `standard` (provisioner `uyuni-cdk.test/fake-kubelet`) get
 *   a hostPath PersistentVolume once the PV controller hands them over, which the binder binds;
 *   one of those Released (its claim deleted; reclaim policy Delete) is deleted, as a real
 *   external provisioner deletes its volumes (left, they pile up: the PV binder syncs every one
 *   each resync, and its client throttling then made binding a claim take seconds);
 * - logs: the kubelet's `/containerLogs/<ns>/<pod>/<container>` over HTTPS, which kube-apiserver
 *   proxies `pods/log` to, so `kubectl logs` and the runtime's log streaming go through the real
 *   API server (follow, tailLines, timestamps, limitBytes).
 */
import * as fs from 'fs';
import * as https from 'https';
import { EventEmitter } from 'events';
import {
  CoordinationV1Api, CoreV1Api, KubeConfig, KubernetesObject, ListPromise, PatchStrategy, V1PersistentVolume, V1PersistentVolumeClaim, V1Pod,
  makeInformer, setHeaderOptions,
} from '@kubernetes/client-node';
import { DeploymentBehaviour, JobBehaviour, readScenario } from './scenario';

export const PROVISIONER = 'uyuni-cdk.test/fake-kubelet';

export interface KubeletOptions {
  dir: string;
  kubeconfig: string;
  nodeName: string;
  port: number;
  tlsCert: string;
  tlsKey: string;
  /** Where provisioned hostPath volumes point (nothing is written there). */
  volumeRoot: string;
  log?: (line: string) => void;
}

interface Line { at: Date; text: string }
class ContainerLog extends EventEmitter {
  lines: Line[] = [];
  done = false;
  push(text: string): void {
    const line = { at: new Date(), text };
    this.lines.push(line);
    this.emit('line', line);
  }
  end(): void {
    this.done = true;
    this.emit('end');
  }
}

const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const now = (): string => new Date().toISOString();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class FakeKubelet {
  private readonly kc: KubeConfig;
  private readonly core: CoreV1Api;
  private readonly coordination: CoordinationV1Api;
  private readonly started = new Set<string>();
  private readonly deleting = new Set<string>();
  private readonly provisioned = new Set<string>();
  private readonly logs = new Map<string, ContainerLog>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private server?: https.Server;
  private stopped = false;
  private podIp = 10;
  private readonly informers: Array<{ stop(): Promise<void> }> = [];

  constructor(private readonly o: KubeletOptions) {
    const kc = new KubeConfig();
    kc.loadFromFile(o.kubeconfig);
    this.kc = kc;
    this.core = kc.makeApiClient(CoreV1Api);
    this.coordination = kc.makeApiClient(CoordinationV1Api);
  }

  private log(line: string): void {
    (this.o.log ?? ((l: string) => process.stderr.write(`${now()} kubelet: ${l}\n`)))(line);
  }

  async start(): Promise<void> {
    await this.serveLogs();
    await this.registerNode();
    this.every(10_000, () => this.renewLease());
    this.every(60_000, () => this.reportNodeStatus());
    await this.watch<V1Pod>('/api/v1/pods', () => this.core.listPodForAllNamespaces(), (pod) => this.onPod(pod),
      (pod) => `pod ${pod.metadata?.namespace}/${pod.metadata?.name}`);
    await this.watch<V1PersistentVolumeClaim>('/api/v1/persistentvolumeclaims', () => this.core.listPersistentVolumeClaimForAllNamespaces(), (pvc) => this.provision(pvc),
      (pvc) => `claim ${pvc.metadata?.namespace}/${pvc.metadata?.name}`);
    await this.watch<V1PersistentVolume>('/api/v1/persistentvolumes', () => this.core.listPersistentVolume(), (pv) => this.reclaim(pv),
      (pv) => `volume ${pv.metadata?.name}`);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers) clearTimeout(t);
    await Promise.all(this.informers.map((i) => i.stop().catch(() => undefined)));
    await new Promise<void>((r) => (this.server ? this.server.close(() => r()) : r()));
    this.server?.closeAllConnections();
  }

  private every(ms: number, fn: () => Promise<void>): void {
    const tick = async () => {
      if (this.stopped) return;
      await fn().catch((e) => this.log(`periodic work failed: ${(e as Error).message}`));
      const t = setTimeout(tick, ms);
      this.timers.add(t);
    };
    void tick();
  }

  // ---- the Node and its Lease ----

  private async registerNode(): Promise<void> {
    const name = this.o.nodeName;
    try {
      await this.core.createNode({
        body: {
          metadata: { name, labels: { 'kubernetes.io/hostname': name, 'kubernetes.io/os': 'linux', 'kubernetes.io/arch': 'amd64', 'node.kubernetes.io/instance-type': 'fake' } },
        },
      });
    } catch (e) {
      if ((e as { code?: number }).code !== 409) throw e;
    }
    await this.reportNodeStatus();
    this.log(`node ${name} registered, kubelet endpoint 127.0.0.1:${this.o.port}`);
  }

  private async reportNodeStatus(): Promise<void> {
    const t = now();
    const condition = (type: string, status: string, reason: string) => ({ type, status, reason, message: reason, lastHeartbeatTime: t, lastTransitionTime: t });
    const resources = { cpu: '32', memory: '256Gi', pods: '110', 'ephemeral-storage': '500Gi' };
    await this.core.patchNodeStatus({
      name: this.o.nodeName,
      body: {
        status: {
          capacity: resources,
          allocatable: resources,
          addresses: [{ type: 'InternalIP', address: '127.0.0.1' }, { type: 'Hostname', address: this.o.nodeName }],
          daemonEndpoints: { kubeletEndpoint: { Port: this.o.port } },
          nodeInfo: {
            machineID: 'fake', systemUUID: 'fake', bootID: 'fake', kernelVersion: 'fake', osImage: 'uyuni-cdk fake kubelet',
            containerRuntimeVersion: 'fake://1.0', kubeletVersion: 'v1.34.4', kubeProxyVersion: '', operatingSystem: 'linux', architecture: 'amd64',
          },
          conditions: [
            condition('MemoryPressure', 'False', 'KubeletHasSufficientMemory'),
            condition('DiskPressure', 'False', 'KubeletHasNoDiskPressure'),
            condition('PIDPressure', 'False', 'KubeletHasSufficientPID'),
            condition('Ready', 'True', 'KubeletReady'),
          ],
        },
      },
    }, mergePatch);
  }

  /**
   * Renews the node's Lease. renewTime is a MicroTime: kube-apiserver refuses client-node's Date
   * (3 fraction digits: `cannot parse ".680Z" as ".000000"`), so it goes as a string in a merge patch.
   */
  private async renewLease(): Promise<void> {
    const name = this.o.nodeName;
    const namespace = 'kube-node-lease';
    const renewTime = new Date().toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
    const body = { spec: { holderIdentity: name, leaseDurationSeconds: 40, renewTime } };
    try {
      await this.coordination.patchNamespacedLease({ name, namespace, body }, mergePatch);
    } catch (e) {
      if ((e as { code?: number }).code !== 404) throw e;
      await this.coordination.createNamespacedLease({ namespace, body: { metadata: { name, namespace }, spec: { holderIdentity: name, leaseDurationSeconds: 40 } } });
      await this.coordination.patchNamespacedLease({ name, namespace, body }, mergePatch);
    }
  }

  /** An informer on `path` whose adds and updates go to `handle` (its failures logged); restarted after an error. */
  private async watch<T extends KubernetesObject>(path: string, list: ListPromise<T>, handle: (o: T) => Promise<void>, what: (o: T) => string): Promise<void> {
    const informer = makeInformer<T>(this.kc, path, list);
    const seen = (o: T) => { void handle(o).catch((e) => this.log(`${what(o)}: ${(e as Error).message}`)); };
    informer.on('add', seen);
    informer.on('update', seen);
    informer.on('error', () => {
      if (!this.stopped) setTimeout(() => { void informer.start().catch(() => undefined); }, 1000);
    });
    await informer.start();
    this.informers.push(informer);
  }

  // ---- pods ----

  private async onPod(pod: V1Pod): Promise<void> {
    if (this.stopped || pod.spec?.nodeName !== this.o.nodeName) return;
    const uid = pod.metadata!.uid!;
    if (pod.metadata?.deletionTimestamp) {
      if (this.deleting.has(uid)) return;
      this.deleting.add(uid);
      for (const key of this.logs.keys()) if (key.startsWith(`${uid}/`)) this.logs.get(key)!.end();
      // Everything in the body: kube-apiserver ignores the query's gracePeriodSeconds when a body
      // comes (its delete handler decodes one or the other), and a 0 there would do nothing.
      await this.core.deleteNamespacedPod({ name: pod.metadata.name!, namespace: pod.metadata.namespace!, body: { gracePeriodSeconds: 0, preconditions: { uid } } })
        .catch((e) => { if ((e as { code?: number }).code !== 404 && (e as { code?: number }).code !== 409) throw e; });
      return;
    }
    if (this.started.has(uid) || ['Succeeded', 'Failed'].includes(pod.status?.phase ?? '')) return;
    this.started.add(uid);
    await this.run(pod);
  }

  private containerLog(pod: V1Pod, container: string): ContainerLog {
    const key = `${pod.metadata!.uid}/${container}`;
    let log = this.logs.get(key);
    if (!log) {
      log = new ContainerLog();
      this.logs.set(key, log);
      this.logs.set(`${pod.metadata!.namespace}/${pod.metadata!.name}/${container}`, log);
    }
    return log;
  }

  private async patchStatus(pod: V1Pod, status: Record<string, unknown>): Promise<void> {
    await this.core.patchNamespacedPodStatus({ name: pod.metadata!.name!, namespace: pod.metadata!.namespace!, body: { status } }, mergePatch);
  }

  private async run(pod: V1Pod): Promise<void> {
    const started = now();
    const ip = `10.244.0.${(this.podIp++ % 250) + 2}`;
    const owner = pod.metadata?.ownerReferences?.find((r) => r.controller);
    const labels = pod.metadata?.labels ?? {};
    const scenario = readScenario(this.o.dir, pod.metadata!.namespace);
    const containers = pod.spec?.containers ?? [];
    const conditions = (ready: boolean) => ['PodReadyToStartContainers', 'PodScheduled', 'Initialized', 'ContainersReady', 'Ready']
      .map((type) => ({ type, status: ready || !['ContainersReady', 'Ready'].includes(type) ? 'True' : 'False', lastTransitionTime: now(), lastProbeTime: null }));
    const running = (ready: boolean, probed: boolean) => containers.map((c, i) => ({
      name: c.name, image: c.image, imageID: `fake://${c.image}`, containerID: `fake://${pod.metadata!.uid}-${i}`,
      ready, started: probed, restartCount: 0, state: { running: { startedAt: started } },
    }));
    const initStatuses = (pod.spec?.initContainers ?? []).map((c, i) => ({
      name: c.name, image: c.image, imageID: `fake://${c.image}`, containerID: `fake://${pod.metadata!.uid}-init-${i}`, ready: true, restartCount: 0,
      state: { terminated: { exitCode: 0, reason: 'Completed', startedAt: started, finishedAt: started } },
    }));
    const base = { hostIP: '127.0.0.1', hostIPs: [{ ip: '127.0.0.1' }], podIP: ip, podIPs: [{ ip }], startTime: started, initContainerStatuses: initStatuses };
    // A real kubelet serves the log of every container it started, empty when it printed nothing:
    // the init containers (ended: they ran to completion) and each container, not only the one the
    // scenario gives lines (`uyuni-cdk logs` of the database asks for its init containers' too).
    for (const c of pod.spec?.initContainers ?? []) this.containerLog(pod, c.name).end();
    for (const c of containers) this.containerLog(pod, c.name);

    if (owner?.kind === 'Job') {
      const job = labels['batch.kubernetes.io/job-name'] ?? labels['job-name'] ?? owner.name;
      await this.runJobPod(pod, scenario.jobs?.[job] ?? {}, base, conditions, running);
      return;
    }
    const deployment = owner?.kind === 'ReplicaSet' ? owner.name.replace(/-[a-z0-9]+$/, '') : undefined;
    const behaviour: DeploymentBehaviour = (deployment && scenario.deployments?.[deployment]) || {};
    for (const line of behaviour.logs ?? []) this.containerLog(pod, containers[0].name).push(line);
    for (const [name, lines] of Object.entries(behaviour.containerLogs ?? {})) {
      if (containers.some((c) => c.name === name)) for (const line of lines) this.containerLog(pod, name).push(line);
    }
    const hold = behaviour.startupMs === 'hold';
    const startupMs = typeof behaviour.startupMs === 'number' ? behaviour.startupMs : 0;
    const starting = hold || startupMs > 0;
    await this.patchStatus(pod, { ...base, phase: 'Running', conditions: conditions(!starting), containerStatuses: running(!starting, !starting) });
    if (!starting) return;
    if (hold) {
      while (!this.stopped && (readScenario(this.o.dir, pod.metadata!.namespace).deployments?.[deployment!]?.startupMs === 'hold')) await sleep(250);
    } else {
      await sleep(startupMs);
    }
    if (this.stopped || this.deleting.has(pod.metadata!.uid!)) return;
    await this.patchStatus(pod, { conditions: conditions(true), containerStatuses: running(true, true) });
  }

  private async runJobPod(
    pod: V1Pod, b: JobBehaviour, base: Record<string, unknown>,
    conditions: (ready: boolean) => unknown[], running: (ready: boolean, started: boolean) => unknown[],
  ): Promise<void> {
    const containers = pod.spec?.containers ?? [];
    await this.patchStatus(pod, { ...base, phase: 'Running', conditions: conditions(true), containerStatuses: running(true, true) });
    const log = this.containerLog(pod, containers[0].name);
    const lines = b.logs ?? [];
    const duration = b.durationMs ?? 300;
    for (const line of lines) {
      await sleep(duration / (lines.length + 1));
      if (this.stopped || this.deleting.has(pod.metadata!.uid!)) return;
      log.push(line);
    }
    if (b.outcome === 'hang') return;
    await sleep(duration / (lines.length + 1));
    if (this.stopped || this.deleting.has(pod.metadata!.uid!)) return;
    const failed = b.outcome === 'fail';
    const exitCode = b.exitCode ?? (failed ? 1 : 0);
    const finishedAt = now();
    for (const c of containers) this.containerLog(pod, c.name).end();
    await this.patchStatus(pod, {
      phase: failed ? 'Failed' : 'Succeeded',
      conditions: conditions(false),
      containerStatuses: containers.map((c, i) => ({
        name: c.name, image: c.image, imageID: `fake://${c.image}`, containerID: `fake://${pod.metadata!.uid}-${i}`, ready: false, started: false, restartCount: 0,
        state: { terminated: { exitCode, reason: failed ? 'Error' : 'Completed', startedAt: base.startTime, finishedAt } },
      })),
    });
  }

  // ---- volumes ----

  /** As an external provisioner: a volume of ours Released with reclaim policy Delete is deleted (nothing was written on disk). */
  private async reclaim(pv: V1PersistentVolume): Promise<void> {
    if (pv.status?.phase !== 'Released' || pv.spec?.persistentVolumeReclaimPolicy !== 'Delete' || pv.metadata?.deletionTimestamp) return;
    if (pv.metadata?.annotations?.['pv.kubernetes.io/provisioned-by'] !== PROVISIONER) return;
    await this.core.deletePersistentVolume({ name: pv.metadata.name! }).catch((e) => { if ((e as { code?: number }).code !== 404) throw e; });
  }

  /** As an external provisioner: a claim the PV controller annotated for us gets a volume with its claimRef. */
  private async provision(pvc: V1PersistentVolumeClaim): Promise<void> {
    const a = pvc.metadata?.annotations ?? {};
    const uid = pvc.metadata!.uid!;
    if (pvc.status?.phase !== 'Pending' || pvc.spec?.volumeName || this.provisioned.has(uid)) return;
    if ((a['volume.kubernetes.io/storage-provisioner'] ?? a['volume.beta.kubernetes.io/storage-provisioner']) !== PROVISIONER) return;
    this.provisioned.add(uid);
    const name = `pvc-${uid}`;
    await this.core.createPersistentVolume({
      body: {
        metadata: { name, annotations: { 'pv.kubernetes.io/provisioned-by': PROVISIONER } },
        spec: {
          capacity: { storage: pvc.spec?.resources?.requests?.storage ?? '1Gi' },
          accessModes: pvc.spec?.accessModes ?? ['ReadWriteOnce'],
          persistentVolumeReclaimPolicy: 'Delete',
          storageClassName: pvc.spec?.storageClassName,
          volumeMode: pvc.spec?.volumeMode ?? 'Filesystem',
          hostPath: { path: `${this.o.volumeRoot}/${name}`, type: '' },
          claimRef: { apiVersion: 'v1', kind: 'PersistentVolumeClaim', namespace: pvc.metadata!.namespace, name: pvc.metadata!.name, uid },
        },
      },
    }).catch((e) => {
      if ((e as { code?: number }).code === 409) return;
      // As external-provisioner does, tried again (the API server may be restarting: api-restart.test.ts
      // saw a claim left Pending for good, and the scheduler's VolumeBinding waiting on it, when a failed
      // create was never retried).
      this.provisioned.delete(uid);
      if (!this.stopped) {
        const t = setTimeout(() => {
          this.timers.delete(t);
          void this.provision(pvc).catch((again) => this.log(`claim ${pvc.metadata?.namespace}/${pvc.metadata?.name}: ${(again as Error).message}`));
        }, 1000);
        this.timers.add(t);
      }
      throw e;
    });
  }

  // ---- logs over HTTPS, as kube-apiserver's pods/log proxy expects ----

  private async serveLogs(): Promise<void> {
    this.server = https.createServer({ cert: fs.readFileSync(this.o.tlsCert), key: fs.readFileSync(this.o.tlsKey) }, (req, res) => {
      const url = new URL(req.url ?? '/', 'https://kubelet');
      const m = /^\/containerLogs\/([^/]+)\/([^/]+)\/([^/]+)$/.exec(url.pathname);
      if (url.pathname === '/healthz') { res.end('ok'); return; }
      if (!m) { res.writeHead(404).end(`the fake kubelet serves no ${url.pathname}`); return; }
      const log = this.logs.get(`${m[1]}/${m[2]}/${m[3]}`);
      if (!log) { res.writeHead(404).end(`container ${m[3]} of pod ${m[1]}/${m[2]} has no log`); return; }
      const q = url.searchParams;
      const stamp = q.get('timestamps') === 'true';
      const format = (l: Line) => `${stamp ? `${l.at.toISOString()} ` : ''}${l.text}\n`;
      let budget = q.has('limitBytes') ? Number(q.get('limitBytes')) : Infinity;
      const write = (l: Line): boolean => {
        const text = format(l);
        if (budget <= 0) return false;
        res.write(text.slice(0, budget));
        budget -= text.length;
        return budget > 0;
      };
      const since = q.has('sinceSeconds') ? Date.now() - Number(q.get('sinceSeconds')) * 1000 : -Infinity;
      let lines = log.lines.filter((l) => l.at.getTime() >= since);
      if (q.has('tailLines')) lines = lines.slice(Math.max(0, lines.length - Number(q.get('tailLines'))));
      res.writeHead(200, { 'Content-Type': 'text/plain' });
      for (const l of lines) if (!write(l)) { res.end(); return; }
      if (q.get('follow') !== 'true' || log.done) { res.end(); return; }
      const onLine = (l: Line) => { if (!write(l)) finish(); };
      const finish = () => { log.off('line', onLine); log.off('end', finish); res.end(); };
      log.on('line', onLine);
      log.on('end', finish);
      req.on('close', finish);
    });
    await new Promise<void>((resolve, reject) => {
      this.server!.once('error', reject);
      this.server!.listen(this.o.port, '127.0.0.1', () => resolve());
    });
  }
}

