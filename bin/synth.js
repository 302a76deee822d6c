#!/usr/bin/env node
'use strict';
// The cdk8s app (cdk8s.yaml `app`): synthesizes every plan the configuration asks for into dist/.

// SIGINT, SIGTERM, SIGHUP: a synth is synchronous, so with these handlers a signal waits for it to
// finish (staging removed, dist/ the old set of plans or the new one) and then ends the process
// with 128+n. Without them Node would die mid-publish; SIGKILL still can (the next synth recovers).
for (const [signal, n] of [['SIGHUP', 1], ['SIGINT', 2], ['SIGTERM', 15]]) {
  process.on(signal, () => {
    console.error(`uyuni-cdk: ${signal}: stopped`);
    process.exit(128 + n);
  });
}
const { bundleFresh, load } = require('./bundle');

// From the sources, V8's compiled code of every module (cdk8s-plus-28's 3 MB of types first) is
// cached between runs: a synth would otherwise spend most of its start compiling, not working.
if (!bundleFresh()) require('v8-compile-cache');
load('synth', () => require('../src/main.ts')).main();
// One turn of the event loop, in which a signal received during the synth is handled.
setImmediate(() => {});
