#!/usr/bin/env node
'use strict';
// The agent's verbs load the agent's own entry (no Kubernetes client, no synth); every other
// verb the CLI's. bin/bundle.js says when the sources run instead of the bundles.
// First of all, before a bundle is read and compiled: the heap's flags (bin/heap.js says why).
require('./heap').tuneHeap();
const { load } = require('./bundle');

const argv = process.argv.slice(2);
/** Which code cache a command uses (bin/code-cache.js): its verb's, or one for anything else. */
const word = (w) => (/^[a-z]{1,16}$/.test(w ?? '') ? w : 'other');
const entry = argv[0] === 'agent'
  ? load('agent', () => require('./agent-main.js'), `agent-${word(argv[1])}`)
  : load('cli', () => require('../src/cli/main.ts'), word(argv[0]));
entry.main(argv);
