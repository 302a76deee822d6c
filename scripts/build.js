#!/usr/bin/env node
'use strict';
// `npm run build` (and `prepare`, so `npm ci` and `npm pack` run it): bundles each entry point
// with esbuild into bundle/ (git-ignored), so a command loads one file instead of transpiling and
// resolving hundreds. The bin scripts run these bundles and nothing else (bin/bundle.js); the
// sources run under `npm run dev` (scripts/dev.js) and the tests, type-checked by `tsc --noEmit`.
const fs = require('fs');
const path = require('path');
const { ENTRIES, BUNDLE_DIR: DEFAULT_DIR, ROOT } = require('../bin/bundle');

/**
 * Source files that read files beside themselves (`path.join(__dirname, '..', 'scripts')`):
 * in a bundle `__dirname` is the bundle's directory, so each file's own directory is put back.
 */
const sourceDirname = (BUNDLE_DIR) => ({
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
});

/**
 * Modules the bundled code requires only in a try/catch, absent being fine: `ws`'s native
 * speed-ups, node-fetch's `encoding`, dbus-next's X11 lookup and its native `usocket` (without it
 * dbus-next connects with `net`, which is all a `unix:path=` bus needs). A bundle leaves them to `require`;
 * in the single executable, whose `require` loads built-in modules only and warns on anything
 * else, they are modules that say they are not installed.
 */
const OPTIONAL = ['bufferutil', 'utf-8-validate', 'encoding', 'x11', 'usocket'];
const absentOptional = {
  name: 'absent-optional',
  setup(build) {
    const filter = new RegExp(`^(${OPTIONAL.join('|')})$`);
    build.onResolve({ filter }, (args) => ({ path: args.path, namespace: 'absent-optional' }));
    build.onLoad({ filter: /.*/, namespace: 'absent-optional' }, (args) => ({
      contents: `throw Object.assign(new Error(${JSON.stringify(`Cannot find module '${args.path}'`)}), { code: 'MODULE_NOT_FOUND' });`,
      loader: 'js',
    }));
  },
};

/** What every bundle shares. */
const common = (BUNDLE_DIR) => ({
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
  external: OPTIONAL,
  plugins: [sourceDirname(BUNDLE_DIR)],
});

/**
 * esbuild's options for the agent's bundle at `outfile`, or (`executable`) the single executable's
 * script. The Kubernetes client is in it, imported statically, so esbuild keeps only what the
 * agent uses of it (its KubeConfig, RequestContext and configuration, 1.4 MB; the generated API
 * classes stay out). It used to be a bundle of its own, the whole client (5.4 MB), which agent.cjs
 * required "when reached": but src/kube's KubeClient, under every request of the agent, is built
 * on it, so every agent loaded the whole client and kept its source for lazy compilation, 14-21 MB
 * of an idle agent's RSS (issue 36).
 */
function agentOptions(outfile, { executable = false } = {}) {
  const options = common(path.dirname(outfile));
  const plugins = executable ? [...options.plugins, absentOptional] : options.plugins;
  return { ...options, entryPoints: [path.join(ROOT, ENTRIES.agent.source)], outfile, format: 'cjs', plugins, external: executable ? [] : options.external };
}

/**
 * The `import()`s a bundle still holds, where each comes from: esbuild turns those of bundled
 * modules into a require(), and leaves the others (a builtin, a module not bundled, a computed
 * name) to Node, and bin/code-cache.js runs bundles as vm.Script, which has no dynamic-import
 * callback: such an import() throws ERR_VM_DYNAMIC_IMPORT_CALLBACK_MISSING when it is reached
 * (as `await import('readline')` did, for the question on a terminal). From esbuild's metafile,
 * and from the text (a computed name is in no metafile).
 */
