import type { Command } from 'commander';
import * as fs from 'fs';
import * as path from 'path';
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
Beside the file, init writes uyuni.schema.json, the package's JSON Schema, which the file's
first line names (yaml-language-server: VS Code's YAML extension, Neovim, Helix), so editors
complete, describe and check every setting, offline. An older uyuni.schema.json is replaced.
The install starter is the package's uyuni.yaml without the repository's test pods.
Every setting: docs/configuration.md. Then: uyuni-cdk synth -c <file>.

Exit codes: 0 written, 2 bad arguments or the file exists (without --force).

Examples:
  uyuni-cdk init                           # ./uyuni.yaml, an install
  uyuni-cdk init --migration -o migration.yaml
  uyuni-cdk init --proxy -o -              # print it`)
    .action((flags: InitFlags) => {
      const chosen = (['migration', 'upgrade', 'proxy'] as const).filter((f) => flags[f]);
      const fail = (message: string) => {
        process.stderr.write(`uyuni-cdk: init: ${message}\n`);
        process.exitCode = EXIT.badInput;
      };
      if (chosen.length > 1) return fail(`--${chosen.join(' and --')} exclude each other: choose one`);
      const { starterText } = require('../config/starter') as typeof import('../config/starter');
      const { CONFIG_SCHEMA_FILE } = require('../config/json-schema') as typeof import('../config/json-schema');
      const { packageRoot } = require('../version') as typeof import('../version');
      const root = packageRoot();
      if (!root) throw new Error('the package\'s files (uyuni.yaml, examples/) were not found beside this command');
      const text = starterText(root, chosen[0] ?? 'install');
      const schema = fs.readFileSync(path.join(root, CONFIG_SCHEMA_FILE), 'utf8');
      if (flags.output === '-') {
        process.stdout.write(text);
        process.stderr.write(`uyuni-cdk: init: its first line names ${CONFIG_SCHEMA_FILE} beside the file, for editors: init -o FILE writes it there (it is ${path.join(root, CONFIG_SCHEMA_FILE)})\n`);
        return;
      }
      // the schema the modeline names, beside the file: ours (any version) is replaced, another file only with --force
      const schemaFile = path.join(path.dirname(flags.output), CONFIG_SCHEMA_FILE);
      const title = (t: string) => { try { return (JSON.parse(t) as { title?: unknown }).title; } catch { return undefined; } };
      const existing = fs.existsSync(schemaFile) ? fs.readFileSync(schemaFile, 'utf8') : undefined;
      if (existing !== undefined && !flags.force && title(existing) !== title(schema)) {
        return fail(`${schemaFile} exists and is not this package's schema; nothing written (--force overwrites it, -o writes elsewhere)`);
      }
      for (const [file, content, flag] of [[flags.output, text, flags.force ? 'w' : 'wx'], [schemaFile, existing === schema ? undefined : schema, 'w']] as const) {
        try {
          if (content !== undefined) fs.writeFileSync(file, content, { flag });
        } catch (e) {
          const code = (e as NodeJS.ErrnoException).code;
          return fail(code === 'EEXIST'
            ? `${file} exists; nothing written (--force overwrites it, -o writes another file)`
            : `cannot write ${file}: ${(e as Error).message}`);
        }
      }
      process.stderr.write(`uyuni-cdk: wrote ${flags.output} (${chosen[0] ?? 'install'}) and, for editors, ${schemaFile}; edit it (docs/configuration.md), then: uyuni-cdk synth -c ${flags.output}\n`);
    });
}
