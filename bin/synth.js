#!/usr/bin/env node
'use strict';
// The cdk8s app (cdk8s.yaml `app`): synthesizes every plan the configuration asks for into dist/.

const { bundleFresh, load } = require('./bundle');

// From the sources, V8's compiled code of every module (cdk8s-plus-28's 3 MB of types first) is
// cached between runs: a synth would otherwise spend most of its start compiling, not working.
if (!bundleFresh()) require('v8-compile-cache');
const app = load('synth', () => require('../src/main.ts'));
// SIGINT, SIGTERM, SIGHUP wait for the synchronous synth to finish (staging removed, dist/ the old
// set of plans or the new one), then end the process with 128+n (src/main.ts holdSignals). Before
// this line nothing is written, so a signal may end the process as Node would.
app.holdSignals();
app.main();
// One turn of the event loop, in which a signal received during the synth is handled.
setImmediate(() => {});
