#!/usr/bin/env node
'use strict';
// `npm run bench`: runs every bench/*.bench.ts in its own process (so RSS figures are its own),
// one after the other, and prints what each measured. A benchmark exits non-zero when it
// misses its target. `npm run bench -- synth` runs only the benchmarks whose file name matches.
// `npm run bench -- real-plane` (against a real control plane, which it starts unless
// UYUNI_CDK_PLANE names one) runs only when named.
const { spawnSync } = require('child_process');
const fs = require('fs');
const path = require('path');

const dir = path.join(__dirname, '..', 'bench');
// What is measured is the installed command, bin/uyuni-cdk.js, which runs the bundles
// (bin/bundle.js): built now from the sources as they are.
const build = spawnSync(process.execPath, [path.join(__dirname, 'build.js')], { stdio: 'inherit' });
if (build.status !== 0) process.exit(1);
const env = process.env;
const filter = process.argv[2];
const files = fs.readdirSync(dir).filter((f) => f.endsWith('.bench.ts') && (filter ? f.includes(filter) : !f.startsWith('real-plane'))).sort();
let failed = 0;
for (const f of files) {
  console.log(`\n== ${f}`);
  const r = spawnSync(process.execPath, ['-r', path.join(__dirname, '..', 'bin', 'register.js'), path.join(dir, f)], { stdio: 'inherit', env });
  if (r.status !== 0) {
    failed++;
    console.log(`== ${f}: missed its target or failed (exit ${r.status})`);
  }
}
console.log(`\n${files.length - failed} benchmarks met their targets, ${failed} did not`);
process.exit(failed ? 1 : 0);
