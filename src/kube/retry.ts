/**
 * The runtime's retries and the words of a request that failed for good: transient failures
 * (429 with its Retry-After, 5xx, a reset connection, a broken answer) are retried with backoff
 * within the run's deadline; what is left is reported as the error the verbs show, with its exit
 * code (src/plan/exit-codes.ts): an API refusal worded by `refusal`, a connection failure in the
 * user's words, a misbehaving API.
 */
import { isHttpFailure, RequestTimeout } from './errors';
import type { HttpLimits } from './transport';
import { apiSilenceBounds, BackoffOptions, retryDelayMs, sleep } from './backoff';
import { ApiError, ClusterMisbehaved, connectionFailure, Endpoint, refusal, Unreachable } from './api-errors';

const NETWORK_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ECONNRESET', 'EHOSTUNREACH', 'ENETUNREACH', 'ETIMEDOUT', 'EPIPE', 'EPROTO', 'UND_ERR_SOCKET']);

/** What a failed request may carry: a system error (code, errno, cause). */
interface Thrown {
  readonly code?: unknown;
  readonly errno?: unknown;
  readonly cause?: unknown;
}

const asThrown = (e: unknown): Thrown | undefined => (typeof e === 'object' && e !== null ? e as Thrown : undefined);

/** The system error code behind a failed request (`ECONNREFUSED`, a TLS code, ...), if any. */
export function networkCode(e: unknown): string | undefined {
  for (let x = asThrown(e), depth = 0; x && depth < 4; x = asThrown(x.cause), depth++) {
    if (typeof x.code === 'string' && (NETWORK_CODES.has(x.code) || /CERT|TLS|SSL|SIGNATURE/.test(x.code))) return x.code;
    if (typeof x.errno === 'string') return x.errno;
  }
  return undefined;
}

/** The ApiError of a failure, when the server answered. */
export function toApiError(e: unknown): ApiError | undefined {
  return e instanceof ApiError ? e : undefined;
}

/** Worth retrying: 429, 5xx, a reset connection; once the server answered, also a refused one (it restarts). */
function transient(e: unknown, reachable: boolean, attempt: number): boolean {
  if (e instanceof RequestTimeout) return !e.deadlinePassed && attempt < 2; // a server silent twice is not coming back
  if (isHttpFailure(e)) return e.code === 'EBADANSWER';
  if (e instanceof ApiError) return e.status === 429 || e.status >= 500;
  const code = networkCode(e);
  return code === 'ECONNRESET' || code === 'EPIPE' || code === 'UND_ERR_SOCKET' || (reachable && code === 'ECONNREFUSED');
}

/**
 * A connection refused or reset after the API server had answered: it restarts or is briefly
 * gone (its code), as opposed to a server that refuses the request.
 */
function unavailable(e: unknown, reachable: boolean): string | undefined {
  return reachable ? notAnswering(e) : undefined;
}

const NOT_ANSWERING = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET']);

/** The code of a connection refused or reset (the API server is not there to answer), if that is what failed. */
export function notAnswering(e: unknown): string | undefined {
  const code = networkCode(e);
  return code && NOT_ANSWERING.has(code) ? code : undefined;
}

/** The state retries and error words depend on, shared with the Cluster. */
export interface RetryContext {
  readonly limits: HttpLimits;
  readonly backoff: BackoffOptions;
  readonly endpoint: Endpoint;
  /** A step began: misbehaviour fails the step (exit 1), not the command (exit 3). */
  readonly inStep: boolean;
  /** The API server answered once: a refused connection is then a restart. */
  readonly reachable: boolean;
  /** Counts one retried request. */
  retried(): void;
  /** A request found the API server not answering (`unavailable`): said once, until it answers again. */
  apiDown?(code: string): void;
  /** A request was answered. */
  apiUp?(): void;
}

/**
 * Runs `fn`, retrying transient failures with backoff (Retry-After honoured) within the deadline.
 * An API server that stops answering after it had answered (a restart: connections refused) is
 * waited for as long as a silent one (apiSilenceBounds, 300 s by default since its last answer),
 * and said (`apiDown`), instead of the few attempts other failures get.
 */
export async function withRetries<T>(c: RetryContext, what: string, fn: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      const answer = await fn();
      c.apiUp?.();
      return answer;
    } catch (e) {
      const api = toApiError(e);
      const deadline = c.limits.deadline;
      const down = unavailable(e, c.reachable);
      let delay = transient(e, c.reachable, attempt) ? retryDelayMs(attempt, api?.retryAfter, c.backoff) : undefined;
      if (down) {
        c.apiDown?.(down);
        const since = c.limits.lastAnswerAt ?? Date.now();
        const within = Date.now() - since < apiSilenceBounds(c.limits.requestTimeoutMs).failMs;
        delay = within ? retryDelayMs(Math.min(attempt, 6), undefined, { ...c.backoff, attempts: Infinity }) : undefined;
      }
      if (delay !== undefined && deadline !== undefined && Date.now() + delay >= deadline) delay = undefined;
      if (delay === undefined) throw gaveUp(c, what, e, attempt);
      c.retried();
      await sleep(delay);
    }
  }
}

/** A request that failed for good, as the error the verbs report; anything unknown as it was thrown. */
export function gaveUp(c: RetryContext, what: string, e: unknown, attempts: number): unknown {
  if (e instanceof ApiError) {
    const r = refusal(what, e, c.endpoint, attempts, c.inStep);
    return e.worded(r?.message ?? `${what}: ${e.message}`, r?.exitCode);
  }
  // the transport names the request itself (`GET /version: ...`): no second name when it is the same
  const said = (m: string) => (m.startsWith(`${what}: `) ? m : `${what}: ${m}`);
  if (e instanceof RequestTimeout) return new ClusterMisbehaved(`${said(e.message)}; check the API server's load and the network to it ($UYUNI_CDK_REQUEST_TIMEOUT_SECONDS sets the limit)`, c.inStep);
  if (isHttpFailure(e)) return new ClusterMisbehaved(said(e.message), c.inStep);
  const code = networkCode(e);
  if (code) return new Unreachable(`${what}: ${connectionFailure(code, (e as Error).message, c.endpoint)}`, c.inStep);
  return e;
}
