/**
 * The pods bound to the node, as an informer keeps them: a complete list (fail-closed, pods.ts),
 * then a watch from the list's resourceVersion, resumed from the last version seen when the stream
 * ends or breaks, a fresh list when the version expired (410 Gone) and at every resync. Errors back
 * off (doubling, capped); while the API cannot be reached nothing is reported, so the units that
 * run are left alone.
 */
import type { ApiClient, WatchEvent } from './api';
import { ApiError } from './api';
import type { ApiPod } from './api-pod';
import { listNodePodList } from './pods';

export interface PodWatcherOptions {
  readonly api: ApiClient;
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

/** Field selector values escape `\`, `,` and `=` with a backslash. */
const selectorValue = (v: string): string => v.replace(/[\\,=]/g, (c) => `\\${c}`);

class Expired extends Error {}

export class PodWatcher {
  private stopped = false;
  private current?: { abort(): void };
  private relist = false;
  private reachable = true;
  private resyncTimer?: NodeJS.Timeout;
  private wake?: () => void;
  private loop?: Promise<void>;

  constructor(private readonly options: PodWatcherOptions, private readonly handlers: PodWatcherHandlers) {}

  /** Starts from a list already read (the start-up cleanup's), so nothing between the two is missed. */
  start(initial: { pods: ApiPod[]; resourceVersion: string }): void {
    this.handlers.listed(initial.pods);
    this.scheduleResync();
    this.loop = this.run(initial.resourceVersion || undefined);
  }

  /** Forces a full relist now (as the periodic resync does). */
  resync(): void {
    this.relist = true;
    this.current?.abort();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.resyncTimer);
    this.current?.abort();
    this.wake?.();
    await this.loop;
  }

  private scheduleResync(): void {
    clearTimeout(this.resyncTimer);
    this.resyncTimer = setTimeout(() => {
      this.scheduleResync();
      this.resync();
    }, this.options.resyncMs);
    this.resyncTimer.unref();
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const t = setTimeout(resolve, ms);
      this.wake = () => {
        clearTimeout(t);
        resolve();
      };
    });
  }

  private setReachable(ok: boolean, why?: string): void {
    if (ok === this.reachable) return;
    this.reachable = ok;
    this.handlers.reachability(ok, why);
  }

  private async run(startVersion: string | undefined): Promise<void> {
    let rv = startVersion;
    const first = this.options.backoffMs ?? 200;
    let backoff = first;
    while (!this.stopped) {
      try {
        if (this.relist || !rv) {
          this.relist = false;
          const list = await listNodePodList({ kubeconfig: this.options.kubeconfig, node: this.options.node, timeoutMs: this.options.apiTimeoutMs });
          if (this.stopped) return;
          this.setReachable(true);
          this.handlers.listed(list.pods as ApiPod[]);
          rv = list.resourceVersion || undefined;
          if (!rv) throw new Error('the pod list carries no resourceVersion to watch from');
        }
        rv = await this.watchFrom(rv, () => {
          backoff = first;
          this.setReachable(true);
        });
      } catch (e) {
        if (this.stopped) return;
        if (e instanceof Expired) {
          rv = undefined;
          continue;
        }
        this.setReachable(false, (e as Error).message);
        await this.sleep(backoff);
        backoff = Math.min(backoff * 2, this.options.maxBackoffMs ?? 10_000);
      }
    }
  }

  /** One watch request; returns the last resourceVersion seen when the server ends the stream. */
  private async watchFrom(rv: string, opened: () => void): Promise<string> {
    // The API server's own limit is 30-60 min; a shorter one spreads reconnects (client-go: 5-10 min).
    const timeoutSeconds = 300 + Math.floor(Math.random() * 300);
    const q = new URLSearchParams({
      fieldSelector: `spec.nodeName=${selectorValue(this.options.node)}`,
      watch: 'true',
      resourceVersion: rv,
      allowWatchBookmarks: 'true',
      timeoutSeconds: String(timeoutSeconds),
    });
    let last = rv;
    const onEvent = (e: WatchEvent): void => {
      if (e.type === 'ERROR') {
        const code = e.object.code;
        if (code === 410) throw new Expired(`resourceVersion ${last} expired`);
        throw new ApiError(`watch: ${e.object.message ?? 'error event'}`, code ?? 0, e.object.reason);
      }
      const version = e.object.metadata?.resourceVersion;
      if (typeof version === 'string' && version) last = version;
      if (e.type === 'BOOKMARK') return;
      const pod = e.object as ApiPod;
      // A server that ignored the field selector must not make other nodes' pods count here.
      if (pod.spec?.nodeName !== this.options.node && e.type !== 'DELETED') {
        this.handlers.changed('DELETED', pod);
        return;
      }
      this.handlers.changed(e.type, pod);
    };
    const handle = this.options.api.watch(`api/v1/pods?${q}`, onEvent, { idleTimeoutMs: (timeoutSeconds + 60) * 1000, onOpen: opened });
    this.current = handle;
    try {
      await handle.done;
    } catch (e) {
      if (e instanceof ApiError && e.status === 410) throw new Expired(e.message);
      throw e;
    } finally {
      this.current = undefined;
    }
    return last;
  }
}
