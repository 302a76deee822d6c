import { doublingMs, parseRetryAfter, retryDelayMs } from '../../../src/kube/backoff';

describe('retry backoff', () => {
  it('doubles from the initial delay up to the cap', () => {
    const o = { initialMs: 100, maxMs: 1000, attempts: 10 };
    expect([1, 2, 3, 4, 5, 6].map((r) => retryDelayMs(r, undefined, o))).toEqual([100, 200, 400, 800, 1000, 1000]);
  });

  it("the agent's doubling (pod watch, status writes, pod deletions) is the same one: 0.2 s to 10 s", () => {
    expect([1, 2, 3, 6, 7, 50, 2000].map((n) => doublingMs(n, 200, 10_000))).toEqual([200, 400, 800, 6400, 10_000, 10_000, 10_000]);
  });

  it('stops after the last attempt', () => {
    expect(retryDelayMs(2, undefined, { attempts: 3 })).toBe(200);
    expect(retryDelayMs(3, undefined, { attempts: 3 })).toBeUndefined();
  });

  it('honours Retry-After over its own schedule', () => {
    expect(retryDelayMs(1, 2)).toBe(2000);
    expect(retryDelayMs(1, 0)).toBe(0);
  });

  it('parses Retry-After as seconds or as an HTTP date', () => {
    expect(parseRetryAfter('3')).toBe(3);
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:00:05 GMT', now)).toBe(5);
    expect(parseRetryAfter(undefined)).toBeUndefined();
    expect(parseRetryAfter('soon')).toBeUndefined();
  });
});
