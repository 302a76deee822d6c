/**
 * The pods bound to the node, as an informer keeps them (src/kube/informer.ts): a complete list
 * (fail-closed, pods.ts), then a watch from the list's resourceVersion, resumed from the last
 * version seen when the stream ends, a fresh list when the version expired (410 Gone), after an
 * error and at every resync. Errors back off (doubling, capped); while the API cannot be reached
 * nothing is reported, so the units that run are left alone. What is the agent's own: the node's
 * field selector, pods of other nodes taken as gone, and the reachability it logs.
 */
import type { ApiClient } from './api';
import { ApiPod, keptPod } from './api-pod';
import { doublingMs } from '../kube/backoff';
import { Informer } from '../kube/informer';
import { listNodePodList, nodeSelector } from './pods';

export interface PodWatcherOptions {
  readonly api: ApiClient;
  /** The kubeconfig `api` was made of (kept for the callers; relists use `api`). */
  readonly kubeconfig: string;
  readonly node: string;
  readonly resyncMs: number;
  /** Per list page. */
  readonly apiTimeoutMs: number;
  /** First back-off after an error; doubles per failure. @default 200 */
  readonly backoffMs?: number;
  /** @default 10000 */
  readonly maxBackoffMs?: number;
}

export interface PodWatcherHandlers {
  /** A complete list: every pod of the node (those not in it are gone). */
  listed(pods: ApiPod[]): void;
  changed(type: 'ADDED' | 'MODIFIED' | 'DELETED', pod: ApiPod): void;
  /** The API became unreachable (with why) or reachable again. */
  reachability(reachable: boolean, why?: string): void;
}

export class PodWatcher {
  private readonly informer: Informer<ApiPod>;
  private reachable = true;

  constructor(options: PodWatcherOptions, private readonly handlers: PodWatcherHandlers) {
    const first = options.backoffMs ?? 200;
    this.informer = new Informer<ApiPod>({
      client: options.api.kube,
      list: async () => {
        const l = await listNodePodList({ api: options.api, kubeconfig: options.kubeconfig, node: options.node, timeoutMs: options.apiTimeoutMs });
        return { items: l.pods, resourceVersion: l.resourceVersion };
      },
      path: () => '/api/v1/pods',
      query: { fieldSelector: nodeSelector(options.node) },
      // The API server's own limit is 30-60 min; a shorter one spreads reconnects (client-go: 5-10 min).
      timeoutSeconds: () => 300 + Math.floor(Math.random() * 300),
      idleMs: (timeoutSeconds) => (timeoutSeconds + 60) * 1000,
      resyncMs: options.resyncMs,
      backoffMs: (failures) => doublingMs(failures, first, options.maxBackoffMs ?? 10_000),
    }, {
      listed: (pods) => {
        this.setReachable(true);
        handlers.listed(pods);
      },
      changed: (type, full) => {
        // only what the agent reads is kept (api-pod.ts keptPod)
        const pod = keptPod(full);
        // A server that ignored the field selector must not make other nodes' pods count here.
        if (pod.spec?.nodeName !== options.node && type !== 'DELETED') handlers.changed('DELETED', pod);
        else handlers.changed(type, pod);
      },
      failed: (e) => { this.setReachable(false, e.message); },
      recovered: () => this.setReachable(true),
    });
  }

  /** Starts from a list already read (the start-up cleanup's), so nothing between the two is missed. */
  start(initial: { pods: ApiPod[]; resourceVersion: string }): void {
    this.informer.start({ items: initial.pods, resourceVersion: initial.resourceVersion });
  }

  /** Forces a full relist now (as the periodic resync does). */
  resync(): void {
    this.informer.resync();
  }

  stop(): Promise<void> {
    return this.informer.stop();
  }

  private setReachable(ok: boolean, why?: string): void {
    if (ok === this.reachable) return;
    this.reachable = ok;
    this.handlers.reachability(ok, why);
  }
}
