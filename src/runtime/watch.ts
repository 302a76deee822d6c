/**
 * A list-watch: list, then watch from the list's resourceVersion; `onChange` gets the full
 * current set after every change. A dropped or server-closed watch resumes from the last
 * resourceVersion seen; 410 Gone (history compacted) and a watch silent past its idle timeout
 * (src/runtime/http.ts) relist. Errors are retried with backoff
 * until `stop()`.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import { BackoffOptions, retryDelayMs } from './backoff';
import { MissingKind } from './errors';
import { WatchConnection, Watcher, WatchIdle } from './http';

export interface WatchQuery {
  readonly apiVersion: string;
  readonly kind: string;
  readonly namespace?: string;
  readonly fieldSelector?: string;
  readonly labelSelector?: string;
}

export interface WatchHandle {
  stop(): void;
}

export interface Listing<T extends KubernetesObject = KubernetesObject> {
  readonly items: T[];
  readonly resourceVersion: string;
}

/** What a list-watch needs of the client. */
export interface WatchSource {
  list(q: WatchQuery): Promise<Listing>;
  collectionPath(q: WatchQuery): Promise<string>;
  readonly watcher: Watcher;
  readonly backoff: BackoffOptions;
  /** Counts one retried request (for the run summary). */
  retried(): void;
}

const keyOf = (o: KubernetesObject) => `${o.metadata?.namespace ?? ''}/${o.metadata?.name}`;

export class ListWatch implements WatchHandle {
  private stopped = false;
  private controller?: WatchConnection;
  /** Each (re)start is a session; callbacks of an older one are ignored. */
  private session = 0;
  private readonly items = new Map<string, KubernetesObject>();
  private rv = '';
  private failures = 0;

  constructor(
    private readonly src: WatchSource,
    private readonly q: WatchQuery,
    private readonly onChange: (items: ReadonlyMap<string, KubernetesObject>) => void,
    private readonly onError?: (e: Error) => void,
  ) {
    this.restart(true);
  }

  stop(): void {
    this.stopped = true;
    this.controller?.abort();
  }

  private current(session: number): boolean {
    return !this.stopped && session === this.session;
  }

  private restart(relist: boolean): void {
    if (this.stopped) return;
    const session = ++this.session;
    this.controller?.abort();
    this.controller = undefined;
    const delay = this.failures === 0 ? 0 : retryDelayMs(Math.min(this.failures, 6), undefined, { ...this.src.backoff, attempts: 100 }) ?? 1000;
    setTimeout(() => {
      if (this.current(session)) this.open(session, relist).catch((e) => this.openFailed(session, e));
    }, delay);
  }

  private async open(session: number, relist: boolean): Promise<void> {
    if (relist || !this.rv) await this.relist();
    if (!this.current(session)) return;
    const path = await this.src.collectionPath(this.q);
    const params = {
      resourceVersion: this.rv, allowWatchBookmarks: true, timeoutSeconds: 300,
      fieldSelector: this.q.fieldSelector, labelSelector: this.q.labelSelector,
    };
    const c = await this.src.watcher.watch(path, params, (type, obj) => this.event(session, type, obj), (err) => this.ended(session, err));
    // stop() or a restart may have come while the watch was being opened.
    if (this.current(session)) this.controller = c;
    else c.abort();
  }

  private async relist(): Promise<void> {
    const l = await this.src.list(this.q);
    this.items.clear();
    for (const it of l.items) this.items.set(keyOf(it), it);
    this.rv = l.resourceVersion;
    this.onChange(this.items);
  }

  private event(session: number, type: string, obj: unknown): void {
    if (session !== this.session) return;
    this.failures = 0;
    if (type === 'ERROR') {
      this.src.retried();
      this.restart(true); // 410 Expired or any other error event: start over from a fresh list
      return;
    }
    const o = obj as KubernetesObject | undefined;
    if (o?.metadata?.resourceVersion) this.rv = o.metadata.resourceVersion;
    if (type === 'BOOKMARK') return;
    const full = { apiVersion: this.q.apiVersion, kind: this.q.kind, ...o };
    if (type === 'DELETED') this.items.delete(keyOf(full));
    else this.items.set(keyOf(full), full);
    this.onChange(this.items);
  }

  private ended(session: number, err: unknown): void {
    if (!this.current(session)) return;
    if (err) {
      this.failures++;
      this.src.retried();
    }
    // 410 Gone: history compacted; a watch gone silent (idle timeout) may have missed events
    this.restart((err as { statusCode?: unknown } | null | undefined)?.statusCode === 410 || err instanceof WatchIdle);
  }

  private openFailed(session: number, e: unknown): void {
    if (!this.current(session)) return;
    this.failures++;
    this.src.retried();
    if (e instanceof MissingKind) {
      this.onError?.(e);
      return;
    }
    if (this.failures > 20) this.onError?.(e as Error);
    this.restart(true);
  }
}
