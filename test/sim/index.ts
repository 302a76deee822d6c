// An in-process Kubernetes API simulator for tests: real HTTP on 127.0.0.1, the behaviours the
// runtime depends on (see README.md), scripted controllers on a virtual clock. A test fixture,
// never shipped.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import YAML from 'yaml';
import { VirtualClock } from './clock';
import { ControllerEvent, Controllers, DeploymentScript, JobScript, NODE_NAME } from './controllers';
import { Fault, Forbidden, RequestRecord, createHandler } from './http';
import { PodLogs } from './logs';
import { CERT_MANAGER_CRDS, ResourceType, TRAEFIK_CRDS } from './resources';
import { Store, WebhookRule, clone } from './store';
import { WatchHub } from './watch';
import { attachExec, ExecCall, ExecScript } from './exec';

export type { JobScript, DeploymentScript, ControllerEvent, RequestRecord, WebhookRule, Forbidden };
export type { ExecCall, ExecResult, ExecScript } from './exec';
export { TIMING } from './controllers';
export { peakInFlight, roundTrips } from './round-trips';

export interface SimOptions {
  /** Job scripts by Job name; unlisted Jobs succeed. */
  jobs?: Record<string, JobScript>;
  /** Deployment scripts by Deployment name: those get a ReplicaSet and pods; the others a made-up status. */
  deployments?: Record<string, DeploymentScript>;
  /** Register the cert-manager CRDs (Certificate, Issuer, ClusterIssuer) in discovery. @default true */
  certManager?: boolean;
  /** Admission webhook stand-ins, checked on every create of their kinds (API and controllers). @default none */
  webhooks?: WebhookRule[];
  /** Register Traefik's Middleware and IngressRouteTCP CRDs. @default true */
  traefik?: boolean;
  /** Binding mode of the default StorageClass `standard`. @default 'Immediate' */
  volumeBindingMode?: 'Immediate' | 'WaitForFirstConsumer';
  /** Virtual ms per real ms. @default 50 (a 1 s Job takes 20 ms) */
  clockSpeed?: number;
  /** Also answer /openapi/v3 (for kubectl apply --server-side). @default true */
  openapi?: boolean;
  /**
   * Nodes whose kubelet is outside the simulator (a node agent under test): pods bound to them are
   * not run, and a graceful delete leaves them terminating until that kubelet deletes them with
   * grace period 0. @default none
   */
  externalNodes?: string[];
  /** What `exec` into a pod prints and exits with (test/sim/exec.ts). @default none: exit 126 */
  exec?: ExecScript;
  /**
   * Authenticate: whether a request's Authorization header is accepted (else 401 Unauthorized, as
   * kube-apiserver words it), recorded in `requests`. Changeable while running (`setAuthorize`).
   * @default everyone is accepted
   */
  authorize?: (authorization: string | undefined) => boolean;
  /**
   * Authorization: what the user may not do, answered 403 Forbidden as RBAC does (test/sim/http.ts
   * `Forbidden`). Changeable while running (`setForbidden`). @default nothing is forbidden
   */
  forbidden?: Forbidden[];
}

export interface Simulator {
  readonly url: string;
  readonly kubeconfigPath: string;
  get(apiVersion: string, kind: string, name: string, namespace?: string): any | undefined;
  list(apiVersion: string, kind: string, namespace?: string): any[];
  /** Every stored object of every kind (copies), kind by kind, each sorted by namespace and name: what a test compares before and after. */
  snapshot(): any[];
  put(obj: any): void;
  /** Deletes an object as a DELETE request would (finalizers, a namespace's contents), at once: for a hook that must act before the next request is served. */
  remove(apiVersion: string, kind: string, name: string, namespace?: string): void;
  setJob(name: string, script: JobScript): void;
  /** Replaces the admission webhook stand-ins. */
  setWebhooks(rules: WebhookRule[]): void;
  setDeployment(name: string, script: DeploymentScript): void;
  /** The held startup probes (`startupMs: 'hold'`) of this Deployment's pods pass, now and for later pods. */
  passStartupProbe(deployment: string): void;
  failNext(count: number, status?: number, matcher?: string): void;
  /** The user may not `verb group/resource` (`patch apps/deployments`): its SelfSubjectAccessReview answers allowed false. */
  deny(...permissions: string[]): void;
  throttleNext(count: number, retryAfterSeconds: number, matcher?: string): void;
  /** A slow API: each request but a watch answered `ms` late (0: at once); `maxInFlight` counts the most served at once since `resetInFlight`. */
  setLatency(ms: number): void;
  readonly maxInFlight: number;
  resetInFlight(): void;
  dropWatches(): void;
  compact(): void;
  /** Replaces what the user may not do (403 Forbidden). */
  setForbidden(rules: Forbidden[]): void;
  /** Replaces the `authorize` rule (undefined: everyone is accepted). */
  setAuthorize(rule: ((authorization: string | undefined) => boolean) | undefined): void;
  readonly requests: RequestRecord[];
  /** Every exec into a pod, in order. */
  readonly execs: ExecCall[];
  readonly events: ControllerEvent[];
  stop(): Promise<void>;
}

