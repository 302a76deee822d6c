/**
 * Version comparison for gates: numeric, part by part. `9` < `16`, `5.1.0 Alpha1` parses as
 * 5.1.0 (a suffix after the numbers is a pre-release and sorts before the plain release),
 * `2025.10` as 2025.10, `v16.4` as 16.4.
 */
export interface Version {
  readonly parts: readonly number[];
  /** Text after the numeric parts (`Alpha1`, `beta2`), empty for a release. */
  readonly suffix: string;
}

export function parseVersion(text: string): Version {
  const m = /^\s*v?(\d+(?:\.\d+)*)[\s.\-+_~]*(.*?)\s*$/i.exec(text);
  if (!m) throw new Error(`not a version: ${JSON.stringify(text)}`);
  return { parts: m[1].split('.').map(Number), suffix: m[2] };
}

/** -1, 0 or 1. Missing parts count as 0 (`16` == `16.0`). */
export function compareVersions(a: string, b: string): number {
  const x = parseVersion(a);
  const y = parseVersion(b);
  const n = Math.max(x.parts.length, y.parts.length);
  for (let i = 0; i < n; i++) {
    const d = (x.parts[i] ?? 0) - (y.parts[i] ?? 0);
    if (d !== 0) return Math.sign(d);
  }
  if (x.suffix === y.suffix) return 0;
  // A release sorts after its pre-releases; pre-releases compare by their own text, numbers numerically.
  if (x.suffix === '') return 1;
  if (y.suffix === '') return -1;
  return Math.sign(x.suffix.localeCompare(y.suffix, 'en', { numeric: true, sensitivity: 'base' }));
}
