// No import cycle in src/, type-only imports counted (issue 34). eslint's `import-x/no-cycle`
// skips `import type` and `import { type X }` by design (eslint-plugin-import-x 4.18.1
// lib/rules/no-cycle.js:69-76), so a cycle closed through types alone passes the lint: this test
// reads every file's imports with the TypeScript parser, resolves them as tsc does, and finds the
// strongly connected components of the file graph (Tarjan). Each cycle is printed as a chain of
// files, every arrow with the line that imports it and `type` when it is type-only
// (`-> runtime/progress.ts (logs.ts:13, type)`), so the arrow to cut is plain.
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { Arrow, importGraph } from './imports';

const ROOT = path.join(__dirname, '..', '..');

/** The strongly connected components of more than one file (or a file importing itself), Tarjan's algorithm. */
function components(graph: Map<string, Map<string, Arrow>>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  const connect = (v: string): void => {
    index.set(v, next); low.set(v, next); next++;
    stack.push(v); onStack.add(v);
    for (const w of graph.get(v)?.keys() ?? []) {
      if (!index.has(w)) { connect(w); low.set(v, Math.min(low.get(v)!, low.get(w)!)); }
      else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const c: string[] = [];
      let w: string;
      do { w = stack.pop()!; onStack.delete(w); c.push(w); } while (w !== v);
      if (c.length > 1 || graph.get(v)?.has(v)) out.push(c.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) connect(v);
  return out.sort((a, b) => a[0].localeCompare(b[0]));
}

/** The shortest path from `from` to `to` inside `within` (breadth first), `from` first. */
function shortestPath(graph: Map<string, Map<string, Arrow>>, within: Set<string>, from: string, to: string): string[] {
  const prev = new Map<string, string>([[from, from]]);
  const queue = [from];
  while (queue.length > 0) {
    const v = queue.shift()!;
    if (v === to) break;
    for (const w of graph.get(v)!.keys()) if (within.has(w) && !prev.has(w)) { prev.set(w, v); queue.push(w); }
  }
  const p = [to];
  while (p[0] !== from) p.unshift(prev.get(p[0])!);
  return p;
}

/**
 * Every cycle of the graph as chains of files relative to `dir`: per component, a shortest cycle
 * through each of its arrows not yet shown, so every arrow that closes a cycle is in a chain.
 */
function cycles(dir: string): string[][] {
  const graph = importGraph(dir);
  const name = (f: string) => path.relative(dir, f);
  const out: string[][] = [];
  for (const c of components(graph)) {
    const within = new Set(c);
    const shown = new Set<string>();
    for (const from of c) {
      for (const to of graph.get(from)!.keys()) {
        if (!within.has(to) || shown.has(`${from}>${to}`)) continue;
        const loop = from === to ? [from, from] : [from, ...shortestPath(graph, within, to, from)];
        const chain = [name(loop[0])];
        for (let i = 1; i < loop.length; i++) {
          const a = graph.get(loop[i - 1])!.get(loop[i])!;
          shown.add(`${loop[i - 1]}>${loop[i]}`);
          chain.push(`-> ${name(loop[i])} (${a.lines.join(', ')}${a.typeOnly ? ', type' : ''})`);
        }
        out.push(chain);
      }
    }
  }
  return out;
}

describe('import cycles (type-only imports counted)', () => {
  it('finds none in src/', () => {
    // the graph is read, not empty: every relative import resolved, type-only ones among them
    // (869 arrows, 205 of them type-only, in December 2026)
    const unresolved: string[] = [];
    const arrows = [...importGraph(path.join(ROOT, 'src'), unresolved).values()].flatMap((a) => [...a.values()]);
    expect(unresolved).toEqual([]);
    expect(arrows.length).toBeGreaterThan(600);
    expect(arrows.filter((a) => a.typeOnly).length).toBeGreaterThan(100);
    const found = cycles(path.join(ROOT, 'src')).map((chain) => chain.join('\n  '));
    expect(found.join('\n\n')).toBe('');
  });

  it('finds a cycle closed through type-only imports alone, prints it as a chain of files, and names an import it cannot resolve', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'uyuni-cdk-cycles-'));
    try {
      const write = (f: string, text: string) => fs.writeFileSync(path.join(dir, f), text);
      write('a.ts', "import type { B } from './b';\nexport interface A { b?: B }\n");
      write('b.ts', "import { type A } from './a';\nexport interface B { a?: A }\n");
      // export-from closes a cycle too; an import type node (`import('./c').C`) as well
      write('c.ts', "export type { D } from './d';\nexport interface C { n: number }\n");
      write('d.ts', "export interface D { c?: import('./c').C }\n");
      // no cycle: e imports f, f imports nothing of the tree
      write('e.ts', "import { f } from './f';\nexport const e = f;\n");
      write('f.ts', "export const f = 1;\n");
      // a relative import of nothing is named, not passed over
      write('g.ts', "import { x } from './missing';\nexport const g = x;\n");
      const unresolved: string[] = [];
      importGraph(dir, unresolved);
      expect(unresolved).toEqual(['g.ts:1 ./missing']);
      expect(cycles(dir)).toEqual([
        ['a.ts', '-> b.ts (a.ts:1, type)', '-> a.ts (b.ts:1, type)'],
        ['c.ts', '-> d.ts (c.ts:1, type)', '-> c.ts (d.ts:1, type)'],
      ]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
