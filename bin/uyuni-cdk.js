#!/usr/bin/env node
'use strict';
// The agent's verbs load the agent's own entry (no Kubernetes client, no synth); every other
// verb the CLI's. bin/bundle.js says when the sources run instead of the bundles.
const { load } = require('./bundle');

const argv = process.argv.slice(2);
const entry = argv[0] === 'agent'
  ? load('agent', () => require('./agent-main.js'))
  : load('cli', () => require('../src/cli/main.ts'));
entry.then((m) => m.main(argv));
