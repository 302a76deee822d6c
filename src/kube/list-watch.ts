/**
 * The runtime's list-watch (what waits use): the Kubernetes layer's informer (src/kube/informer.ts:
 * list, watch from its resourceVersion, resume, relist on 410 and after silence or errors,
 * backoff), keeping the current set; `onChange` gets all of it after every change. Errors are
 * retried until `stop()`, except a kind the cluster does not serve.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import type { KubeClient } from './connection';
import { Informer } from './informer';
import type { Listing } from './pager';
import { BackoffOptions, retryDelayMs } from './backoff';
import { MissingKind } from './api-errors';
import { notAnswering } from './retry';

export type { Listing };

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

/** What a list-watch needs of the client. */
export interface WatchSource {
  readonly client: KubeClient;
  list(q: WatchQuery): Promise<Listing<KubernetesObject>>;
  collectionPath(q: WatchQuery): Promise<string>;
  readonly backoff: BackoffOptions;
  /** Counts one retried request (for the run summary). */
  retried(): void;
  /** The API server does not answer (a refused or reset connection): said once (Cluster.apiDown). */
  apiDown?(code: string): void;
  /** The list or watch was answered again. */
  apiUp?(): void;
}

const keyOf = (o: KubernetesObject) => `${o.metadata?.namespace ?? ''}/${o.metadata?.name}`;

/**
 * After this many failures in a row the caller hears of them (the watch keeps trying). A refused
 * or reset connection does not count: the API server restarts, which the waiter bounds by how
 * long it has not answered (apiSilenceBounds).
 */
const TELL_AFTER = 20;

export class ListWatch implements WatchHandle {
  private readonly items = new Map<string, KubernetesObject>();
  private readonly informer: Informer<KubernetesObject>;
  /** Of the failures in a row, those of an API server that did not answer. */
  private downFailures = 0;

  constructor(
    src: WatchSource,
    q: WatchQuery,
    onChange: (items: ReadonlyMap<string, KubernetesObject>) => void,
    onError?: (e: Error) => void,
  ) {
    this.informer = new Informer<KubernetesObject>({
      client: src.client,
      list: () => src.list(q),
      path: () => src.collectionPath(q),
      query: { fieldSelector: q.fieldSelector, labelSelector: q.labelSelector },
      backoffMs: (failures) => retryDelayMs(Math.min(failures, 6), undefined, { ...src.backoff, attempts: 100 }) ?? 1000,
    }, {
      listed: (items) => {
        this.items.clear();
        for (const it of items) this.items.set(keyOf(it), it);
        onChange(this.items);
      },
      changed: (type, o) => {
        const full = { apiVersion: q.apiVersion, kind: q.kind, ...o };
        if (type === 'DELETED') this.items.delete(keyOf(full));
        else this.items.set(keyOf(full), full);
        onChange(this.items);
      },
      failed: (e, failures) => {
        src.retried();
        if (e instanceof MissingKind) {
          onError?.(e);
          return false;
        }
        const code = notAnswering(e);
        if (code) {
          this.downFailures++;
          src.apiDown?.(code);
        } else if (failures - this.downFailures > TELL_AFTER) onError?.(e);
        return true;
      },
      recovered: () => {
        this.downFailures = 0;
        src.apiUp?.();
      },
    });
    this.informer.start();
  }

  stop(): void {
    void this.informer.stop();
  }
}
