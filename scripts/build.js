#!/usr/bin/env node
'use strict';
// `npm run build` (and `prepare`, so `npm ci` runs it): bundles each entry point with esbuild
// into bundle/ (git-ignored), so a command loads one file instead of transpiling and resolving
// hundreds. The bin scripts use a bundle only while it is fresh (bin/bundle.js); the sources stay
// runnable (bin/register.js) and type-checked by `tsc --noEmit` in the tests.
const fs = require('fs');
const path = require('path');
const { ENTRIES, BUNDLE_DIR: DEFAULT_DIR, MANIFEST_NAME, ROOT } = require('../bin/bundle');

// `--outdir DIR`: elsewhere than bundle/ (the tests build there, leaving the bundles in use alone).
const at = process.argv.indexOf('--outdir');
const BUNDLE_DIR = at > 0 ? path.resolve(process.argv[at + 1]) : DEFAULT_DIR;

/**
 * Source files that read files beside themselves (`path.join(__dirname, '..', 'scripts')`):
 * in a bundle `__dirname` is bundle/, so each file's own directory is put back.
 */
const sourceDirname = {
  name: 'source-dirname',
  setup(build) {
    build.onLoad({ filter: /\.ts$/ }, async (args) => {
      if (args.path.includes(`${path.sep}node_modules${path.sep}`)) return undefined;
      const text = await fs.promises.readFile(args.path, 'utf8');
      if (!text.includes('__dirname')) return { contents: text, loader: 'ts' };
      const rel = path.relative(BUNDLE_DIR, path.dirname(args.path)).split(path.sep).join('/');
      return { contents: text.replace(/\b__dirname\b/g, `require('path').join(__dirname, ${JSON.stringify(rel)})`), loader: 'ts' };
    });
  },
};

/** What every bundle shares. */
const COMMON = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  // No keepNames: its __name() call on each of the client's thousands of classes and functions
  // cost a tenth of a `status`. Names stay as written except where two modules' top-level names
  // collide (esbuild suffixes one); errors are told apart with instanceof, never by their names.
  minifyWhitespace: true,
  minifySyntax: true,
  legalComments: 'none',
  metafile: true,
  logLevel: 'warning',
  // Optional: `ws`'s native speed-ups (loaded in try/catch) and dbus-next's session bus lookup
  // through X11 (only without DBUS_SESSION_BUS_ADDRESS); absent is fine.
  external: ['bufferutil', 'utf-8-validate', 'x11'],
  plugins: [sourceDirname],
};

async function build() {
  const esbuild = require('esbuild');
  const started = Date.now();
  fs.rmSync(BUNDLE_DIR, { recursive: true, force: true });
  fs.mkdirSync(BUNDLE_DIR, { recursive: true });
  // One CommonJS file per entry, which bin/code-cache.js compiles with V8's code cache (Node 20
  // has none for ES modules, and compiling was a third of a command's start). What the sources
  // load with `await import()` or a `require()` inside a function (the runtime behind a verb, the
  // Kubernetes client behind the agent's rare kubeconfig cases) stays unevaluated until reached.
  // agent.cjs is also the single executable's script (scripts/build-agent.js).
  const metafiles = {};
  await Promise.all(Object.entries(ENTRIES).map(async ([name, e]) => {
    const r = await esbuild.build({ ...COMMON, entryPoints: [path.join(ROOT, e.source)], outfile: path.join(BUNDLE_DIR, `${name}.cjs`), format: 'cjs' });
    metafiles[name] = r.metafile;
  }));
  const inputs = new Set(['package-lock.json']);
  for (const m of Object.values(metafiles)) for (const input of Object.keys(m.inputs)) if (!input.includes('node_modules/')) inputs.add(input);
  fs.writeFileSync(path.join(BUNDLE_DIR, 'meta.json'), JSON.stringify(metafiles));
  // What bin/bundle.js compares the bundles' age with: every project file they were built from.
  fs.writeFileSync(path.join(BUNDLE_DIR, MANIFEST_NAME), JSON.stringify({ builtAt: started, inputs: [...inputs].sort() }, null, 1));
  const size = (f) => `${f} ${(fs.statSync(path.join(BUNDLE_DIR, f)).size / 1e6).toFixed(2)} MB`;
  console.log(`uyuni-cdk: built ${path.relative(process.cwd(), BUNDLE_DIR) || '.'}/ in ${Date.now() - started} ms: ${Object.keys(ENTRIES).map((n) => `${n}.cjs`).map(size).join(', ')}`);
}

build().catch((e) => {
  console.error(`uyuni-cdk build: ${e.message}`);
  process.exit(1);
});
