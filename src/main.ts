import * as fs from 'fs';
import * as path from 'path';
import type { ConfigSource } from './config/layers';
import { ConfigError, configSources, loadConfig, sourcesLabel } from './config/load';
import { EXIT } from './plan/exit-codes';
import { printable } from './plan/printable';
import { PublishBusy } from './publish-lock';
import { JOURNAL, recover, withPlanProblems, withPublishLock, writePlans } from './synth';

/** What one synth reads and where it writes: the cdk8s app and `uyuni-cdk synth` both run it. */
export interface SynthRun {
  /**
   * The configuration's layers, in order (src/config/layers.ts): its files (later ones win,
   * mappings merge, lists are replaced), then the `--set` assignments.
   */
  readonly sources: readonly ConfigSource[];
  /** Where the plans are published (dist/, or `-o`); plans of other configurations there are kept. */
  readonly outdir: string;
  /**
   * The cdk8s CLI's default output directory (cdk8s.yaml `output`, which the CLI wipes and then
   * lists): it gets a copy of the published plans, for the listing only (plans are always staged
   * in a directory of our own beside `outdir`: every CLI wipes this one at its start).
   * @default none
   */
  readonly cliOutdir?: string;
  /** Test hook: SIGKILL right after that many renames of the publish. @default none */
  readonly crashAfterRename?: number;
}

/**
 * The cdk8s app (`npx cdk8s synth` runs it through cdk8s.yaml). Reads the configuration
 * (`$UYUNI_CONFIG`, else uyuni.yaml, then `$UYUNI_SET`) and writes its plans where `outputOf`
 * says. Bad configuration: exit 2, the output directory untouched.
 *
 * Environment: UYUNI_CONFIG (the config file, or several separated by ":", later ones winning),
 * UYUNI_SET (`key.path=value` overrides, separated by commas), UYUNI_DIST (the output directory without `-o`,
 * default dist/), CDK8S_OUTDIR (set by the cdk8s CLI, see `outputOf`),
 * UYUNI_CDK_CRASH_AFTER_RENAME (test hook: SIGKILL after that many renames of the publish).
 */
export function main(env: NodeJS.ProcessEnv = process.env): void {
  const crash = env.UYUNI_CDK_CRASH_AFTER_RENAME ? Number(env.UYUNI_CDK_CRASH_AFTER_RENAME) : undefined;
  process.exitCode = synthRun({ sources: configSources(env), ...outputOf(env), crashAfterRename: crash });
}

/**
 * The cdk8s app's process, as bin/synth.js (the bundle) and scripts/dev.js (the sources) start it:
 * signals held (`holdSignals`; before this nothing is written, so a signal may end the process as
 * Node would), the synth, then one turn of the event loop in which a signal received during the
 * synchronous synth is handled.
 */
export function start(): void {
  holdSignals();
  main();
  setImmediate(() => {});
}

/**
 * Where the cdk8s app writes. The cdk8s CLI always sets CDK8S_OUTDIR: to `-o DIR` when given,
 * else to cdk8s.yaml's `output` (.cdk8s.out), after wiping it. So CDK8S_OUTDIR is the output
 * unless it is that configured `output`; then the plans go to $UYUNI_DIST or dist/, and
 * CDK8S_OUTDIR only stages them. (`-o .cdk8s.out` is the default spelt out, and acts as it.)
 * Unset (`node bin/synth.js`): $UYUNI_DIST or dist/.
 */
export function outputOf(env: NodeJS.ProcessEnv, cwd = process.cwd()): Pick<SynthRun, 'outdir' | 'cliOutdir'> {
  const dist = defaultOutdir(env, cwd);
  if (!env.CDK8S_OUTDIR) return { outdir: dist };
  const given = path.resolve(cwd, env.CDK8S_OUTDIR);
  const configured = configuredOutput(cwd);
  return configured !== undefined && path.resolve(cwd, configured) === given ? { outdir: dist, cliOutdir: given } : { outdir: given };
}

/** The output directory unless one is given: $UYUNI_DIST, else dist/. */
export function defaultOutdir(env: NodeJS.ProcessEnv, cwd = process.cwd()): string {
  return path.resolve(cwd, env.UYUNI_DIST || 'dist');
}

