#!/usr/bin/env node
'use strict';
// `npm run build:agent`: the node agent as one executable, bundle/uyuni-cdk, for nodes without
// Node.js: a Node single executable application (node --experimental-sea-config, then postject)
// made of this Node binary and the agent's bundle (scripts/build.js agentOptions; optional modules
// a bundle leaves to `require` are inlined as absent, the executable has no files beside it). It answers as
// `uyuni-cdk agent render|cleanup` and `uyuni-cdk --version`; docs/agent.md installs it.
// It runs on machines of this one's architecture and C library (glibc) only.
const { execFileSync } = require('child_process');
const fs = require('fs');
const path = require('path');
const { BUNDLE_DIR: DEFAULT_DIR } = require('../bin/bundle');
const { agentOptions } = require('./build');

// `--bundle-dir DIR`: what `scripts/build.js --outdir DIR` built, and where the executable goes.
const at = process.argv.indexOf('--bundle-dir');
const BUNDLE_DIR = at > 0 ? path.resolve(process.argv[at + 1]) : DEFAULT_DIR;

/** The fuse every Node binary that supports single executables carries (Node's documentation). */
const SENTINEL_FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2';
const OUT = path.join(BUNDLE_DIR, 'uyuni-cdk');

async function main() {
  const started = Date.now();
  const bundle = path.join(BUNDLE_DIR, 'agent-sea.cjs');
  await require('esbuild').build(agentOptions(bundle, { executable: true }));
  const script = path.join(BUNDLE_DIR, 'agent-sea-main.js');
  // The bundle exports `main`; the executable runs it. Its argv is [executable, executable, ...args].
  fs.writeFileSync(script, `${fs.readFileSync(bundle, 'utf8')}\nmodule.exports.main(process.argv.slice(2));\n`);
  const blob = path.join(BUNDLE_DIR, 'agent-sea.blob');
  const config = path.join(BUNDLE_DIR, 'agent-sea.json');
  // useCodeCache: V8's compiled code of the script goes into the executable, so it starts faster.
  fs.writeFileSync(config, JSON.stringify({ main: script, output: blob, disableExperimentalSEAWarning: true, useCodeCache: true }));
  execFileSync(process.execPath, ['--experimental-sea-config', config], { stdio: ['ignore', 'ignore', 'ignore'] });
  const tmp = `${OUT}.${process.pid}.tmp`;
  fs.copyFileSync(process.execPath, tmp);
  fs.chmodSync(tmp, 0o755);
  const { inject } = require('postject');
  await inject(tmp, 'NODE_SEA_BLOB', fs.readFileSync(blob), { sentinelFuse: SENTINEL_FUSE });
  fs.renameSync(tmp, OUT);
  for (const f of [bundle, script, blob, config]) fs.rmSync(f, { force: true });
  console.log(`uyuni-cdk: built ${path.relative(process.cwd(), OUT)} (${(fs.statSync(OUT).size / 1e6).toFixed(0)} MB, Node ${process.version}) in ${Date.now() - started} ms`);
}

main().catch((e) => {
  console.error(`uyuni-cdk build:agent: ${e.message}`);
  process.exit(1);
});
