/** What a readiness rule says about one object: done, still waiting (and on what), or failed (and why). */
export type Verdict =
  | { readonly state: 'done'; readonly reason: string }
  | { readonly state: 'waiting'; readonly reason: string }
  | { readonly state: 'failed'; readonly reason: string };

export const done = (reason: string): Verdict => ({ state: 'done', reason });
export const waiting = (reason: string): Verdict => ({ state: 'waiting', reason });
export const failed = (reason: string): Verdict => ({ state: 'failed', reason });

/** The condition of `type` (never `conditions[0]`: their order is not a contract). */
export function condition(obj: any, type: string): { status?: string; reason?: string; message?: string } | undefined {
  const list: any[] = obj?.status?.conditions ?? [];
  return list.find((c) => c?.type === type);
}
