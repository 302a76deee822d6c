import type { Command } from 'commander';
import * as fs from 'fs';
import { EXIT } from '../plan/exit-codes';

/**
 * `uyuni-cdk init`: writes a commented starting configuration (src/config/starter.ts), for an
 * install unless a flag names another flow. Never overwrites a file without --force.
 */

interface InitFlags { migration?: boolean; upgrade?: boolean; proxy?: boolean; output: string; force?: boolean }

export function register(program: Command): void {
  program.command('init')
    .description('Write a commented starting configuration (an install, or with a flag a migration, an upgrade or a proxy)')
    .option('--migration', 'a migration from an old host (dist/migrate/, dist/migrate-prepare/)')
    .option('--upgrade', 'an upgrade of a running server (dist/upgrade/)')
    .option('--proxy', 'a proxy attached to a server (dist/proxy/)')
    .option('-o, --output <file>', 'where to write it; - for standard output', 'uyuni.yaml')
    .option('--force', 'overwrite the file if it exists')
    .addHelpText('after', `
The file names the package's JSON Schema in its first line (yaml-language-server), so editors
complete and check it. Every setting: docs/configuration.md. Then: uyuni-cdk synth -c <file>.

Exit codes: 0 written, 2 bad arguments or the file exists (without --force).

Examples:
  uyuni-cdk init                           # ./uyuni.yaml, an install
  uyuni-cdk init --migration -o migration.yaml
  uyuni-cdk init --proxy -o -              # print it`)
    .action((flags: InitFlags) => {
      const chosen = (['migration', 'upgrade', 'proxy'] as const).filter((f) => flags[f]);
      if (chosen.length > 1) {
        process.stderr.write(`uyuni-cdk: init: --${chosen.join(' and --')} exclude each other: choose one\n`);
        process.exitCode = EXIT.badInput;
        return;
      }
      const { starterText } = require('../config/starter') as typeof import('../config/starter');
      const { packageRoot } = require('../version') as typeof import('../version');
      const root = packageRoot();
      if (!root) throw new Error('the package\'s files (uyuni.yaml, examples/) were not found beside this command');
      const text = starterText(root, chosen[0] ?? 'install');
      if (flags.output === '-') {
        process.stdout.write(text);
        return;
      }
      try {
        fs.writeFileSync(flags.output, text, { flag: flags.force ? 'w' : 'wx' });
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        process.stderr.write(code === 'EEXIST'
          ? `uyuni-cdk: init: ${flags.output} exists; nothing written (--force overwrites it, -o writes another file)\n`
          : `uyuni-cdk: init: cannot write ${flags.output}: ${(e as Error).message}\n`);
        process.exitCode = EXIT.badInput;
        return;
      }
      process.stderr.write(`uyuni-cdk: wrote ${flags.output} (${chosen[0] ?? 'install'}); edit it (docs/configuration.md), then: uyuni-cdk synth -c ${flags.output}\n`);
    });
}
