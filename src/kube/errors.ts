/**
 * The errors of the Kubernetes layer, shared by the runtime and the agent: one `ApiError` for an
 * answer that is not a success (its Status parsed once, where the answer is read), and the
 * transport's own failures (cut short, not JSON, too large, too slow, a watch gone silent).
 */
import { EXIT } from '../plan/exit-codes';

export type FailureExitCode = typeof EXIT.stepFailed | typeof EXIT.badInput | typeof EXIT.unreachable | typeof EXIT.incomplete;

/** An expected error: a command reports its message (no stack trace) and returns its exit code. */
export class CodedError extends Error {
  constructor(message: string, readonly exitCode: FailureExitCode) {
    super(message);
  }
}

/** The part of a Status body we report. */
interface StatusBody {
  readonly message?: unknown;
  readonly reason?: unknown;
  readonly details?: { readonly causes?: ReadonlyArray<{ readonly field?: string; readonly message?: string; readonly reason?: string }> };
}

/** Parses a Retry-After header: delay-seconds or an HTTP date. */
export function parseRetryAfter(value: string | undefined, now = Date.now()): number | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const v = value.trim();
  if (/^\d+$/.test(v)) return Number(v);
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, (at - now) / 1000);
}

/**
 * An API answer that is not a success, with the Status body's reason, message and causes.
 * Callers that expect one (404 on a read, 409, 422 on a dry run) look at `status`; one that
 * reaches a command's end is reported with its message and exit code (the runtime words and
 * codes it: src/kube/retry.ts).
 */
export class ApiError extends CodedError {
  constructor(
    readonly status: number,
    readonly reason: string,
    message: string,
    readonly causes: string[] = [],
    /** The answer's Retry-After, in seconds. */
    readonly retryAfter?: number,
    exitCode: FailureExitCode = EXIT.stepFailed,
  ) {
    super(message, exitCode);
  }

  /**
   * From an answer: its body already parsed (a Status object), or its text when it was not
   * JSON. The message is the Status message, else the start of the body, else `HTTP <status>`.
   */
  static fromAnswer(status: number, headers: Readonly<Record<string, string | undefined>>, body: unknown): ApiError {
    const s = typeof body === 'object' && body !== null ? body as StatusBody : undefined;
    const text = typeof body === 'string' ? body.slice(0, 200).trim() : '';
    const causes = (s?.details?.causes ?? []).map((c) => `${c.field ? `${c.field}: ` : ''}${c.message ?? c.reason}`);
    const message = typeof s?.message === 'string' ? s.message : text || `HTTP ${status}`;
    return new ApiError(status, typeof s?.reason === 'string' ? s.reason : '', message, causes, parseRetryAfter(headers['retry-after']));
  }

  /** The same answer, its message worded by the caller (`GET /api/v1/pods: HTTP 500: …`). */
  worded(message: string, exitCode: FailureExitCode = this.exitCode): ApiError {
    return new ApiError(this.status, this.reason, message, this.causes, this.retryAfter, exitCode);
  }
}

/** A broken answer: cut short, not JSON. Retried like a 5xx. */
export class BadAnswer extends Error {
  readonly code = 'EBADANSWER';
}

/** No complete answer in time (per-request timeout or the run's deadline). Retried once unless the deadline passed. */
export class RequestTimeout extends Error {
  readonly code = 'EREQUESTTIMEOUT';
  constructor(message: string, readonly deadlinePassed: boolean, /** The time the request had. */ readonly ms: number) {
    super(message);
  }
}

/** An answer larger than the cap, or a Retry-After beyond the deadline: not retried. */
export class Refused extends Error {
  readonly code = 'EREFUSED';
}

/** A stream (watch, followed log) that sent nothing for its idle limit: cut off; a watch relists. */
export class StreamIdle extends Error {
  readonly code = 'ESTREAMIDLE';
}

export const isHttpFailure = (e: unknown): e is BadAnswer | RequestTimeout | Refused | StreamIdle =>
  e instanceof BadAnswer || e instanceof RequestTimeout || e instanceof Refused || e instanceof StreamIdle;

/** A kubeconfig that cannot be used, said as a user would check it (the runtime reports it as bad input). */
export class KubeconfigError extends CodedError {
  constructor(message: string) {
    super(message, EXIT.badInput);
  }
}
