#!/usr/bin/env node
'use strict';
// The installed command: the agent's verbs load the agent's own bundle (no runtime, no synth, only
// the parts of the Kubernetes client the agent uses), every other verb the CLI's (bin/bundle.js).
// Developers run the sources: npm run dev -- <args>.
const { load, variantOf } = require('./bundle');

const argv = process.argv.slice(2);
// Which code cache a command uses (bin/code-cache.js): its verb's, or one for anything else.
const { bundle, variant } = variantOf(argv);
load(bundle, variant).main(argv);
