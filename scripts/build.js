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

/** Whether a package's resolved entry file is an ES module. */
function isEsm(file) {
  if (file.endsWith('.mjs')) return true;
  for (let dir = path.dirname(file); dir !== path.dirname(dir); dir = path.dirname(dir)) {
    const manifest = path.join(dir, 'package.json');
    if (fs.existsSync(manifest)) return JSON.parse(fs.readFileSync(manifest, 'utf8')).type === 'module';
  }
  return false;
}

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

/**
 * `await import('yaml')` of a CommonJS package: split into its own chunk, esbuild would give it
 * only a default export, where the sources (and Node) see its named exports too. So such an
 * import goes through a module that names them (read from the package at build time).
 */
const cjsNamedExports = {
  name: 'cjs-named-exports',
  setup(build) {
    build.onResolve({ filter: /^[^./]/ }, (args) => {
      if (args.kind !== 'dynamic-import') return undefined;
      const file = require.resolve(args.path, { paths: [args.resolveDir] });
      return isEsm(file) ? undefined : { path: file, namespace: 'cjs-named', pluginData: { specifier: args.path, resolveDir: args.resolveDir } };
    });
    build.onLoad({ filter: /.*/, namespace: 'cjs-named' }, (args) => {
      const names = Object.keys(require(args.path)).filter((k) => IDENTIFIER.test(k) && k !== 'default');
      const { specifier, resolveDir } = args.pluginData;
      // `export { x as interface }`: an export name may be a reserved word, a variable may not.
      const contents = [
        `import m from ${JSON.stringify(specifier)};`,
        'export default m;',
        ...names.map((n, i) => `const e${i} = m[${JSON.stringify(n)}];`),
        `export { ${names.map((n, i) => `e${i} as ${n}`).join(', ')} };`,
      ].join('\n');
      return { contents, resolveDir, loader: 'js' };
    });
  },
};

/** What every bundle shares. */
const COMMON = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  // Keeps class and function names (errors are told apart and reported by them).
  keepNames: true,
  minifyWhitespace: true,
  minifySyntax: true,
  legalComments: 'none',
  metafile: true,
  logLevel: 'warning',
  // Optional: `ws`'s native speed-ups (loaded in try/catch) and dbus-next's session bus lookup
  // through X11 (only without DBUS_SESSION_BUS_ADDRESS); absent is fine.
  external: ['bufferutil', 'utf-8-validate', 'x11'],
  plugins: [sourceDirname, cjsNamedExports],
};

/**
 * ES modules, for the one reason that esbuild splits them: every `await import()` of the
 * sources (the runtime behind a verb, the Kubernetes client behind the agent's rare kubeconfig
 * cases) becomes a chunk loaded only when reached, and what entries share is loaded once. The
 * bundled CommonJS packages get `require`, `__filename` and `__dirname` from the banner.
 */
const ESM_BANNER = [
  "import { createRequire as __createRequire } from 'module';",
  "import { fileURLToPath as __fileURLToPath } from 'url';",
  'const require = __createRequire(import.meta.url);',
  'const __filename = __fileURLToPath(import.meta.url);',
  "const __dirname = __filename.slice(0, __filename.lastIndexOf('/'));",
].join('\n');

async function build() {
  const esbuild = require('esbuild');
  const started = Date.now();
  fs.rmSync(BUNDLE_DIR, { recursive: true, force: true });
  fs.mkdirSync(BUNDLE_DIR, { recursive: true });
  const split = await esbuild.build({
    ...COMMON,
    entryPoints: Object.fromEntries(Object.entries(ENTRIES).map(([name, e]) => [name, path.join(ROOT, e.source)])),
    outdir: BUNDLE_DIR,
    format: 'esm',
    splitting: true,
    outExtension: { '.js': '.mjs' },
    // Beside the entries: the sources' own directories are found relative to bundle/ (above).
    chunkNames: '[name]-[hash]',
    banner: { js: ESM_BANNER },
  });
  // The single executable's script (scripts/build-agent.js): one CommonJS file, as Node's
  // single executable applications take it; what the agent imports lazily stays lazy in it.
  const sea = await esbuild.build({ ...COMMON, entryPoints: [path.join(ROOT, ENTRIES.agent.source)], outfile: path.join(BUNDLE_DIR, 'agent-sea.js'), format: 'cjs' });
  const inputs = new Set(['package-lock.json']);
  for (const r of [split, sea]) for (const input of Object.keys(r.metafile.inputs)) if (!input.includes('node_modules/')) inputs.add(input);
  fs.writeFileSync(path.join(BUNDLE_DIR, 'meta.json'), JSON.stringify(split.metafile));
  // What bin/bundle.js compares the bundles' age with: every project file they were built from.
  fs.writeFileSync(path.join(BUNDLE_DIR, MANIFEST_NAME), JSON.stringify({ builtAt: started, inputs: [...inputs].sort() }, null, 1));
  const size = (f) => `${f} ${(fs.statSync(path.join(BUNDLE_DIR, f)).size / 1e6).toFixed(2)} MB`;
  console.log(`uyuni-cdk: built ${path.relative(process.cwd(), BUNDLE_DIR) || '.'}/ in ${Date.now() - started} ms: ${[...Object.keys(ENTRIES).map((n) => `${n}.mjs`), 'agent-sea.js'].map(size).join(', ')}`);
}

build().catch((e) => {
  console.error(`uyuni-cdk build: ${e.message}`);
  process.exit(1);
});
