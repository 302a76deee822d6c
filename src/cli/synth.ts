import type { Command } from 'commander';
import * as path from 'path';

/**
 * `uyuni-cdk synth`: the cdk8s app's synth (src/main.ts `synthRun`) without the cdk8s CLI, so a
 * global install writes plans too. Same defaults: $UYUNI_CONFIG or uyuni.yaml, $UYUNI_DIST or dist/.
 */

interface SynthFlags { config?: string; output?: string }

export function register(program: Command): void {
  program.command('synth')
    .description('Synthesize the plans of a configuration into a directory, one subdirectory per plan (the cdk8s app\'s synth, without the cdk8s CLI)')
    .option('-c, --config <file>', 'the configuration (default: $UYUNI_CONFIG, else uyuni.yaml)')
    .option('-o, --output <dir>', 'the output directory; plans of other configurations in it are kept (default: $UYUNI_DIST, else dist)')
    .addHelpText('after', `
The plans are written into a staging directory beside the output and swapped in once all are
complete: a bad configuration (exit 2, every problem named) or a crash leaves the output as it was.

Only the plans this configuration writes are replaced in the output directory; other files and
the plans of other configurations stay (unlike the cdk8s CLI's -o, which empties its directory).

Exit codes: 0 written, 1 synth failed, 2 bad configuration.

Examples:
  uyuni-cdk synth                                  # uyuni.yaml → dist/<plan>/
  uyuni-cdk synth -c migration.yaml -o migration-dist   # another configuration, its own directory`)
    .action((flags: SynthFlags) => {
      // Loaded here: `uyuni-cdk --help` and the cluster verbs never load the synth side.
      const { configPath } = require('../config/load') as typeof import('../config/load');
      const { defaultOutdir, holdSignals, synthRun } = require('../main') as typeof import('../main');
      holdSignals();
      process.exitCode = synthRun({
        config: flags.config ? path.resolve(flags.config) : configPath(process.env),
        outdir: flags.output ? path.resolve(flags.output) : defaultOutdir(process.env),
      });
    });
}
