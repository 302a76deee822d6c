#!/usr/bin/env node
'use strict';
// The cdk8s app (cdk8s.yaml `app`): synthesizes every plan the configuration asks for into dist/,
// from the synth bundle (bin/bundle.js; `npm run synth` and `npm run synth:all` build it first).
// From the sources: `node scripts/dev.js --synth-app` (what the tests run).
require('./bundle').load('synth').start();
