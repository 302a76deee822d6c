// The simulator's virtual clock: durations in the cluster run `speed` times faster than real
// time, so a Job scripted to take 1 s finishes in 20 ms at the default speed. Every timer the
// controllers set goes through here, so stop() can cancel them all.
//
// Timestamps written into objects (creationTimestamp, startTime, lastTransitionTime) are the
// real wall clock: a virtual "now" would run ahead of the client's clock and put them in the
// future, which kubectl shows as an <invalid> age and which would skew any grace window a
// client measures against its own clock.
export class VirtualClock {
  private readonly timers = new Set<NodeJS.Timeout>();
  private stopped = false;

  constructor(readonly speed: number) {
    if (!(speed > 0)) throw new Error(`clockSpeed must be > 0, got ${speed}`);
  }

  /** An RFC 3339 timestamp (real wall clock), at second precision as the API server writes them. */
  timestamp(at = Date.now()): string {
    return new Date(Math.floor(at / 1000) * 1000).toISOString().replace('.000Z', 'Z');
  }

  /** Runs fn after `virtualMs` of cluster time. Returns a cancel function. */
  after(virtualMs: number, fn: () => void): () => void {
    if (this.stopped) return () => {};
    const t = setTimeout(() => {
      this.timers.delete(t);
      if (!this.stopped) fn();
    }, Math.max(0, virtualMs / this.speed));
    this.timers.add(t);
    return () => {
      clearTimeout(t);
      this.timers.delete(t);
    };
  }

  stop(): void {
    this.stopped = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
  }
}
