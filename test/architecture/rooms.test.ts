// The rooms of the runtime and the one direction between them (issue 34; README "Layout"). A file
// may import its own room and rooms of a strictly lower rank, never a room of its own rank or
// above: the plan contract under the Kubernetes layer, under the runtime's readiness rules, core
// vocabulary, safety guards, decisions, then the run and the views (one rank, apart from each
// other), then the verbs. Imports are read as the cycle test reads them (./imports.ts), type-only
// ones counted: a view that names an engine's type depends on the engine as much as one that
// calls it. Every file of src/runtime lies in a room, and each room's README.md says what it may
// import, in the words this table gives.
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { importGraph, importsOf, sourceFiles } from './imports';

const SRC = path.join(__dirname, '..', '..', 'src');

interface Room {
  /** The room's folder under the tree (`runtime/core`). */
  readonly dir: string;
  readonly rank: number;
}

/** The rooms of src/, lowest first. */
const ROOMS: readonly Room[] = [
  { dir: 'plan', rank: 0 },
  { dir: 'kube', rank: 1 },
  { dir: 'runtime/readiness', rank: 2 },
  { dir: 'runtime/core', rank: 3 },
  { dir: 'runtime/safety', rank: 4 },
  { dir: 'runtime/decide', rank: 5 },
  { dir: 'runtime/apply', rank: 6 },
  { dir: 'runtime/report', rank: 6 },
  { dir: 'runtime/verbs', rank: 7 },
];

/** The room of a file (path relative to the tree, `/`-separated), the longest folder that holds it. */
function roomOf(rooms: readonly Room[], rel: string): Room | undefined {
  return rooms.filter((r) => rel.startsWith(`${r.dir}/`)).sort((a, b) => b.dir.length - a.dir.length)[0];
}

/** The rooms a room may import, lowest first. */
const below = (rooms: readonly Room[], room: Room) => rooms.filter((r) => r.rank < room.rank);

/**
 * Every import of a file in a room that leaves the rule: into a room of the same rank or above,
 * or into a file of the tree outside every room. `decide/plan.ts:48 -> apply/steps/actions.ts
 * (type): decide (rank 5) may import only plan, kube, ...`.
 */
function violations(dir: string, rooms: readonly Room[]): string[] {
  const rel = (f: string) => path.relative(dir, f).split(path.sep).join('/');
  const out: string[] = [];
  for (const [file, arrows] of importGraph(dir)) {
    const from = roomOf(rooms, rel(file));
    if (!from) continue;
    for (const a of arrows.values()) {
      const to = roomOf(rooms, rel(a.to));
      if (to === from || (to && to.rank < from.rank)) continue;
      const may = below(rooms, from).map((r) => r.dir);
      out.push(`${rel(file)}:${a.lines.map((l) => l.replace(/^.*:/, '')).join(',')} -> ${rel(a.to)}${a.typeOnly ? ' (type)' : ''}: ${from.dir} (rank ${from.rank}) may import only ${may.length ? may.join(', ') : 'itself'}`);
    }
  }
  return out.sort();
}

/** Files under `under` (relative to the tree) that lie in no room. */
function outsideRooms(dir: string, rooms: readonly Room[], under: string): string[] {
  return [...importGraph(dir).keys()].map((f) => path.relative(dir, f).split(path.sep).join('/'))
    .filter((f) => f.startsWith(`${under}/`) && !roomOf(rooms, f));
}

/** What a room's README.md must say: `May import: plan, kube.` (`nothing but itself` at rank 0). */
const mayImportLine = (rooms: readonly Room[], room: Room) => {
  const may = below(rooms, room).map((r) => (r.dir.startsWith('runtime/') ? r.dir.slice('runtime/'.length) : r.dir));
  return `May import: ${may.length ? may.join(', ') : 'nothing but itself'}.`;
};

/**
 * Value imports (and requires) of a package by the files under `dir`: `file.ts:12`. A type-only
 * import names a shape and sends nothing.
 */
