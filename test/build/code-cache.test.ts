/**
 * bin/code-cache.js: a CommonJS bundle run with V8's code cache, each case in its own Node
 * process (as a command starts), with the cache in a temporary directory.
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

const ROOT = path.join(__dirname, '..', '..');
const CODE_CACHE = path.join(ROOT, 'bin', 'code-cache.js');
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'uyuni-cdk-code-cache-'));
afterAll(() => fs.rmSync(work, { recursive: true, force: true }));

const { cacheFileOf } = require(CODE_CACHE) as { cacheFileOf(file: string, bytes: Buffer, dir: string, variant: string): string };

/** A bundle that exports what it computed, and what `require` and `__dirname` are inside it. */
function writeBundle(file: string, answer: number): void {
  fs.writeFileSync(file, `'use strict';\nconst path = require('path');\nfunction answer() { return ${answer}; }\nmodule.exports = { answer: answer(), dir: __dirname, base: path.basename(__filename) };\n`);
}

/** Runs `bundle` through runBundle in a fresh process: its exports and whether V8 took the cache. */
function run(bundle: string, cacheDir: string, variant = 'status'): { hit: boolean; exports: { answer: number; dir: string; base: string } } {
  const script = `const r = require(${JSON.stringify(CODE_CACHE)}).runBundle(${JSON.stringify(bundle)}, ${JSON.stringify(variant)}, ${JSON.stringify(cacheDir)}); console.log(JSON.stringify(r));`;
  const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`runBundle exited ${r.status}: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

describe('bin/code-cache.js', () => {
  const bundle = path.join(work, 'app.cjs');
  const cacheDir = path.join(work, 'cache');
  const cacheFile = (variant = 'status') => cacheFileOf(bundle, fs.readFileSync(bundle), cacheDir, variant);

  it('compiles on a miss and writes the cache as the process exits, which the next start takes', () => {
    writeBundle(bundle, 42);
    const first = run(bundle, cacheDir);
    expect(first).toEqual({ hit: false, exports: { answer: 42, dir: work, base: 'app.cjs' } });
    expect(fs.statSync(cacheFile()).size).toBeGreaterThan(0);
    expect(run(bundle, cacheDir)).toEqual({ hit: true, exports: { answer: 42, dir: work, base: 'app.cjs' } });
  });

  it('keeps one cache per kind of command, and only the current build\'s', () => {
    writeBundle(bundle, 42);
    run(bundle, cacheDir);
    expect(run(bundle, cacheDir, 'run').hit).toBe(false);
    expect(run(bundle, cacheDir, 'run').hit).toBe(true);
    expect(run(bundle, cacheDir, 'status').hit).toBe(true);
    const status = cacheFile('status');
    writeBundle(bundle, 44); // a new build: its first start replaces the old build's cache
    run(bundle, cacheDir, 'status');
    expect(fs.existsSync(status)).toBe(false);
    expect(fs.existsSync(cacheFile('status'))).toBe(true);
    expect(fs.existsSync(cacheFileOf(bundle, Buffer.from(fs.readFileSync(bundle, 'utf8').replace('44', '42')), cacheDir, 'run'))).toBe(true);
  });

  it('ignores a corrupt cache file, and replaces it', () => {
    writeBundle(bundle, 42);
    run(bundle, cacheDir);
    fs.writeFileSync(cacheFile(), 'not V8 code');
    expect(run(bundle, cacheDir)).toEqual({ hit: false, exports: expect.objectContaining({ answer: 42 }) });
    expect(run(bundle, cacheDir).hit).toBe(true);
  });

  it('never runs the code cached for other content, even of the same length', () => {
    writeBundle(bundle, 42);
    run(bundle, cacheDir);
    const old = cacheFile();
    writeBundle(bundle, 43); // same length: V8's own check (the source's length) would not see it
    expect(cacheFile()).not.toBe(old);
    expect(run(bundle, cacheDir)).toEqual({ hit: false, exports: expect.objectContaining({ answer: 43 }) });
    expect(run(bundle, cacheDir)).toEqual({ hit: true, exports: expect.objectContaining({ answer: 43 }) });
  });

  it('runs without a cache where none can be written', () => {
    writeBundle(bundle, 42);
    const notADir = path.join(work, 'file');
    fs.writeFileSync(notADir, '');
    expect(run(bundle, path.join(notADir, 'cache'))).toEqual({ hit: false, exports: expect.objectContaining({ answer: 42 }) });
    expect(run(bundle, path.join(notADir, 'cache')).hit).toBe(false);
  });

  it('names the running checkout\'s files in stack traces, not those of another checkout of the same build', () => {
    const thrower = `'use strict';\nfunction fail() { throw new Error('boom'); }\nmodule.exports = { answer: 1, dir: __dirname, base: (() => { try { fail(); } catch (e) { return e.stack.split('\\n')[1]; } })() };\n`;
    const checkouts = ['one', 'two'].map((n) => path.join(work, n, 'bundle'));
    for (const dir of checkouts) {
      fs.mkdirSync(dir, { recursive: true });
      fs.writeFileSync(path.join(dir, 'cli.cjs'), thrower);
    }
    const shared = path.join(work, 'shared-cache');
    const [one, two] = checkouts.map((dir) => path.join(dir, 'cli.cjs'));
    expect(run(one, shared)).toMatchObject({ hit: false, exports: { base: expect.stringContaining(`(${one}:2:`) } });
    expect(run(one, shared)).toMatchObject({ hit: true, exports: { base: expect.stringContaining(`(${one}:2:`) } });
    // The same bytes elsewhere: their own cache, their own file name (V8 keeps a cache's file name in its traces).
    expect(run(two, shared)).toMatchObject({ hit: false, exports: { base: expect.stringContaining(`(${two}:2:`) } });
    expect(run(two, shared)).toMatchObject({ hit: true, exports: { base: expect.stringContaining(`(${two}:2:`) } });
    // Each checkout keeps its cache: neither removes the other's as an earlier build.
    expect(run(one, shared).hit).toBe(true);
    expect(fs.readdirSync(shared)).toHaveLength(2);
  });
});
