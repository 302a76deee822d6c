'use strict';
// The node agent on its own: `uyuni-cdk agent render|cleanup` and `--version`, without the
// runtime's Kubernetes client or the synth side. bin/uyuni-cdk.js sends the agent verb here, and
// `npm run build:agent` makes a single executable of its bundle that a node runs as `uyuni-cdk`
// (docs/agent.md), so the unit's `uyuni-cdk agent cleanup` command line is the same either way.
const { Command } = require('commander');
const { parseToExit } = require('../src/cli/parse');
const { register } = require('../src/cli/agent');
// Inlined into the bundle: the single executable has no package.json beside it.
const { version } = require('../package.json');

async function main(argv) {
  const program = new Command('uyuni-cdk')
    .description('The uyuni-cdk node agent: systemd units for the pods of a systemd-backed node.')
    .version(version, '-V, --version', 'print the version of uyuni-cdk')
    .showHelpAfterError()
    .exitOverride();
  register(program);
  await parseToExit(program, argv);
}

module.exports = { main };
