/**
 * Polling for the agent's real-systemd tests: `until(what, probe)` resolves with the probe's first
 * truthy value, or fails after `ms` naming what it waited for and the context (the agent's stderr).
 */
export type Until = <T>(what: string, probe: () => T | undefined | false, ms?: number) => Promise<T>;

export function untilWith(context: () => string, defaultMs = 15_000): Until {
  return async <T>(what: string, probe: () => T | undefined | false, ms = defaultMs): Promise<T> => {
    const deadline = Date.now() + ms;
    for (;;) {
      const v = probe();
      if (v) return v;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${context()}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  };
}
