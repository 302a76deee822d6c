/**
 * Retry delays for transient API errors (429, 5xx, dropped connections).
 * Pure: the client decides what is transient, this decides how long to wait.
 */
export interface BackoffOptions {
  /** First delay. @default 100 ms */
  readonly initialMs?: number;
  /** No delay grows beyond this. @default 5000 ms */
  readonly maxMs?: number;
  /** Give up after this many attempts in total (the first try included). @default 8 */
  readonly attempts?: number;
}

export const BACKOFF_DEFAULTS: Required<BackoffOptions> = { initialMs: 100, maxMs: 5000, attempts: 8 };

/**
 * The `n`-th delay (1 = the first) of a doubling backoff: `initialMs`, twice that, four times,
 * ... never beyond `maxMs`. The one doubling of the code: the runtime's API retries (below), the
 * agent's pod watch, status writes and pod deletions (src/agent).
 */
export function doublingMs(n: number, initialMs: number, maxMs: number): number {
  return Math.min(initialMs * 2 ** (Math.max(n, 1) - 1), maxMs);
}

/**
 * The delay before retry number `retry` (1 = first retry): doubling from `initialMs`, capped at
 * `maxMs`. A server's Retry-After wins when given (also capped, so a hostile value cannot stall
 * the run past its own deadline by much). `undefined` means: stop retrying.
 */
export function retryDelayMs(retry: number, retryAfterSeconds?: number, opts: BackoffOptions = {}): number | undefined {
  const o = { ...BACKOFF_DEFAULTS, ...opts };
  if (retry < 1 || retry >= o.attempts) return undefined;
  if (retryAfterSeconds !== undefined && Number.isFinite(retryAfterSeconds) && retryAfterSeconds >= 0) {
    return Math.min(retryAfterSeconds * 1000, Math.max(o.maxMs, 30_000));
  }
  return doublingMs(retry, o.initialMs, o.maxMs);
}

/**
 * How long the API may say nothing while a step waits (a list, a watch event, a bookmark, the
 * probe): after one request timeout the waiter asks GET /version; after two the live line says
 * the API server has not answered since when (instead of the state as of then); after
 * `$UYUNI_CDK_API_SILENT_SECONDS` (default 300, at least three request timeouts) the run stops.
 * A request whose connection is refused or reset once the server had answered (it restarts) is
 * retried as long (src/kube/retry.ts).
 */
export function apiSilenceBounds(requestTimeoutMs: number): { probeMs: number; nameMs: number; failMs: number } {
  const env = Number(process.env.UYUNI_CDK_API_SILENT_SECONDS);
  const failMs = Math.max(3 * requestTimeoutMs, (Number.isFinite(env) && env > 0 ? env : 300) * 1000);
  return { probeMs: requestTimeoutMs, nameMs: 2 * requestTimeoutMs, failMs };
}

/** Parses a Retry-After header (src/kube/errors.ts, where an ApiError reads it). */
export { parseRetryAfter } from './errors';

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
