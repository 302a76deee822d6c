#!/usr/bin/env node
'use strict';
// The cdk8s app (cdk8s.yaml `app`): synthesizes every plan the configuration asks for into dist/.
// V8's compiled code of every module (cdk8s-plus-28's 3 MB of types first) is cached between
// runs: a synth spends most of its start compiling, not working.
require('v8-compile-cache');
require('./register');
require('../src/main.ts').main();
