'use strict';
// The bundles scripts/build.js writes into bundle/ (`npm ci`, `npm run build`, and so `npm pack`),
// and how a bin script runs one: with V8's code cache (bin/code-cache.js). The bin scripts run
// bundles and nothing else, so what a command runs is what was built and shipped; the sources
// run only under `npm run dev` (scripts/dev.js) and the tests.
const fs = require('fs');
const path = require('path');

const ROOT = path.join(__dirname, '..');
const BUNDLE_DIR = path.join(ROOT, 'bundle');

/** The bundles and the source each is built from (the agent's alone: it is what a node runs). */
const ENTRIES = {
  cli: { source: 'src/cli/main.ts' },
  // `uyuni-cdk status …` alone: a fifth of the CLI's bundle (issue 36: its start-up). The CLI's
  // bundle has `status` too, for `uyuni-cdk --debug status …` and the help.
  status: { source: 'src/cli/status-main.ts' },
  synth: { source: 'src/main.ts' },
  agent: { source: 'bin/agent-main.js' },
};

/**
 * The verbs that have a code cache of their own (bin/code-cache.js: one per kind of command);
 * anything else, a mistyped verb included, shares one (`other`), so that typos do not each leave
 * a cache file of megabytes. test/build/bundle.test.ts checks them against the CLI's verbs.
 */
const VERBS = ['init', 'synth', 'run', 'plan', 'status', 'destroy', 'logs', 'support', 'unlock', 'repair-record', 'agent', 'completion', '__complete'];
const AGENT_VERBS = ['render', 'cleanup', 'run'];

/**
 * The bundle and the code cache a command line uses: `agent <verb>`'s, `status`'s own bundle, a
 * verb's, or `other`.
 */
function variantOf(argv) {
  const known = (w, list) => (list.includes(w) ? w : 'other');
  if (argv[0] === 'agent') return { bundle: 'agent', variant: `agent-${known(argv[1], AGENT_VERBS)}` };
  if (argv[0] === 'status') return { bundle: 'status', variant: 'status' };
  return { bundle: 'cli', variant: known(argv[0], VERBS) };
}

/**
 * The exports of bundle `name` (bundle/<name>.cjs), run with the code cache of `variant`. Without
 * the bundle (a checkout in which nothing was built): a message that says how to build it, exit 1.
 */
function load(name, variant = '', dir = BUNDLE_DIR) {
  const file = path.join(dir, `${name}.cjs`);
  if (!fs.existsSync(file)) {
    process.stderr.write(`uyuni-cdk: ${path.relative(process.cwd(), file) || file} is missing: \`npm run build\` writes the bundles (\`npm run dev -- <args>\` runs the sources)\n`);
    process.exit(1);
  }
  return require('./code-cache').runBundle(file, variant).exports;
}

module.exports = { ROOT, BUNDLE_DIR, ENTRIES, VERBS, AGENT_VERBS, variantOf, load };