function valueImports(dir: string, pkg: string): string[] {
  return sourceFiles(dir).flatMap((f) => importsOf(f).filter((i) => i.spec === pkg && !i.typeOnly)
    .map((i) => `${path.relative(dir, f).split(path.sep).join('/')}:${i.line}`));
}

describe('the rooms of src/ and their one direction', () => {
  it('every import of src/ points to its own room or a lower one', () => {
    expect(violations(SRC, ROOMS).join('\n')).toBe('');
  });

  it('every file of src/runtime lies in a room, and every room has files', () => {
    expect(outsideRooms(SRC, ROOMS, 'runtime')).toEqual([]);
    const files = [...importGraph(SRC).keys()].map((f) => path.relative(SRC, f).split(path.sep).join('/'));
    for (const r of ROOMS) expect([r.dir, files.filter((f) => roomOf(ROOMS, f) === r).length > 0]).toEqual([r.dir, true]);
  });

  it('src/runtime talks to the Kubernetes API only through src/kube: @kubernetes/client-node for types, never a value', () => {
    expect(valueImports(path.join(SRC, 'runtime'), '@kubernetes/client-node')).toEqual([]);
    // the check sees what it must refuse: src/kube itself holds such imports
    expect(valueImports(path.join(SRC, 'kube'), '@kubernetes/client-node').length).toBeGreaterThan(0);
  });

  it.each(ROOMS.filter((r) => r.dir.startsWith('runtime/')).map((r) => [r.dir, r]))("%s's README.md says what it may import", (_dir, room) => {
    const readme = fs.readFileSync(path.join(SRC, room.dir, 'README.md'), 'utf8');
    expect(readme.split('\n')).toContain(mayImportLine(ROOMS, room));
  });

  it('refuses an import upward, one across a rank (type-only too) and one into a file of no room; lets a lower room and its own pass', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'uyuni-cdk-rooms-'));
    try {
      const write = (f: string, text: string) => {
        fs.mkdirSync(path.dirname(path.join(dir, f)), { recursive: true });
        fs.writeFileSync(path.join(dir, f), text);
      };
      const rooms: Room[] = [{ dir: 'low', rank: 0 }, { dir: 'mid/a', rank: 1 }, { dir: 'mid/b', rank: 1 }, { dir: 'top', rank: 2 }];
      write('low/base.ts', "import { up } from '../top/verb';\nexport const base = up;\n");
      write('mid/a/engine.ts', "import type { View } from '../b/view';\nimport { base } from '../../low/base';\nimport { near } from './near';\nexport const engine = { base, near } as unknown as View;\n");
      write('mid/a/near.ts', 'export const near = 1;\n');
      write('mid/b/view.ts', "import { loose } from '../../loose';\nexport interface View { n: number }\nexport const view = loose;\n");
      write('top/verb.ts', "import { engine } from '../mid/a/engine';\nimport { view } from '../mid/b/view';\nexport const up = [engine, view];\n");
      write('loose.ts', 'export const loose = 2;\n');
      expect(violations(dir, rooms)).toEqual([
        'low/base.ts:1 -> top/verb.ts: low (rank 0) may import only itself',
        'mid/a/engine.ts:1 -> mid/b/view.ts (type): mid/a (rank 1) may import only low',
        'mid/b/view.ts:1 -> loose.ts: mid/b (rank 1) may import only low',
      ]);
      write('mid/c/lost.ts', 'export const lost = 3;\n');
      expect(outsideRooms(dir, rooms, 'mid')).toEqual(['mid/c/lost.ts']);
      expect(mayImportLine(rooms, rooms[3])).toBe('May import: low, mid/a, mid/b.');
      write('top/talks.ts', "import type { V1Pod } from '@kubernetes/client-node';\nimport { CoreV1Api } from '@kubernetes/client-node';\nexport const e = () => require('@kubernetes/client-node') as V1Pod;\nexport const api = CoreV1Api;\n");
      expect(valueImports(path.join(dir, 'top'), '@kubernetes/client-node')).toEqual(['talks.ts:2', 'talks.ts:3']);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
