import * as fs from 'fs';
import * as path from 'path';
import { ConfigError, configPath, loadConfigFile, plansOf } from './config/load';
import { planProblems } from './plans';
import { publish, synthesize } from './synth';

/**
 * The cdk8s app (`npx cdk8s synth` runs it through cdk8s.yaml). Reads the configuration
 * (`$UYUNI_CONFIG`, else uyuni.yaml), synthesizes into a staging directory, then swaps the
 * finished plans into dist/. Bad configuration: exit 2, dist/ untouched.
 *
 * Environment: UYUNI_CONFIG (the config file), UYUNI_DIST (the output directory, default
 * dist/), CDK8S_OUTDIR (set by the cdk8s CLI: used as the staging directory).
 */
export function main(env: NodeJS.ProcessEnv = process.env): void {
  const file = configPath(env);
  const dist = path.resolve(env.UYUNI_DIST || 'dist');
  // Our own staging directory sits beside dist/, so the finished plans are renamed in, not copied.
  const staging = env.CDK8S_OUTDIR ? path.resolve(env.CDK8S_OUTDIR) : stagingBeside(dist);
  try {
    const config = loadConfigFile(file);
    const problems = planProblems(config, plansOf(config));
    if (problems.length > 0) throw new ConfigError(file, problems);
    const dirs = synthesize(config, staging);
    publish(staging, dirs, dist, { move: !env.CDK8S_OUTDIR });
    for (const dir of dirs) {
      const files = fs.readdirSync(path.join(dist, dir));
      // stderr: the cdk8s CLI keeps the app's stdout to itself.
      console.error(`uyuni-cdk: wrote ${path.relative(process.cwd(), path.join(dist, dir)) || dir}/ (${files.length} file${files.length === 1 ? "" : "s"}) from ${path.relative(process.cwd(), file)}`);
    }
  } catch (e) {
    if (e instanceof ConfigError) {
      console.error(e.message);
      console.error(`uyuni-cdk: nothing written; ${path.relative(process.cwd(), dist) || 'dist'}/ is unchanged`);
      process.exitCode = 2;
      return;
    }
    console.error(`uyuni-cdk: synth failed: ${(e as Error).stack ?? e}`);
    console.error(`uyuni-cdk: nothing written; ${path.relative(process.cwd(), dist) || 'dist'}/ is unchanged`);
    process.exitCode = 1;
  } finally {
    if (!env.CDK8S_OUTDIR) fs.rmSync(staging, { recursive: true, force: true });
  }
}

function stagingBeside(dist: string): string {
  const parent = path.dirname(dist);
  fs.mkdirSync(parent, { recursive: true });
  return fs.mkdtempSync(path.join(parent, '.uyuni-cdk-synth-'));
}
