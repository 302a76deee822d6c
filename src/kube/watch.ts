/**
 * One watch request: `?watch=true` from a resourceVersion, one JSON event per line, through the
 * bounded transport (headers within the request timeout, then silence bounded by the idle limit;
 * a line larger than the size cap or not JSON ends it).
 */
import type { KubeClient, Query } from './connection';
import { BadAnswer, Refused } from './errors';
import type { StreamHandle } from './transport';

export interface WatchEvent {
  readonly type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  readonly object: { metadata?: { resourceVersion?: string }; code?: number; reason?: string; message?: string } & Record<string, unknown>;
}

export interface WatchOptions {
  /** Silence longer than this cuts the watch. @default limits.watchIdleMs */
  readonly idleMs?: number;
  readonly onEvent: (e: WatchEvent) => void;
  /** Once: null for the server's clean end (its timeoutSeconds) or `abort()`, else why it broke. */
  readonly onEnd: (err: Error | null) => void;
}

/** Opens a watch; resolves once the server answered 200, rejects with its ApiError or the connection's failure. */
export function openWatch(client: KubeClient, path: string, query: Query, o: WatchOptions): Promise<StreamHandle> {
  let buffered = '';
  const decoder = new TextDecoder();
  const max = client.limits.maxBodyBytes;
  return client.stream(path, { ...query, watch: true }, {
    idleMs: o.idleMs,
    onEnd: o.onEnd,
    onData: (chunk) => {
      buffered += decoder.decode(chunk, { stream: true });
      let nl: number;
      while ((nl = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, nl).trim();
        buffered = buffered.slice(nl + 1);
        if (!line) continue;
        let event: WatchEvent;
        try {
          event = JSON.parse(line) as WatchEvent;
        } catch {
          throw new BadAnswer(`watch ${path}: an event is not JSON`);
        }
        o.onEvent(event);
      }
      if (buffered.length > max) throw new Refused(`watch ${path}: an event is larger than the ${Math.round(max / 1024 ** 2)} MiB size cap; refused`);
    },
  });
}
