/**
 * A line diff (Myers' O(ND) algorithm, "An O(ND) Difference Algorithm and Its Variations", 1986)
 * and its unified form (`diff -u`: hunks with `context` lines around each change), for `plan`'s
 * field diffs. Objects are a few hundred lines: the plain algorithm is fast enough.
 */

export type Edit = { readonly op: ' ' | '-' | '+'; readonly line: string };

/** The shortest edit script turning `a` into `b`, as kept, removed and added lines in order. */
export function diffLines(a: readonly string[], b: readonly string[]): Edit[] {
  const n = a.length;
  const m = b.length;
  const max = n + m;
  const offset = max + 1;
  const v = new Int32Array(2 * max + 3);
  const trace: Int32Array[] = [];
  let found = false;
  for (let d = 0; d <= max && !found; d++) {
    trace.push(v.slice());
    for (let k = -d; k <= d; k += 2) {
      let x = k === -d || (k !== d && v[offset + k - 1] < v[offset + k + 1]) ? v[offset + k + 1] : v[offset + k - 1] + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) { x++; y++; }
      v[offset + k] = x;
      if (x >= n && y >= m) { found = true; break; }
    }
  }
  // Walk the trace back from (n, m): each round undoes one edit and the snake before it.
  const edits: Edit[] = [];
  let x = n;
  let y = m;
  for (let d = trace.length - 1; d >= 0; d--) {
    const t = trace[d];
    const k = x - y;
    const down = k === -d || (k !== d && t[offset + k - 1] < t[offset + k + 1]);
    const prevK = down ? k + 1 : k - 1;
    const prevX = d === 0 ? 0 : t[offset + prevK];
    const prevY = d === 0 ? 0 : prevX - prevK;
    while (x > prevX && y > prevY) {
      y--;
      edits.push({ op: ' ', line: a[--x] });
    }
    if (d > 0) {
      if (down) edits.push({ op: '+', line: b[--y] });
      else edits.push({ op: '-', line: a[--x] });
    }
  }
  return edits.reverse();
}

/**
 * The unified diff of two texts (`---`/`+++` headers named `from` and `to`, `@@ -l,s +l,s @@`
 * hunks), or '' when they are equal.
 */
export function unifiedDiff(from: string, to: string, before: string, after: string, context = 3): string {
  const split = (t: string) => (t === '' ? [] : t.replace(/\n$/, '').split('\n'));
  const edits = diffLines(split(before), split(after));
  if (edits.every((e) => e.op === ' ')) return '';
  const out = [`--- ${from}`, `+++ ${to}`];
  // Positions (in `edits`) of the changes, grouped into hunks whose context would touch.
  const changed = edits.flatMap((e, i) => (e.op === ' ' ? [] : [i]));
  let start = 0;
  while (start < changed.length) {
    let end = start;
    while (end + 1 < changed.length && changed[end + 1] - changed[end] <= 2 * context + 1) end++;
    const lo = Math.max(0, changed[start] - context);
    const hi = Math.min(edits.length - 1, changed[end] + context);
    // Line numbers where the hunk begins: count what precedes it on each side.
    const aStart = edits.slice(0, lo).filter((e) => e.op !== '+').length;
    const bStart = edits.slice(0, lo).filter((e) => e.op !== '-').length;
    const hunk = edits.slice(lo, hi + 1);
    const aLen = hunk.filter((e) => e.op !== '+').length;
    const bLen = hunk.filter((e) => e.op !== '-').length;
    const range = (s: number, l: number) => `${l === 0 ? s : s + 1}${l === 1 ? '' : `,${l}`}`;
    out.push(`@@ -${range(aStart, aLen)} +${range(bStart, bLen)} @@`);
    for (const e of hunk) out.push(`${e.op}${e.line}`);
    start = end + 1;
  }
  return out.join('\n') + '\n';
}
