/**
 * Bounded concurrency for reads: at most `n` calls in flight, the rest queued in call order
 * (a slow API costs seconds, not minutes, without flooding it). Writes do not go through here:
 * they stay in step order.
 */

/** At most this many reads in flight at once (kubectl's and client-go's QPS/burst are of this order). */
export const READ_CONCURRENCY = 8;

/**
 * At most this many server-side apply dry runs in flight at once, beside the reads (issue 36):
 * `plan` compares every object of every step, and each dry run waits on nothing but the read of
 * its object. Far below kube-apiserver's own limit on mutating requests in flight (200 by
 * default, `--max-mutating-requests-inflight`; with API Priority and Fairness, on by default,
 * a share of the 600 of both limits).
 */
export const DRY_RUN_CONCURRENCY = 16;

/**
 * `status`'s reads (issue 36): one LIST per kind of the plan (11 for dist/install, with the ping,
 * the records and the StorageClasses), all in one round trip rather than two rounds of
 * READ_CONCURRENCY. Still bounded, far below kube-apiserver's own limit on read-only requests in
 * flight (400 by default, `--max-requests-inflight`).
 */
export const STATUS_READ_CONCURRENCY = 16;

/**
 * At most this many server-side applies of one step in flight (issue 36: `run`'s applies go
 * together where the step's order allows, src/runtime/steps/apply.ts): dist/install's volumes
 * step writes its 26 claims in one round (16 made it two); far below kube-apiserver's 200
 * mutating requests in flight.
 */
export const APPLY_CONCURRENCY = 32;

/**
 * SelfSubjectAccessReviews in flight at once (the run's pre-flight check, issue 36), each a create
 * the API server answers from its authorizer and never stores: the committed plans need 10 to 64
 * (dist/install 47, dist/restore 64), so one round trip for each instead of seven rounds of
 * READ_CONCURRENCY (two at 32, before); still well below kube-apiserver's limit on mutating
 * requests in flight (200 by default; API Priority and Fairness queues what exceeds a level's share).
 */
export const ACCESS_REVIEW_CONCURRENCY = 64;

export type Limit = <T>(fn: () => Promise<T>) => Promise<T>;

export function limiter(n: number = READ_CONCURRENCY): Limit {
  if (!(n >= 1)) throw new Error(`limiter: ${n} is not a positive number of calls`);
  let active = 0;
  const queue: Array<() => void> = [];
  const next = () => {
    active--;
    queue.shift()?.();
  };
  return <T>(fn: () => Promise<T>): Promise<T> => new Promise<T>((resolve, reject) => {
    const start = () => {
      active++;
      Promise.resolve().then(fn).then(resolve, reject).finally(next);
    };
    if (active < n) start();
    else queue.push(start);
  });
}

/** `fn` over every item, at most `limit`'s bound in flight, results in the items' order. */
export function mapLimited<T, R>(items: readonly T[], limit: Limit, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  return Promise.all(items.map((item, i) => limit(() => fn(item, i))));
}
