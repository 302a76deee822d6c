import { execFileSync } from 'child_process';
import * as path from 'path';
import { HEAP_GROWTH_BYTES, HeapUpkeep, MAX_COLLECTIONS } from '../../src/agent/heap';
import { AGENT_NODE_OPTIONS } from '../../src/systemd/defaults';

const ROOT = path.join(__dirname, '..', '..');
const MB = 1048576;

describe('the agent\'s heap upkeep (issue 36)', () => {
  /** A heap whose collections go as listed: each the old space's size after it, the used part 16 MB. */
  const heapOf = (sizes: number[]) => {
    const h = { used: 40 * MB, size: 48 * MB, collections: 0 };
    const gc = () => { h.size = sizes[Math.min(h.collections, sizes.length - 1)]; h.used = 18 * MB; h.collections++; };
    return { h, upkeep: new HeapUpkeep({ gc, used: () => h.used, oldSpace: () => ({ size: h.size, used: 16 * MB }) }) };
  };

  it('collects on the first tick until the old space is compact, then only once the heap grew by more than its growth', () => {
    const { h, upkeep } = heapOf([45 * MB, 17 * MB]);
    expect(upkeep.active).toBe(true);
    expect(upkeep.tick()).toBe(2);
    h.used += HEAP_GROWTH_BYTES - 1;
    expect(upkeep.tick()).toBe(0);
    h.used += 1;
    expect(upkeep.tick()).toBe(1);
    expect(h.collections).toBe(3);
  });

  it(`stops after ${MAX_COLLECTIONS} collections of a tick, compact or not`, () => {
    const { upkeep } = heapOf([45 * MB]);
    expect(upkeep.tick()).toBe(MAX_COLLECTIONS);
  });

  it('does nothing without V8\'s gc (an agent started by hand without --expose-gc)', () => {
    const upkeep = new HeapUpkeep({ gc: undefined, used: () => 1e9 });
    expect(upkeep.active).toBe(false);
    expect(upkeep.tick()).toBe(0);
  });

  it('under the unit\'s NODE_OPTIONS, gives a burst\'s fragmented old space back (a real V8)', () => {
    // what a start-up leaves: an old generation in which one object in ten stays live, spread
    // over every page; the unit's environment exposes gc, and one tick compacts it
    const out = execFileSync(process.execPath, ['-r', path.join(ROOT, 'bin', 'register.js'), '-e', `
      const v8 = require('v8');
      const { HeapUpkeep } = require(${JSON.stringify(path.join(ROOT, 'src', 'agent', 'heap.ts'))});
      const old = () => v8.getHeapSpaceStatistics().find((s) => s.space_name === 'old_space').space_size;
      const keep = [];
      let junk = [];
      for (let i = 0; i < 400000; i++) { const o = { name: 'pod-' + i, spec: [i, i + 1] }; (i % 10 ? junk : keep).push(o); }
      for (let k = 0; k < 5; k++) { const t = []; for (let i = 0; i < 100000; i++) t.push({ i }); }
      junk = null;
      const heap = new HeapUpkeep();
      const before = old();
      const collections = heap.tick();
      process.stdout.write(JSON.stringify({ active: heap.active, collections, before, after: old(), kept: keep.length }));
    `], { encoding: 'utf8', cwd: ROOT, env: { ...process.env, NODE_OPTIONS: AGENT_NODE_OPTIONS } });
    const r = JSON.parse(out) as { active: boolean; collections: number; before: number; after: number; kept: number };
    expect(r).toMatchObject({ active: true, kept: 40000 });
    expect(r.collections).toBeGreaterThanOrEqual(2);
    expect(r.before).toBeGreaterThan(40 * MB);
    // ~57 MB after one collection, 8-14 MB after two or three (the live objects are ~8 MB)
    expect(r.after).toBeLessThan(20 * MB);
  });
});
