/** What a readiness rule says about one object: done, still waiting (and on what), or failed (and why). */
export type Verdict =
  | { readonly state: 'done'; readonly reason: string }
  | { readonly state: 'waiting'; readonly reason: string }
  | { readonly state: 'failed'; readonly reason: string };

export const done = (reason: string): Verdict => ({ state: 'done', reason });
export const waiting = (reason: string): Verdict => ({ state: 'waiting', reason });
export const failed = (reason: string): Verdict => ({ state: 'failed', reason });

/** A status condition, as every kind with conditions reports them. */
export interface Condition {
  readonly type: string;
  readonly status: string;
  readonly reason?: string;
  readonly message?: string;
}

/** An object with status conditions (a Job, a Deployment, a cert-manager Certificate, ...). */
export interface Conditioned {
  readonly status?: { readonly conditions?: readonly Condition[] };
}

/** The condition of `type` (never `conditions[0]`: their order is not a contract). */
export function condition(obj: Conditioned | undefined, type: string): Condition | undefined {
  return (obj?.status?.conditions ?? []).find((c) => c?.type === type);
}
