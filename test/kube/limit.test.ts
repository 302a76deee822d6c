/** src/kube/limit.ts: at most n calls in flight, the rest in call order, results in the items' order. */
import { limiter, mapLimited, READ_CONCURRENCY } from '../../src/kube/limit';

describe('limiter', () => {
  it('runs at most n at once, starts the queued ones in call order, and passes results and errors through', async () => {
    const limit = limiter(3);
    let active = 0;
    let most = 0;
    const started: number[] = [];
    const task = (i: number) => limit(async () => {
      started.push(i);
      most = Math.max(most, ++active);
      await new Promise((r) => setTimeout(r, 5 + (i % 3) * 5));
      active--;
      if (i === 4) throw new Error('four');
      return i * 10;
    });
    const results = await Promise.allSettled(Array.from({ length: 10 }, (_, i) => task(i)));
    expect(most).toBe(3);
    expect(started).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(results[4]).toEqual({ status: 'rejected', reason: new Error('four') });
    expect(results.filter((r) => r.status === 'fulfilled').map((r) => (r as PromiseFulfilledResult<number>).value)).toEqual([0, 10, 20, 30, 50, 60, 70, 80, 90]);
  });

  it('a call that throws at once frees its place', async () => {
    const limit = limiter(1);
    await expect(limit(() => { throw new Error('sync'); })).rejects.toThrow('sync');
    await expect(limit(async () => 'next')).resolves.toBe('next');
  });

  it('mapLimited keeps the order of the items; the default bound is READ_CONCURRENCY', async () => {
    let active = 0;
    let most = 0;
    const out = await mapLimited(Array.from({ length: 30 }, (_, i) => i), limiter(), async (x) => {
      most = Math.max(most, ++active);
      await new Promise((r) => setTimeout(r, 30 - x));
      active--;
      return x + 1;
    });
    expect(out).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
    expect(most).toBe(READ_CONCURRENCY);
    expect(() => limiter(0)).toThrow('limiter: 0 is not a positive number of calls');
  });
});
