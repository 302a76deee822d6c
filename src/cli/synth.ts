import type { Command } from 'commander';
import * as path from 'path';
import type { ConfigSource } from '../config/layers';

/**
 * `uyuni-cdk synth`: the cdk8s app's synth (src/main.ts `synthRun`) without the cdk8s CLI, so a
 * global install writes plans too. Same defaults: $UYUNI_CONFIG or uyuni.yaml, $UYUNI_SET, $UYUNI_DIST or dist/.
 */

interface SynthFlags { config?: string[]; set?: string[]; output?: string }

const collect = (value: string, previous: string[] = []) => [...previous, value];

export function register(program: Command): void {
  program.command('synth')
    .description('Synthesize the plans of a configuration into a directory, one subdirectory per plan (the cdk8s app\'s synth, without the cdk8s CLI)')
    .option('-c, --config <file>', 'a configuration file; give it several times to layer files, later ones winning (default: $UYUNI_CONFIG, else uyuni.yaml)', collect)
    .option('--set <key.path=value>', 'override one setting after the files, the value read as YAML (repeatable; commas separate several, as helm\'s --set; default: $UYUNI_SET)', collect)
    .option('-o, --output <dir>', 'the output directory; plans of other configurations in it are kept (default: $UYUNI_DIST, else dist)')
    .addHelpText('after', `
Layers: the files in the order given, then every --set in order. A later layer wins; mappings
merge key by key, lists and single values are replaced, and null removes what an earlier layer
set. A --set value is read as YAML: images.tag=2026.10 is the number 2026.1, so quote a tag
('images.tag="2026.10"'); "\\." is a dot inside a key, [N] an item of a list. Every problem names
the file and line, or the --set, its value came from; keys are checked against the schema, as in
a file ("did you mean").

The plans are written into a staging directory beside the output and swapped in once all are
complete: a bad configuration (exit 2, every problem named) or a crash leaves the output as it was.

Only the plans this configuration writes are replaced in the output directory; other files and
the plans of other configurations stay (unlike the cdk8s CLI's -o, which empties its directory).

Exit codes: 0 written, 1 synth failed, 2 bad configuration.

Examples:
  uyuni-cdk synth                                  # uyuni.yaml → dist/<plan>/
  uyuni-cdk synth -c migration.yaml -o migration-dist   # another configuration, its own directory
  uyuni-cdk synth -c uyuni.yaml -c migration.yaml --set 'images.tag="2026.10"' -o layered   # layers, later wins`)
    .action((flags: SynthFlags) => {
      // Loaded here: `uyuni-cdk --help` and the cluster verbs never load the synth side.
      const { configPaths } = require('../config/load') as typeof import('../config/load');
      const { defaultOutdir, holdSignals, synthRun } = require('../main') as typeof import('../main');
      holdSignals();
      // Files as given (relative to the working directory), so that messages name them so.
      const files = flags.config ?? configPaths(process.env);
      // As the cdk8s app: without --set, $UYUNI_SET's.
      const sets: ConfigSource[] = flags.set ? flags.set.map((set) => ({ set }))
        : process.env.UYUNI_SET ? [{ set: process.env.UYUNI_SET, via: 'UYUNI_SET' }] : [];
      const sources: ConfigSource[] = [...files.map((file) => ({ file })), ...sets];
      process.exitCode = synthRun({
        sources,
        outdir: flags.output ? path.resolve(flags.output) : defaultOutdir(process.env),
      });
    });
}
