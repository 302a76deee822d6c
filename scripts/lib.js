#!/usr/bin/env node
'use strict';
// `npm run build:lib` (and `prepack`, so `npm pack` and `npm publish` run it): the library's
// JavaScript and .d.ts into lib/ (git-ignored), for `import { UyuniServer } from 'uyuni-cdk'`
// (docs/library.md). tsc, not a bundle: the user's app and ours must share one cdk8s and one
// constructs, and the types need tsc anyway. The step Jobs' shell scripts go beside the
// compiled src/ as they are beside src/ (src/constructs/script-job.ts reads them from there).
const { spawnSync } = require('child_process');
const fs = require('fs');
const path = require('path');

const ROOT = path.join(__dirname, '..');
const LIB = path.join(ROOT, 'lib');

const started = Date.now();
fs.rmSync(LIB, { recursive: true, force: true });
const tsc = spawnSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', path.join(ROOT, 'tsconfig.lib.json')], { stdio: 'inherit' });
if (tsc.status !== 0) {
  console.error('uyuni-cdk build:lib: tsc failed (above); nothing packed');
  process.exit(1);
}
fs.cpSync(path.join(ROOT, 'src', 'scripts'), path.join(LIB, 'src', 'scripts'), { recursive: true });
console.log(`uyuni-cdk: built lib/ in ${Date.now() - started} ms`);
