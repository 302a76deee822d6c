/**
 * The reconcile loop's work queue: pods marked dirty are handed to the worker in batches, one
 * batch at a time; what is marked meanwhile goes into the next batch.
 */
export class WorkQueue {
  private readonly dirty = new Set<string>();
  private draining?: Promise<void>;
  private stopped = false;

  constructor(
    private readonly work: (keys: readonly string[]) => Promise<void>,
    private readonly failed: (keys: readonly string[], e: Error) => void,
  ) {}

  mark(key: string): void {
    this.dirty.add(key);
    if (this.draining || this.stopped) return;
    this.draining = new Promise<void>((resolve) => setImmediate(resolve)).then(() => this.drain()).finally(() => {
      this.draining = undefined;
      if (this.dirty.size && !this.stopped) this.mark([...this.dirty][0]);
    });
  }

  /** Resolves when no batch runs (more may be marked meanwhile: the caller loops). */
  get busy(): Promise<void> | undefined {
    return this.draining;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.draining;
  }

  private async drain(): Promise<void> {
    while (this.dirty.size && !this.stopped) {
      const keys = [...this.dirty];
      this.dirty.clear();
      try {
        await this.work(keys);
      } catch (e) {
        this.failed(keys, e as Error);
      }
    }
  }
}
