/**
 * The agent's heap upkeep (issue 36). V8 starts a full collection only when its old generation
 * reaches a limit it set from the heap's size, and Node gives it no idle time to collect in, so
 * the garbage a burst of work promoted (the start-up's list pages, D-Bus replies and status
 * patches) stays resident in an agent that then sits idle: ~10 MB of a 1000-pod agent's RSS
 * (docs/agent.md, "The agent's idle memory"). On each of its ticks (the Lease's, every 10 s) the
 * agent asks for full collections when its heap grew by more than `HEAP_GROWTH_BYTES` since it
 * last did: once after a burst, then not again while idle.
 *
 * One collection is not enough: it finds the garbage, but the pages it freed stay the heap's,
 * each holding a few live objects among the freed. The next moves those out, and the emptied
 * pages go back to the system; V8 picks the pages to move from those already swept, and reading
 * the heap's statistics finishes the sweeping (back to back without it, the second collection
 * moved nothing about half the time). So: collect, read the old space, and again while more than
 * the growth of it is free, at most `MAX_COLLECTIONS` times. Measured with 1000 pods: old space
 * 47.5 MB (46.4 used) -> 44.7 (16.1 used) -> 17.0 (15.9 used), RSS 118 -> 87 MB, ~20 ms each.
 *
 * It needs V8's `gc`, which `--expose-gc` gives (the agent's unit sets it in NODE_OPTIONS,
 * src/systemd/defaults.ts AGENT_NODE_OPTIONS); without it the upkeep does nothing.
 */
import { getHeapSpaceStatistics, getHeapStatistics } from 'v8';

/** Growth of the used heap since the last collections that earns more on the next tick; also the free old space that earns one more collection. */
export const HEAP_GROWTH_BYTES = 4 * 1024 * 1024;

/** Full collections of one tick, at most. */
export const MAX_COLLECTIONS = 3;

/** V8's `gc`, when the process was started with --expose-gc. */
export function exposedGc(): (() => void) | undefined {
  const gc = (globalThis as { gc?: unknown }).gc;
  return typeof gc === 'function' ? () => { (gc as () => void)(); } : undefined;
}

/** V8's old space: its size and what of it is used. */
function oldSpace(): { size: number; used: number } {
  const s = getHeapSpaceStatistics().find((x) => x.space_name === 'old_space');
  return { size: s?.space_size ?? 0, used: s?.space_used_size ?? 0 };
}

export interface HeapProbes {
  /** V8's gc; undefined: the upkeep does nothing. */
  readonly gc: (() => void) | undefined;
  /** The used heap. */
  readonly used: () => number;
  /** The old space (reading it finishes V8's sweeping). */
  readonly oldSpace: () => { size: number; used: number };
}

export class HeapUpkeep {
  /** The used heap after the last collections; none yet: the first tick collects. */
  private base = 0;
  private readonly p: HeapProbes;

  constructor(probes: Partial<HeapProbes> = {}, private readonly growth = HEAP_GROWTH_BYTES) {
    this.p = { gc: 'gc' in probes ? probes.gc : exposedGc(), used: probes.used ?? (() => getHeapStatistics().used_heap_size), oldSpace: probes.oldSpace ?? oldSpace };
  }

  /** Whether the heap is kept: `gc` is there. */
  get active(): boolean {
    return this.p.gc !== undefined;
  }

  /** One tick: collections when the heap grew enough since the last; how many it ran. */
  tick(): number {
    if (!this.p.gc || this.p.used() - this.base < this.growth) return 0;
    let n = 0;
    for (;;) {
      this.p.gc();
      n++;
      const old = this.p.oldSpace();
      if (n >= MAX_COLLECTIONS || old.size - old.used < this.growth) break;
    }
    this.base = this.p.used();
    return n;
  }
}
