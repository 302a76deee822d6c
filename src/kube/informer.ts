/**
 * A list+watch, as client-go's informers keep one: a complete list, then a watch from its
 * resourceVersion, resumed from the last version seen when the server ends the stream; a fresh
 * list when that version expired (410 Gone, as an answer or an ERROR event), when the watch went
 * silent past its idle limit (it may have missed events), after an error, and at every resync.
 * Errors back off (the caller's schedule); the handlers hear of each failure and of the recovery.
 */
import type { KubeClient, Query } from './connection';
import { ApiError, StreamIdle } from './errors';
import type { Listing } from './pager';
import type { StreamHandle } from './transport';
import { openWatch, WatchEvent } from './watch';

export interface InformerOptions<T> {
  readonly client: KubeClient;
  /** The complete list (src/kube/pager.ts). */
  list(): Promise<Listing<T>>;
  /** The collection's path (`/api/v1/pods`). */
  path(): Promise<string> | string;
  /** The watch's selectors (`fieldSelector`, `labelSelector`). */
  readonly query?: Query;
  /** Each watch asks the server to end it after this long. @default 300 */
  timeoutSeconds?(): number;
  /** Silence that cuts a watch of `timeoutSeconds`. @default the connection's watchIdleMs */
  idleMs?(timeoutSeconds: number): number;
  /** A full relist this often. @default never */
  readonly resyncMs?: number;
  /** The wait before the next try after `failures` failures in a row. */
  backoffMs(failures: number): number;
}

export interface InformerHandlers<T> {
  /** A complete list: every object (those not in it are gone). */
  listed(items: T[], resourceVersion: string): void;
  changed(type: 'ADDED' | 'MODIFIED' | 'DELETED', obj: T): void;
  /** A list or watch failed (`failures` in a row); returning false stops the informer. */
  failed?(e: Error, failures: number): boolean | void;
  /** The API answered again (a list or a watch opened) after failures. */
  recovered?(): void;
}

/** 410 Gone: the resourceVersion is no longer in the server's history. */
class Expired extends Error {}

export class Informer<T> {
  private stopped = false;
  private current?: StreamHandle;
  private relist = false;
  private failures = 0;
  private resyncTimer?: NodeJS.Timeout;
  private wake?: () => void;
  private loop?: Promise<void>;

  constructor(private readonly o: InformerOptions<T>, private readonly h: InformerHandlers<T>) {}

  /** Starts; from a list already read when given (nothing between the two is missed). */
  start(initial?: Listing<T>): void {
    if (initial) this.h.listed(initial.items, initial.resourceVersion);
    this.scheduleResync();
    this.loop = this.run(initial?.resourceVersion || undefined);
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
    if (this.o.resyncMs === undefined) return;
    clearTimeout(this.resyncTimer);
    this.resyncTimer = setTimeout(() => {
      this.scheduleResync();
      this.resync();
    }, this.o.resyncMs);
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

  private answered(): void {
    if (this.failures === 0) return;
    this.failures = 0;
    this.h.recovered?.();
  }

  private async run(startVersion: string | undefined): Promise<void> {
    let rv = startVersion;
    while (!this.stopped) {
      try {
        if (this.relist || !rv) {
          this.relist = false;
          const list = await this.o.list();
          if (this.stopped) return;
          this.answered();
          this.h.listed(list.items, list.resourceVersion);
          rv = list.resourceVersion || undefined;
          if (!rv) throw new Error('the list carries no resourceVersion to watch from');
        }
        rv = await this.watchFrom(rv);
      } catch (e) {
        if (this.stopped) return;
        if (e instanceof Expired) {
          rv = undefined;
          continue;
        }
        this.relist = true; // what happened meanwhile is not known
        this.failures++;
        if (this.h.failed?.(e as Error, this.failures) === false) return;
        await this.sleep(this.o.backoffMs(this.failures));
      }
    }
  }

  /** One watch; returns the last resourceVersion seen when the server ends the stream. */
  private async watchFrom(rv: string): Promise<string> {
    const timeoutSeconds = this.o.timeoutSeconds?.() ?? 300;
    let last = rv;
    const onEvent = (e: WatchEvent): void => {
      if (e.type === 'ERROR') {
        const code = e.object.code;
        if (code === 410) throw new Expired(`resourceVersion ${last} expired`);
        throw new ApiError(code ?? 0, e.object.reason ?? '', `watch: ${e.object.message ?? 'error event'}`);
      }
      const version = e.object.metadata?.resourceVersion;
      if (typeof version === 'string' && version) last = version;
      if (e.type === 'BOOKMARK') return;
      this.h.changed(e.type, e.object as T);
    };
    let ended!: (err: Error | null) => void;
    const done = new Promise<Error | null>((resolve) => { ended = resolve; });
    try {
      this.current = await openWatch(this.o.client, await this.o.path(), {
        ...this.o.query, resourceVersion: rv, allowWatchBookmarks: true, timeoutSeconds,
      }, { idleMs: this.o.idleMs?.(timeoutSeconds), onEvent, onEnd: (err) => ended(err) });
    } catch (e) {
      if (e instanceof ApiError && e.status === 410) throw new Expired(e.message);
      throw e;
    }
    if (this.stopped || this.relist) this.current.abort(); // stop() or resync() came while it opened
    this.answered();
    const err = await done;
    this.current = undefined;
    if (err instanceof Expired) throw err;
    if (err instanceof StreamIdle) throw err; // may have missed events: relist
    if (err) throw err;
    return last;
  }
}
