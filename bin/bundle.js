'use strict';
// Which code a bin script runs: the bundle scripts/build.js wrote into bundle/ (one file, its
// compiled code cached by bin/code-cache.js: fast start) while it is fresh, else the TypeScript
// sources through bin/register.js.
//
// Fresh means: bundle/sources.json exists and none of the project files the bundles were built
// from (its `inputs`, package-lock.json among them) is missing or changed after the build
// started. So an edited source is never shadowed by an old bundle: the command runs the
// sources until `npm run build` (or `npm ci`) builds again. UYUNI_CDK_SOURCES=1 forces the
// sources (profiling, debugging with the real file names); UYUNI_CDK_BUNDLE=1 the bundle, even an
// old one (benchmarks of a tree that is being edited).
const fs = require('fs');
const path = require('path');

const ROOT = path.join(__dirname, '..');
const BUNDLE_DIR = path.join(ROOT, 'bundle');
const MANIFEST_NAME = 'sources.json';

/** The bundles and the source each is built from (the agent's alone: it is what a node runs). */
const ENTRIES = {
  cli: { source: 'src/cli/main.ts' },
  synth: { source: 'src/main.ts' },
  agent: { source: 'bin/agent-main.js' },
};

/** Whether the bundles in `dir` are not older than any file under `root` they were built from. */
function isFresh(dir = BUNDLE_DIR, root = ROOT) {
  let manifest;
  try {
    manifest = JSON.parse(fs.readFileSync(path.join(dir, MANIFEST_NAME), 'utf8'));
  } catch {
    return false; // never built (a checkout without `npm ci`): the sources
  }
  // An installed package (package.json `files`) ships the bundles without the sources they were built from.
  if (!fs.existsSync(path.join(root, ENTRIES.cli.source))) return true;
  return manifest.inputs.every((input) => {
    try {
      return fs.statSync(path.join(root, input)).mtimeMs <= manifest.builtAt;
    } catch {
      return false; // removed or renamed since
    }
  });
}

let fresh;

/** Whether the bin scripts run bundle/ (decided once per process). */
function bundleFresh() {
  if (fresh === undefined) {
    if (process.env.UYUNI_CDK_SOURCES === '1') fresh = false;
    else if (process.env.UYUNI_CDK_BUNDLE === '1') fresh = true;
    else fresh = isFresh();
  }
  return fresh;
}

/**
 * The exports of bundle `name` (bundle/<name>.cjs) when it is fresh, with the code cache of
 * `variant` (bin/code-cache.js), else of its sources, which `fromSources` requires.
 */
function load(name, fromSources, variant = '') {
  if (bundleFresh()) return require('./code-cache').runBundle(path.join(BUNDLE_DIR, `${name}.cjs`), variant).exports;
  require('./register');
  return fromSources();
}

module.exports = { ROOT, BUNDLE_DIR, MANIFEST_NAME, ENTRIES, isFresh, bundleFresh, load };
