#!/usr/bin/env node
'use strict';
// The cdk8s app (cdk8s.yaml `app`): synthesizes every plan the configuration asks for into dist/.
require('./register');
require('../src/main.ts').main();
