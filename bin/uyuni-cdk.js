#!/usr/bin/env node
'use strict';
// The installed command: the agent's verbs load the agent's own bundle (no Kubernetes client, no
// synth), every other verb the CLI's (bin/bundle.js). Developers run the sources: npm run dev -- <args>.
const { load } = require('./bundle');

const argv = process.argv.slice(2);
/** Which code cache a command uses (bin/code-cache.js): its verb's, or one for anything else. */
const word = (w) => (/^[a-z]{1,16}$/.test(w ?? '') ? w : 'other');
const entry = argv[0] === 'agent' ? load('agent', `agent-${word(argv[1])}`) : load('cli', word(argv[0]));
entry.main(argv);
