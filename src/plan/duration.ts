/**
 * Durations as people read them, one formatter for everything printed: a plan's deadline
 * (`7d`), a step's timeout (`10h`, `36m`), the stuck grace (`5m`), elapsed time (`4.2s`,
 * `3m5s`, `1h0m5s`, as Go and terraform print them, with days). Units from the largest one
 * present down to the last one that is not zero; under a minute with a tenth of a second when
 * it is not a whole number (an elapsed time: `0.0s`, `4.2s`).
 */
const UNITS: ReadonlyArray<readonly [string, number]> = [['d', 86_400], ['h', 3_600], ['m', 60], ['s', 1]];

export function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return `${seconds}s`;
  const tenths = Math.round(seconds * 10) / 10;
  if (tenths < 60) return Number.isInteger(seconds) ? `${seconds}s` : `${tenths.toFixed(1)}s`;
  let rest = Math.floor(tenths);
  const parts: string[] = [];
  for (const [unit, size] of UNITS) {
    const n = Math.floor(rest / size);
    rest -= n * size;
    if (n > 0 || parts.length > 0) parts.push(`${n}${unit}`);
  }
  while (parts[parts.length - 1].startsWith('0')) parts.pop();
  return parts.join('');
}
