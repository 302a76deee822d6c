/**
 * The cache of parsed step files (src/runtime/parse-cache.ts) on its own and under
 * loadStepObjects: a hit gives what the parse gave, a changed text is parsed again, a corrupt,
 * foreign or hand-edited entry is never believed, and what JSON cannot hold is never cached.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { parse } from 'yaml';
import type { Step } from '../../../src/plan/types';
import { BadInput } from '../../../src/runtime/errors';
import { loadStepObjects } from '../../../src/runtime/manifests';
import { jsonExact, MAX_ENTRIES, ParseCache, parseCacheDir } from '../../../src/runtime/parse-cache';

let work: string;
beforeEach(() => {
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'uyuni-parse-cache-'));
});
afterEach(() => fs.rmSync(work, { recursive: true, force: true }));

const CM = (name: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${name}, namespace: uyuni}\ndata: {port: "5432"}\n`;

/** A parse that counts its calls: what a miss runs. */
function counted() {
  const calls: string[] = [];
  return { calls, parse: (text: string) => { calls.push(text); return [parse(text)]; } };
}

describe('ParseCache', () => {
  const cache = () => new ParseCache(path.join(work, 'plans'), 1024 * 1024);

  it('parses on a miss and answers the same text from the cache after', () => {
    const p = counted();
    const first = cache().documents(CM('a'), p.parse);
    expect(first).toEqual([{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', namespace: 'uyuni' }, data: { port: '5432' } }]);
    expect(cache().documents(CM('a'), p.parse)).toEqual(first);
    expect(p.calls).toHaveLength(1);
  });

  it('parses a changed text again', () => {
    const p = counted();
    cache().documents(CM('a'), p.parse);
    expect(cache().documents(CM('b'), p.parse)).toEqual([expect.objectContaining({ metadata: { name: 'b', namespace: 'uyuni' } })]);
    expect(p.calls).toEqual([CM('a'), CM('b')]);
  });

  it('ignores a corrupt or foreign entry, and replaces it', () => {
    const c = cache();
    const p = counted();
    c.documents(CM('a'), p.parse);
    const file = c.file(c.keyOf(CM('a')));
    fs.writeFileSync(file, '{"key": "trunc');
    expect(c.documents(CM('a'), p.parse)).toEqual([expect.objectContaining({ kind: 'ConfigMap' })]);
    // Another text's entry copied under this text's name: its key says so.
    fs.copyFileSync(c.file(c.keyOf(CM('a'))), c.file(c.keyOf(CM('b'))));
    expect(c.documents(CM('b'), p.parse)).toEqual([expect.objectContaining({ metadata: { name: 'b', namespace: 'uyuni' } })]);
    expect(p.calls).toEqual([CM('a'), CM('a'), CM('b')]);
    // Both rewritten whole, each with its own text's documents.
    expect(c.get(CM('a'))).toEqual([expect.objectContaining({ metadata: { name: 'a', namespace: 'uyuni' } })]);
    expect(c.get(CM('b'))).toEqual([expect.objectContaining({ metadata: { name: 'b', namespace: 'uyuni' } })]);
  });

  it('keeps only what JSON gives back exactly', () => {
    expect(jsonExact([{ a: ['x', 1, true, null, { b: 2.5 }] }])).toBe(true);
    for (const v of [Infinity, NaN, -0, new Date(0), new Map(), undefined, 1n]) expect(jsonExact([{ v }])).toBe(false);
    const c = cache();
    const text = 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {ratio: .inf}\n';
    const p = counted();
    c.documents(text, p.parse);
    c.documents(text, p.parse);
    expect(p.calls).toHaveLength(2);
    expect(fs.existsSync(c.file(c.keyOf(text)))).toBe(false);
  });

  it('does not cache a failed parse', () => {
    const c = cache();
    expect(() => c.documents(CM('a'), () => { throw new Error('bad YAML'); })).toThrow('bad YAML');
    expect(c.get(CM('a'))).toBeUndefined();
  });

  it('reads and writes no entry larger than its bound', () => {
    const small = new ParseCache(path.join(work, 'small'), 64);
    const p = counted();
    small.documents(CM('a'), p.parse);
    small.documents(CM('a'), p.parse);
    expect(p.calls).toHaveLength(2);
    const c = cache();
    c.documents(CM('a'), p.parse);
    fs.writeFileSync(c.file(c.keyOf(CM('a'))), JSON.stringify({ key: c.keyOf(CM('a')), documents: [{ pad: 'x'.repeat(2 * 1024 * 1024) }] }));
    expect(c.get(CM('a'))).toBeUndefined();
  });

  it('works without a writable directory', () => {
    fs.writeFileSync(path.join(work, 'file'), '');
    const c = new ParseCache(path.join(work, 'file', 'plans'), 1024 * 1024);
    const p = counted();
    expect(c.documents(CM('a'), p.parse)).toEqual([expect.objectContaining({ kind: 'ConfigMap' })]);
    expect(c.documents(CM('a'), p.parse)).toHaveLength(1);
    expect(p.calls).toHaveLength(2);
  });

  it(`keeps at most ${MAX_ENTRIES} entries, dropping the oldest`, () => {
    const c = cache();
    fs.mkdirSync(c.dir, { recursive: true });
    for (let i = 0; i < MAX_ENTRIES; i++) {
      const f = c.file(`old-${i}`);
      fs.writeFileSync(f, '{}');
      fs.utimesSync(f, 1000 + i, 1000 + i);
    }
    c.documents(CM('a'), counted().parse);
    const left = fs.readdirSync(c.dir);
    expect(left).toHaveLength(MAX_ENTRIES);
    expect(left).not.toContain('old-0.json');
    expect(left).toContain('old-1.json');
    expect(c.get(CM('a'))).toHaveLength(1);
  });

  it('lives under $XDG_CACHE_HOME/uyuni-cdk/plans, else ~/.cache', () => {
    expect(parseCacheDir({ XDG_CACHE_HOME: '/var/cache/me' }, '/home/me')).toBe('/var/cache/me/uyuni-cdk/plans');
    expect(parseCacheDir({ XDG_CACHE_HOME: 'relative' }, '/home/me')).toBe('/home/me/.cache/uyuni-cdk/plans');
    expect(parseCacheDir({}, '/home/me')).toBe('/home/me/.cache/uyuni-cdk/plans');
  });
});

describe('loadStepObjects with the cache', () => {
  const step = { name: 'config', file: '0000-config.k8s.yaml' } as Step;
  const write = (text: string) => fs.writeFileSync(path.join(work, step.file), text);
  const cache = () => new ParseCache(path.join(work, 'cache'), 1024 * 1024);

  it('gives the parsed objects, then the cached ones for the same bytes', () => {
    write(`${CM('a')}---\n${CM('b')}`);
    const parsed = loadStepObjects(work, step, cache());
    expect(parsed.map((o) => o.metadata.name)).toEqual(['a', 'b']);
    // The entry is what a second command uses: edited (still valid), the edit shows.
    const c = cache();
    const file = c.file(c.keyOf(`${CM('a')}---\n${CM('b')}`));
    const entry = JSON.parse(fs.readFileSync(file, 'utf8'));
    entry.documents[1].metadata.name = 'from-cache';
    fs.writeFileSync(file, JSON.stringify(entry));
    expect(loadStepObjects(work, step, cache()).map((o) => o.metadata.name)).toEqual(['a', 'from-cache']);
  });

  it('parses a changed step file, and refuses a cached entry that is not a manifest', () => {
    write(CM('a'));
    loadStepObjects(work, step, cache());
    write(CM('c'));
    expect(loadStepObjects(work, step, cache()).map((o) => o.metadata.name)).toEqual(['c']);
    const c = cache();
    fs.writeFileSync(c.file(c.keyOf(CM('c'))), JSON.stringify({ key: c.keyOf(CM('c')), documents: [{ kind: 'ConfigMap' }] }));
    expect(() => loadStepObjects(work, step, cache())).toThrow(BadInput);
    expect(() => loadStepObjects(work, step, cache())).toThrow(/0000-config\.k8s\.yaml: every document needs apiVersion, kind and metadata\.name/);
  });

  it('still refuses bad YAML and too many aliases, and caches neither', () => {
    write('apiVersion: v1\nkind: [unclosed\n');
    expect(() => loadStepObjects(work, step, cache())).toThrow(BadInput);
    const laughs = ['a: &a [x, x, x, x, x, x, x, x, x, x]', ...Array.from({ length: 12 }, (_, i) => `${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [${Array(10).fill(`*${String.fromCharCode(97 + i)}`).join(', ')}]`)];
    write(`apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bomb}\ndata:\n${laughs.map((l) => `  ${l}`).join('\n')}\n`);
    expect(() => loadStepObjects(work, step, cache())).toThrow(/alias/i);
    expect(fs.existsSync(cache().dir) ? fs.readdirSync(cache().dir) : []).toEqual([]);
  });
});
