#!/usr/bin/env node
'use strict';
// `npm run --silent cluster -- up|down|status|env DIR`: the real control plane of the cluster
// suites (test/cluster/plane), from the TypeScript sources as `npm run dev` runs them.
require('../bin/register');
require('../test/cluster/plane/cli.ts').main(process.argv.slice(2)).then(
  (code) => { process.exitCode = code; },
  (e) => { process.stderr.write(`cluster: ${e instanceof Error ? e.message : e}\n`); process.exitCode = 1; },
);
