/**
 * "Did you mean": the known name closest to a mistyped one, as git and kubectl suggest a command.
 * Case is ignored first (`storageclass` → `storageClass`), then the optimal string alignment
 * distance (Levenshtein plus the swap of two neighbours: `fdqn` → `fqdn` is one edit) decides,
 * within a bound that grows with the name's length so that short names only match near misses.
 */

/** Edits (insert, delete, substitute, swap two neighbours) from `a` to `b`, case-insensitively. */
export function editDistance(a: string, b: string): number {
  const s = a.toLowerCase();
  const t = b.toLowerCase();
  // Three rows are all the swap needs.
  let prev2: number[] = [];
  let prev = Array.from({ length: t.length + 1 }, (_, j) => j);
  for (let i = 1; i <= s.length; i++) {
    const row = [i];
    for (let j = 1; j <= t.length; j++) {
      const cost = s[i - 1] === t[j - 1] ? 0 : 1;
      let d = Math.min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + cost);
      if (i > 1 && j > 1 && s[i - 1] === t[j - 2] && s[i - 2] === t[j - 1]) d = Math.min(d, prev2[j - 2] + 1);
      row.push(d);
    }
    prev2 = prev;
    prev = row;
  }
  return prev[t.length];
}

/** How many edits a name of this length may be away from the one meant. */
const bound = (length: number) => (length <= 3 ? 1 : length <= 7 ? 2 : 3);

/** The candidate `word` most likely means, if any is close enough (ties: the first listed). */
export function closest(word: string, candidates: Iterable<string>): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const c of candidates) {
    if (c === word) continue;
    const d = editDistance(word, c);
    if (d < bestDistance && d <= bound(Math.max(word.length, c.length))) {
      best = c;
      bestDistance = d;
    }
  }
  return best;
}

/** `did you mean fqdn?` (or `did you mean "generated"?` with `quote`), or nothing. */
export function didYouMean(word: string, candidates: Iterable<string>, quote = false): string | undefined {
  const c = closest(word, candidates);
  if (c === undefined) return undefined;
  return `did you mean ${quote ? JSON.stringify(c) : c}?`;
}