function dynamicImportsLeft(metafile, texts) {
  const found = [];
  for (const [input, i] of Object.entries(metafile.inputs)) {
    for (const imp of i.imports) if (imp.kind === 'dynamic-import' && imp.external) found.push(`${input}: import('${imp.path}')`);
  }
  for (const [file, text] of Object.entries(texts)) {
    const m = /(?<![\w$.])import\((?!['"`])[^)]{0,40}/.exec(text);
    if (m) found.push(`${file}: ${m[0]}`);
  }
  return found;
}

async function build(BUNDLE_DIR) {
  const esbuild = require('esbuild');
  const started = Date.now();
  fs.mkdirSync(BUNDLE_DIR, { recursive: true });
  // One CommonJS file per entry, which bin/code-cache.js compiles with V8's code cache (Node 20
  // has none for ES modules, and compiling was a third of a command's start). What the sources
  // load with a relative `await import()` or a `require()` inside a function (the runtime behind
  // a verb) stays unevaluated
  // until reached. agent.cjs is also the single executable's script (scripts/build-agent.js).
  // Each is written beside its place under a temporary name and renamed over the old one once
  // all are built and checked: the installed command keeps working while a build runs (it took
  // seconds without any bundle), and a failed build leaves the old ones.
  const metafiles = {};
  const outfile = (name) => path.join(BUNDLE_DIR, `${name}.cjs`);
  const tmp = (file) => `${file}.${process.pid}.tmp`;
  const names = Object.keys(ENTRIES);
  try {
    await Promise.all(Object.entries(ENTRIES).map(async ([name, e]) => {
      const options = name === 'agent' ? agentOptions(outfile(name)) : { ...common(BUNDLE_DIR), entryPoints: [path.join(ROOT, e.source)], outfile: outfile(name), format: 'cjs' };
      metafiles[name] = (await esbuild.build({ ...options, outfile: tmp(outfile(name)) })).metafile;
    }));
    const left = names.flatMap((n) => dynamicImportsLeft(metafiles[n], { [`bundle/${n}.cjs`]: fs.readFileSync(tmp(outfile(n)), 'utf8') }));
    if (left.length) {
      throw new Error(`an import() left in a bundle, which bin/code-cache.js cannot run (vm.Script has no dynamic-import callback): ${left.join('; ')}; use a static import or require()`);
    }
    // esbuild's account of what each bundle holds (test/build/bundle.test.ts reads it; not shipped), under the final names
    for (const m of Object.values(metafiles)) m.outputs = Object.fromEntries(Object.entries(m.outputs).map(([k, v]) => [k.replace(`.${process.pid}.tmp`, ''), v]));
    fs.writeFileSync(tmp(path.join(BUNDLE_DIR, 'meta.json')), JSON.stringify(metafiles));
    for (const n of names) fs.renameSync(tmp(outfile(n)), outfile(n));
    fs.renameSync(tmp(path.join(BUNDLE_DIR, 'meta.json')), path.join(BUNDLE_DIR, 'meta.json'));
  } finally {
    for (const f of fs.readdirSync(BUNDLE_DIR)) if (f.endsWith(`.${process.pid}.tmp`)) fs.rmSync(path.join(BUNDLE_DIR, f), { force: true });
  }
  // bundles of entries that are no more
  for (const f of fs.readdirSync(BUNDLE_DIR)) if (f.endsWith('.cjs') && !names.includes(f.replace(/\.cjs$/, ''))) fs.rmSync(path.join(BUNDLE_DIR, f), { force: true });
  const size = (f) => `${f} ${(fs.statSync(path.join(BUNDLE_DIR, f)).size / 1e6).toFixed(2)} MB`;
  console.log(`uyuni-cdk: built ${path.relative(process.cwd(), BUNDLE_DIR) || '.'}/ in ${Date.now() - started} ms: ${names.map((n) => `${n}.cjs`).map(size).join(', ')}`);
}

module.exports = { agentOptions, build, dynamicImportsLeft };

if (require.main === module) {
  // `--outdir DIR`: elsewhere than bundle/ (the tests build there, leaving the bundles in use alone).
  const at = process.argv.indexOf('--outdir');
  build(at > 0 ? path.resolve(process.argv[at + 1]) : DEFAULT_DIR).catch((e) => {
    console.error(`uyuni-cdk build: ${e.message}`);
    process.exit(1);
  });
}
