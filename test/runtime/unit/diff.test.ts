import { diffLines, unifiedDiff } from '../../../src/runtime/decide/line-diff';

/** Applies an edit script to `a`: what it yields must be `b`, and its kept lines must be `a`'s in order. */
function replay(a: string[], b: string[]): void {
  const edits = diffLines(a, b);
  expect(edits.filter((e) => e.op !== '+').map((e) => e.line)).toEqual(a);
  expect(edits.filter((e) => e.op !== '-').map((e) => e.line)).toEqual(b);
}

describe('the line diff', () => {
  it('turns one text into the other with a minimal script', () => {
    const a = 'a b c a b b a'.split(' ');
    const b = 'c b a b a c'.split(' ');
    replay(a, b);
    // Myers' example: the shortest edit script has 5 edits.
    expect(diffLines(a, b).filter((e) => e.op !== ' ')).toHaveLength(5);
  });

  it('handles empty sides, equal texts and random texts', () => {
    replay([], []);
    replay([], ['x', 'y']);
    replay(['x', 'y'], []);
    replay(['same'], ['same']);
    expect(diffLines(['same'], ['same']).every((e) => e.op === ' ')).toBe(true);
    let seed = 7;
    const rnd = () => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed; };
    for (let i = 0; i < 200; i++) {
      const a = Array.from({ length: rnd() % 12 }, () => 'abc'[rnd() % 3]);
      const b = Array.from({ length: rnd() % 12 }, () => 'abc'[rnd() % 3]);
      replay(a, b);
    }
  });

  it('writes unified hunks with three lines of context, as diff -u does', () => {
    const before = Array.from({ length: 20 }, (_, i) => `line ${i + 1}`);
    const after = [...before];
    after[4] = 'line 5 changed';
    after.splice(15, 1);
    expect(unifiedDiff('live', 'planned', before.join('\n') + '\n', after.join('\n') + '\n')).toBe([
      '--- live', '+++ planned',
      '@@ -2,7 +2,7 @@', ' line 2', ' line 3', ' line 4', '-line 5', '+line 5 changed', ' line 6', ' line 7', ' line 8',
      '@@ -13,7 +13,6 @@', ' line 13', ' line 14', ' line 15', '-line 16', ' line 17', ' line 18', ' line 19', '',
    ].join('\n'));
    expect(unifiedDiff('a', 'b', 'x\n', 'x\n')).toBe('');
    expect(unifiedDiff('a', 'b', '', 'new\n')).toBe('--- a\n+++ b\n@@ -0,0 +1 @@\n+new\n');
  });
});
