/**
 * Sequential round trips (issue 36): the longest chain of requests in which each one started
 * only after the one before it was answered, i.e. how many request latencies a command waited
 * one after another. Measured with `setLatency(ms)` well above the command's own CPU time
 * between requests, so that requests sent together are never taken for a chain (the count
 * does not depend on the machine's speed, only on what waited on what).
 */
import type { RequestRecord } from './http';

export function roundTrips(records: readonly RequestRecord[]): number {
  const rs = [...records].sort((a, b) => a.at - b.at);
  const depth: number[] = [];
  let longest = 0;
  for (let i = 0; i < rs.length; i++) {
    let d = 1;
    for (let j = 0; j < i; j++) {
      const done = rs[j].done;
      if (done !== undefined && done <= rs[i].at) d = Math.max(d, depth[j] + 1);
    }
    depth.push(d);
    longest = Math.max(longest, d);
  }
  return longest;
}

/**
 * The most of `records` in flight at once (sent, not yet answered), e.g. the reads alone or the
 * dry runs alone, each of which has a bound of its own.
 */
export function peakInFlight(records: readonly RequestRecord[]): number {
  const edges = records.flatMap((r) => [{ t: r.at, d: 1 }, { t: r.done ?? Infinity, d: -1 }])
    // an answer at the same millisecond as a send frees its slot first
    .sort((a, b) => a.t - b.t || a.d - b.d);
  let now = 0;
  let most = 0;
  for (const e of edges) most = Math.max(most, (now += e.d));
  return most;
}
