/**
 * Writes pod status: `PATCH pods/<name>/status` (merge patch), only when it changed, debounced
 * (a unit's burst of signals is one patch) and a few at a time.
 */
import { ApiClient, ApiError } from './api';
import type { ApiPod } from './api-pod';
import type { Logger } from './log';
import type { Managed } from './pod-book';
import { statusIsCurrent } from './pod-status';
import { podPath } from './pod-deletion';
import { pool } from './unit-lifecycle';
import { doublingMs } from '../kube/backoff';

const MERGE = 'application/merge-patch+json';
const STATUS_DEBOUNCE_MS = 15;
const STATUS_CONCURRENCY = 8;
const RETRY_FIRST_MS = 200;
const RETRY_MAX_MS = 10_000;

/** What a pod's status should be now, with what the writer needs to send it; undefined: nothing to write. */
export type StatusSource = (key: string) => { pod: ApiPod; m: Managed; want: Record<string, unknown> } | undefined;

export class StatusWriter {
  private readonly dirty = new Set<string>();
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private stopped = false;
  /** How many writes of a pod's status failed in a row (its next wait doubles with each). */
  private readonly failures = new Map<string, number>();
  private readonly retries = new Map<string, NodeJS.Timeout>();

  constructor(private readonly api: ApiClient, private readonly source: StatusSource, private readonly log: Logger) {}

  mark(key: string): void {
    this.dirty.add(key);
    if (!this.timer && !this.stopped) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        void this.flush();
      }, STATUS_DEBOUNCE_MS);
    }
  }

  /** Resolves when no write is pending. */
  async idle(): Promise<void> {
    while (this.running || this.timer) {
      await this.running;
      if (this.timer) await new Promise((r) => setTimeout(r, STATUS_DEBOUNCE_MS));
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.retries.values()) clearTimeout(t);
    this.retries.clear();
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
  }

  private async flush(): Promise<void> {
    if (this.running) {
      await this.running;
      if (this.dirty.size) this.mark([...this.dirty][0]);
      return;
    }
    const keys = [...this.dirty];
    this.dirty.clear();
    this.running = pool(keys, STATUS_CONCURRENCY, (key) => this.patch(key)).finally(() => {
      this.running = undefined;
    });
    await this.running;
  }

  private retryLater(key: string): void {
    if (this.stopped || this.retries.has(key)) return;
    const failures = (this.failures.get(key) ?? 0) + 1;
    this.failures.set(key, failures);
    const wait = doublingMs(failures, RETRY_FIRST_MS, RETRY_MAX_MS);
    this.retries.set(key, setTimeout(() => {
      this.retries.delete(key);
      this.mark(key);
    }, wait));
  }

  private async patch(key: string): Promise<void> {
    if (this.stopped) return;
    const s = this.source(key);
    if (!s) return;
    const { pod, m, want } = s;
    if (statusIsCurrent(m.sent ?? pod.status, want)) return;
    try {
      await this.api.request('PATCH', `${podPath(pod)}/status`, { contentType: MERGE, body: { status: want } });
      m.sent = want;
      this.failures.delete(key);
      const states = (want.containerStatuses as Array<{ name: string; state: Record<string, unknown> }>).map((c) => `${c.name} ${Object.keys(c.state)[0] ?? 'unknown'}`);
      this.log.log('INFO', `The status of pod [${key}] was updated: ${want.phase} (${states.join(', ')}).`, { pod: key, action: 'status' });
    } catch (e) {
      if (e instanceof ApiError && e.status === 404) return; // the pod is gone
      // Sent again after a backoff (0.2 s, doubling, to 10 s), or sooner with the next change.
      this.retryLater(key);
      this.log.log('WARN', `The status of pod [${key}] could not be updated: ${(e as Error).message}`, { pod: key, action: 'status' });
    }
  }
}
