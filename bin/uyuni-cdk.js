#!/usr/bin/env node
'use strict';
require('./register');
require('../src/cli/main.ts').main(process.argv.slice(2));
