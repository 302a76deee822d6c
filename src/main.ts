import * as fs from 'fs';
import * as path from 'path';
import { ConfigError, configPath, loadConfigFile, plansOf } from './config/load';
import { planProblems } from './plans';
import { JOURNAL, publish, recover, STAGING_PREFIX, synthesize } from './synth';

/**
 * The cdk8s app (`npx cdk8s synth` runs it through cdk8s.yaml). Reads the configuration
 * (`$UYUNI_CONFIG`, else uyuni.yaml), synthesizes into a staging directory, then swaps the
 * finished plans into dist/. Bad configuration: exit 2, dist/ untouched.
 *
 * Every synth first completes a publish a crash interrupted and removes what dead synths left
 * (src/synth.ts `recover`); all plans of a configuration are then published as one unit.
 *
 * Environment: UYUNI_CONFIG (the config file), UYUNI_DIST (the output directory, default
 * dist/), CDK8S_OUTDIR (set by the cdk8s CLI: used as the staging directory),
 * UYUNI_CDK_CRASH_AFTER_RENAME (test hook: SIGKILL after that many renames of the publish).
 */
export function main(env: NodeJS.ProcessEnv = process.env): void {
  const file = configPath(env);
  const dist = path.resolve(env.UYUNI_DIST || 'dist');
  const shown = path.relative(process.cwd(), dist) || 'dist';
  let staging: string | undefined;
  try {
    for (const done of recover(dist)) console.error(`uyuni-cdk: ${shown}/: ${done}`);
    // Our own staging directory sits beside dist/, so the finished plans are renamed in, not copied.
    staging = env.CDK8S_OUTDIR ? path.resolve(env.CDK8S_OUTDIR) : stagingBeside(dist);
    const config = loadConfigFile(file);
    const problems = planProblems(config, plansOf(config));
    if (problems.length > 0) throw new ConfigError(file, problems);
    const dirs = synthesize(config, staging);
    const crashAfterRename = env.UYUNI_CDK_CRASH_AFTER_RENAME ? Number(env.UYUNI_CDK_CRASH_AFTER_RENAME) : undefined;
    publish(staging, dirs, dist, { move: !env.CDK8S_OUTDIR, crashAfterRename });
    for (const dir of dirs) {
      const files = fs.readdirSync(path.join(dist, dir));
      // stderr: the cdk8s CLI keeps the app's stdout to itself.
      console.error(`uyuni-cdk: wrote ${path.relative(process.cwd(), path.join(dist, dir)) || dir}/ (${files.length} file${files.length === 1 ? "" : "s"}) from ${path.relative(process.cwd(), file)}`);
    }
  } catch (e) {
    if (e instanceof ConfigError) {
      console.error(e.message);
      console.error(`uyuni-cdk: nothing written; ${shown}/ is unchanged`);
      process.exitCode = 2;
      return;
    }
    console.error(`uyuni-cdk: synth failed: ${(e as Error).stack ?? e}`);
    console.error(fs.existsSync(path.join(dist, JOURNAL))
      ? `uyuni-cdk: publish interrupted; the next synth completes it from ${shown}/${JOURNAL}`
      : `uyuni-cdk: nothing written; ${shown}/ is unchanged`);
    process.exitCode = 1;
  } finally {
    if (!env.CDK8S_OUTDIR && staging) fs.rmSync(staging, { recursive: true, force: true });
  }
}

function stagingBeside(dist: string): string {
  const parent = path.dirname(dist);
  fs.mkdirSync(parent, { recursive: true });
  // The pid in the name tells `recover` whether its synth still runs.
  return fs.mkdtempSync(path.join(parent, `${STAGING_PREFIX}${process.pid}-`));
}
