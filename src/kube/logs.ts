/**
 * Container logs through the bounded transport (client-node's `Log` calls node-fetch directly,
 * with no limit at all): a log read whole is one bounded answer (request timeout, size cap); a
 * followed log is a stream cut off when silent past its idle limit.
 */
import type { KubeClient, Query } from './connection';
import type { StreamHandle } from './transport';

const logPath = (namespace: string, pod: string) => `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods/${encodeURIComponent(pod)}/log`;

export interface LogQuery {
  /** Only the last lines. @default all */
  readonly tailLines?: number;
  /** The container's run before its last restart. @default false */
  readonly previous?: boolean;
}

function query(container: string, q: LogQuery, follow: boolean): Query {
  return { container, ...(follow ? { follow: true } : {}), ...(q.tailLines !== undefined ? { tailLines: q.tailLines } : {}), ...(q.previous ? { previous: true } : {}) };
}

/** A container's log so far. */
export function readLog(client: KubeClient, namespace: string, pod: string, container: string, q: LogQuery = {}): Promise<string> {
  return client.text(logPath(namespace, pod), query(container, q, false));
}

export interface FollowOptions extends LogQuery {
  /** Silence longer than this cuts the stream. @default the connection's watchIdleMs */
  readonly idleMs?: number;
  readonly onChunk: (text: string) => void;
  /** Once: null when the stream closed (the container terminated) or was stopped, else why it broke. */
  readonly onEnd: (err: Error | null) => void;
}

/** Follows a container's log; resolves once it streams, rejects with ApiError 400 while the container is still waiting. */
export function followLog(client: KubeClient, namespace: string, pod: string, container: string, o: FollowOptions): Promise<StreamHandle> {
  const decoder = new TextDecoder();
  return client.stream(logPath(namespace, pod), query(container, o, true), {
    accept: '*/*',
    idleMs: o.idleMs,
    onData: (chunk) => { o.onChunk(decoder.decode(chunk, { stream: true })); },
    onEnd: o.onEnd,
  });
}
