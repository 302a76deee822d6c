// The watch hub: one stream per `?watch=true` request, fed from the store's events. A stream
// starts with the current objects (no resourceVersion, or "0") or replays history after the
// given resourceVersion; a compacted resourceVersion gets an ERROR event with a 410 Expired
// Status, as the API server sends it. Streams close cleanly at timeoutSeconds (virtual time),
// and abruptly when the test calls dropWatches().
import type { ServerResponse } from 'node:http';
import type { VirtualClock } from './clock';
import { ResourceType, apiVersionOf, typeKey } from './resources';
import { Store, StoreEvent, EventType } from './store';

export interface WatchSpec {
  rt: ResourceType;
  namespace?: string;
  name?: string;
  labelMatch: (labels: Record<string, string> | undefined) => boolean;
  fieldMatch: (o: any) => boolean;
  resourceVersion?: string;
  bookmarks: boolean;
  /** sendInitialEvents=true: current objects, then a BOOKMARK marking their end (watch-list). */
  initialEvents: boolean;
  /** Virtual seconds until the server closes the stream. */
  timeoutSeconds: number;
}

/** How often a stream that asked for bookmarks gets one, in virtual ms (the API server: ~1 min). */
const BOOKMARK_EVERY_MS = 60_000;

interface Stream {
  res: ServerResponse;
  close(abrupt: boolean): void;
}

export class WatchHub {
  private readonly streams = new Set<Stream>();

  constructor(private readonly store: Store, private readonly clock: VirtualClock) {}

  get open(): number {
    return this.streams.size;
  }

  serve(res: ServerResponse, w: WatchSpec): void {
    const matches = (o: any) =>
      o !== undefined &&
      (!w.rt.namespaced || w.namespace === undefined || o.metadata?.namespace === w.namespace) &&
      (w.name === undefined || o.metadata?.name === w.name) &&
      w.labelMatch(o.metadata?.labels) &&
      w.fieldMatch(o);
    const send = (type: EventType | 'BOOKMARK' | 'ERROR', object: any) => {
      if (!res.writableEnded && !res.destroyed) res.write(JSON.stringify({ type, object }) + '\n');
    };

    res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private' });
    res.flushHeaders();

    const rv = w.resourceVersion;
    if (w.initialEvents) {
      for (const o of this.store.list(w.rt, w.namespace)) if (matches(o)) send('ADDED', o);
      send('BOOKMARK', { kind: w.rt.kind, apiVersion: apiVersionOf(w.rt), metadata: { resourceVersion: String(this.store.resourceVersion), annotations: { 'k8s.io/initial-events-end': 'true' } } });
    } else if (rv && rv !== '0') {
      const n = Number(rv);
      const replay = Number.isInteger(n) ? this.store.eventsSince(n) : undefined;
      if (!replay) {
        send('ERROR', {
          kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', reason: 'Expired', code: 410,
          message: Number.isInteger(n) ? `too old resource version: ${rv} (${this.store.compactedRv})` : `invalid resource version "${rv}"`,
        });
        res.end();
        return;
      }
      for (const e of replay) this.forward(e, w, matches, send);
    } else {
      for (const o of this.store.list(w.rt, w.namespace)) if (matches(o)) send('ADDED', o);
    }

    const cancels: Array<() => void> = [];
    const stream: Stream = {
      res,
      close: (abrupt) => {
        if (!this.streams.delete(stream)) return;
        cancels.forEach((c) => c());
        if (abrupt) res.destroy();
        else if (!res.writableEnded) res.end();
      },
    };
    this.streams.add(stream);
    cancels.push(this.store.subscribe((e) => this.forward(e, w, matches, send)));
    const bookmark = () => send('BOOKMARK', { kind: w.rt.kind, apiVersion: apiVersionOf(w.rt), metadata: { resourceVersion: String(this.store.resourceVersion) } });
    if (w.bookmarks) {
      const tick = () => {
        bookmark();
        cancels.push(this.clock.after(BOOKMARK_EVERY_MS, tick));
      };
      cancels.push(this.clock.after(BOOKMARK_EVERY_MS, tick));
    }
    cancels.push(
      this.clock.after(w.timeoutSeconds * 1000, () => {
        if (w.bookmarks) bookmark();
        stream.close(false);
      }),
    );
    res.on('close', () => stream.close(false));
  }

  private forward(e: StoreEvent, w: WatchSpec, matches: (o: any) => boolean, send: (t: EventType, o: any) => void): void {
    if (typeKey(e.rt) !== typeKey(w.rt)) return;
    const now = e.type !== 'DELETED' && matches(e.object);
    const before = e.type !== 'ADDED' && matches(e.old);
    if (e.type === 'DELETED') {
      if (before) send('DELETED', e.object);
    } else if (now && before) send('MODIFIED', e.object);
    else if (now) send('ADDED', e.object);
    else if (before) send('DELETED', e.object);
  }

  /** Cuts every open stream (a server-side drop: the client sees the connection end mid-stream). */
  dropAll(): void {
    for (const s of [...this.streams]) s.close(true);
  }

  stop(): void {
    for (const s of [...this.streams]) s.close(false);
  }
}
