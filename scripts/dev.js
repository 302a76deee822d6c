#!/usr/bin/env node
'use strict';
// `npm run dev -- <args>`: the uyuni-cdk command from the TypeScript sources, transpiled on
// require by bin/register.js (no build step, no type check: `npx tsc --noEmit`), for development
// and the tests. `--synth-app` first: the cdk8s app (bin/synth.js) instead, whose modules' compiled
// code v8-compile-cache keeps between runs (cdk8s-plus-28's types alone are 3 MB to compile).
// The installed command (bin/uyuni-cdk.js) runs only the bundles.
const argv = process.argv.slice(2);
if (argv[0] === '--synth-app') {
  require('v8-compile-cache');
  require('../bin/register');
  require('../src/main.ts').start();
} else {
  require('../bin/register');
  const entry = argv[0] === 'agent' ? require('../bin/agent-main.js') : require('../src/cli/main.ts');
  entry.main(argv);
}