export async function startSimulator(opts: SimOptions = {}): Promise<Simulator> {
  const clock = new VirtualClock(opts.clockSpeed ?? 50);
  const store = new Store(clock);
  store.webhooks = [...(opts.webhooks ?? [])];
  const logs = new PodLogs();
  const hub = new WatchHub(store, clock);
  const scripts = new Map(Object.entries(opts.jobs ?? {}));
  const deploymentScripts = new Map(Object.entries(opts.deployments ?? {}));
  const events: ControllerEvent[] = [];
  const requests: RequestRecord[] = [];
  const faults: Fault[] = [];
  const denied = new Set<string>();
  const controllers = new Controllers(store, clock, logs, scripts, (e) => events.push(e), deploymentScripts);
  for (const n of opts.externalNodes ?? []) controllers.externalNodes.add(n);

  const typeOf = (apiVersion: string, kind: string): ResourceType => {
    const rt = store.typeByKind(apiVersion, kind);
    if (!rt) throw new Error(`simulator: no kind ${kind} in ${apiVersion}`);
    return rt;
  };
  const put = (obj: any): void => {
    const rt = typeOf(obj.apiVersion, obj.kind);
    const o = clone(obj);
    const existing = store.get(rt, o.metadata?.namespace, o.metadata.name);
    if (existing) store.update(rt, { ...o, metadata: { ...o.metadata, uid: existing.metadata.uid } });
    else store.create(rt, o);
  };

  // What a fresh cluster has.
  for (const ns of ['default', 'kube-system', 'kube-public', 'kube-node-lease'])
    put({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns, labels: { 'kubernetes.io/metadata.name': ns } }, spec: { finalizers: ['kubernetes'] }, status: { phase: 'Active' } });
  put({
    apiVersion: 'v1', kind: 'Node', metadata: { name: NODE_NAME, labels: { 'kubernetes.io/hostname': NODE_NAME, 'kubernetes.io/os': 'linux' } },
    status: { conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status' }], addresses: [{ type: 'InternalIP', address: '10.0.0.10' }] },
  });
  put({
    apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass',
    metadata: { name: 'standard', annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } },
    provisioner: 'sim.local/hostpath', reclaimPolicy: 'Delete', volumeBindingMode: opts.volumeBindingMode ?? 'Immediate',
  });
  put({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default', namespace: 'default' } });
  if (opts.certManager ?? true) {
    put({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'cert-manager', labels: { 'kubernetes.io/metadata.name': 'cert-manager' } }, spec: { finalizers: ['kubernetes'] }, status: { phase: 'Active' } });
    for (const crd of CERT_MANAGER_CRDS) put(crd);
  }
  if (opts.traefik ?? true) for (const crd of TRAEFIK_CRDS) put(crd);

  let address = '127.0.0.1:0';
  const latency = { ms: 0, inFlight: 0, maxInFlight: 0 };
  const deps = { store, clock, hub, controllers, logs, faults, denied, requests, openapi: opts.openapi ?? true, address: () => address, authorize: opts.authorize, latency, forbidden: [...(opts.forbidden ?? [])] };
  const handler = createHandler(deps);
  const server = createServer((req, res) => void handler(req, res));
  const execs: ExecCall[] = [];
  attachExec(server, (ns, name) => { const rt = typeOf('v1', 'Pod'); return store.get(rt, ns, name); }, () => opts.exec, execs);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  address = `127.0.0.1:${port}`;
  const url = `http://${address}`;

  const dir = mkdtempSync(join(tmpdir(), 'k8s-sim-'));
  const kubeconfigPath = join(dir, 'kubeconfig');
  writeFileSync(kubeconfigPath, YAML.stringify({
    apiVersion: 'v1', kind: 'Config', 'current-context': 'sim',
    clusters: [{ name: 'sim', cluster: { server: url, 'insecure-skip-tls-verify': true } }],
    users: [{ name: 'sim', user: {} }],
    contexts: [{ name: 'sim', context: { cluster: 'sim', user: 'sim', namespace: 'default' } }],
  }));

  let stopped = false;
  return {
    url,
    kubeconfigPath,
    requests,
    execs,
    events,
    get: (apiVersion, kind, name, namespace) => store.get(typeOf(apiVersion, kind), namespace, name),
    list: (apiVersion, kind, namespace) => store.list(typeOf(apiVersion, kind), namespace),
    snapshot: () => store.types().flatMap((rt) => store.list(rt)),
    put,
    remove: (apiVersion, kind, name, namespace) => { controllers.delete(typeOf(apiVersion, kind), namespace, name, {}); },
    setJob: (name, script) => void scripts.set(name, script),
    setWebhooks: (rules) => { store.webhooks = [...rules]; },
    setAuthorize: (rule) => { deps.authorize = rule; },
    setForbidden: (rules) => { deps.forbidden = [...rules]; },
    setDeployment: (name, script) => void deploymentScripts.set(name, script),
    passStartupProbe: (deployment) => controllers.passStartupProbe(deployment),
    deny: (...permissions) => { for (const p of permissions) denied.add(p); },
    failNext: (count, status = 503, matcher) => void faults.push({ remaining: count, status, matcher }),
    throttleNext: (count, retryAfterSeconds, matcher) => void faults.push({ remaining: count, status: 429, matcher, retryAfterSeconds }),
    setLatency: (ms) => { latency.ms = ms; },
    get maxInFlight() { return latency.maxInFlight; },
    resetInFlight: () => { latency.maxInFlight = latency.inFlight; },
    dropWatches: () => hub.dropAll(),
    compact: () => store.compact(),
    async stop() {
      if (stopped) return;
      stopped = true;
      clock.stop();
      controllers.stop();
      hub.stop();
      logs.stop();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