/**
 * SIGHUP, SIGINT, SIGTERM: a synth is synchronous, so with these handlers a signal waits for it
 * to finish (staging removed, the output the old set of plans or the new one) and then ends the
 * process with 128+n. Without them Node would die mid-publish (SIGKILL still can: the next synth
 * recovers). The caller turns the event loop once after the synth, as `start` does.
 */
export function holdSignals(): void {
  for (const [signal, n] of [['SIGHUP', 1], ['SIGINT', 2], ['SIGTERM', 15]] as const) {
    process.on(signal, () => {
      console.error(`uyuni-cdk: ${signal}: stopped`);
      process.exit(128 + n);
    });
  }
}

/** cdk8s.yaml's `output` in `cwd`, read as the cdk8s CLI reads it (it looks in its working directory). */
function configuredOutput(cwd: string): string | undefined {
  let text: string;
  try {
    text = fs.readFileSync(path.join(cwd, 'cdk8s.yaml'), 'utf8');
  } catch {
    return undefined;
  }
  const output = (require('yaml') as typeof import('yaml')).parse(text)?.output;
  return typeof output === 'string' ? output : undefined;
}

/**
 * Synthesizes into a staging directory, then swaps the finished plans into `run.outdir`, printing
 * one line per plan on stderr (the cdk8s CLI keeps the app's stdout to itself). Returns the exit
 * code: 0, 2 on a bad configuration, 1 on any other failure; `outdir` is then left as it was.
 *
 * Every synth holds the output's publish lock throughout (a second one waits, src/publish-lock.ts),
 * first completes a publish a crash interrupted and removes what dead synths left (src/synth.ts
 * `recover`); all plans of a configuration are then published as one unit.
 */
export function synthRun(run: SynthRun): number {
  const { sources, outdir, cliOutdir } = run;
  const shown = shownPath(outdir);
  const from = sources.map((s) => ('file' in s ? shownPath(s.file) : (s.via ?? '--set')))
    .filter((name, i, all) => all.indexOf(name) === i).join(' + ');
  try {
    const dirs = withPublishLock(outdir, shown, () => {
      for (const done of recover(outdir)) console.error(`uyuni-cdk: ${shown}/: ${done}`);
      let config;
      try {
        config = loadConfig(sources);
      } catch (e) {
        throw e instanceof ConfigError ? withPlanProblems(e) : e;
      }
      return writePlans(config, sourcesLabel(sources), outdir, { listing: cliOutdir, crashAfterRename: run.crashAfterRename });
    });
    for (const dir of dirs) {
      const files = fs.readdirSync(path.join(outdir, dir));
      console.error(`uyuni-cdk: wrote ${shownPath(path.join(outdir, dir))}/ (${files.length} file${files.length === 1 ? '' : 's'}) from ${from}`);
    }
    return EXIT.ok;
  } catch (e) {
    if (e instanceof ConfigError) {
      // a --set value or a file's text: no terminal escapes, no 100 kB value
      console.error(printable(e.message));
      console.error(`uyuni-cdk: nothing written; ${shown}/ is unchanged`);
      return EXIT.badInput;
    }
    if (e instanceof PublishBusy) {
      console.error(`uyuni-cdk: ${e.message}`);
      console.error(`uyuni-cdk: nothing written; ${shown}/ is unchanged`);
      return 1;
    }
    // A stack only on request: what failed is in the message (an I/O error names its path).
    console.error(`uyuni-cdk: synth failed: ${printable(String(process.env.UYUNI_CDK_DEBUG === '1' ? ((e as Error).stack ?? e) : ((e as Error).message ?? e)))}`);
    console.error(fs.existsSync(path.join(outdir, JOURNAL))
      ? `uyuni-cdk: publish interrupted; the next synth completes it from ${shown}/${JOURNAL}`
      : `uyuni-cdk: nothing written; ${shown}/ is unchanged`);
    // Not a step that failed, but 1 all the same: what Node itself exits with on an uncaught error.
    return 1;
  }
}

/** A path as the user would type it: relative below the working directory, else absolute. */
function shownPath(p: string): string {
  const rel = path.relative(process.cwd(), p);
  return rel === '' ? '.' : rel === '..' || rel.startsWith(`..${path.sep}`) || path.isAbsolute(rel) ? p : rel;
}
