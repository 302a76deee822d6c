import { Command } from 'commander';
import { packageVersion } from '../version';

/**
 * The program every entry point starts from (src/cli/main.ts with every verb, src/cli/status-main.ts
 * with `status` alone): its name, description, version and global options.
 */
export function newProgram(): Command {
  const program = new Command('uyuni-cdk')
    .description('Synthesize an Uyuni server\'s plans into dist/, run them against a cluster, and the node agent.')
    .version(packageVersion(), '-V, --version', 'print the version of uyuni-cdk')
    .option('--debug', 'on an error, also print where it happened (its stack trace)')
    .configureHelp({ showGlobalOptions: true })
    .exitOverride();
  // The verbs report errors in one line; --debug (before or after the verb) adds the stack.
  program.hook('preAction', () => {
    if (program.opts().debug) process.env.UYUNI_CDK_DEBUG = '1';
  });
  return program;
}
