/**
 * The cdk8s CLI's upgrade check (issue 15 item 3): it asks registry.npmjs.org on every command and
 * prints a Node stack where that is out of reach. cdk8s-cli reads the switch only from
 * `--no-check-upgrade` or `CDK8S_CHECK_UPGRADE=false` (yargs `.env('CDK8S')`, no configuration
 * file), so cdk8s.yaml cannot turn it off: `npm run synth` passes the flag, and cdk8s.yaml and the
 * README say so.
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { ROOT, tmpDir } from '../runtime/e2e/harness';

const CLI = path.join(ROOT, 'node_modules', 'cdk8s-cli', 'bin', 'cdk8s');

/** The cdk8s CLI in an empty project whose app writes nothing, with a HOME of its own (no cached version). */
function cdk8sSynth(args: string[], env: Record<string, string> = {}) {
  const dir = tmpDir('cdk8s-check-');
  fs.writeFileSync(path.join(dir, 'app.js'), "require('fs').mkdirSync(process.env.CDK8S_OUTDIR, { recursive: true });\n");
  fs.writeFileSync(path.join(dir, 'cdk8s.yaml'), 'app: node app.js\noutput: out\n');
  return spawnSync(process.execPath, [CLI, 'synth', ...args], { cwd: dir, encoding: 'utf8', env: { ...process.env, HOME: tmpDir('cdk8s-home-'), ...env } });
}

describe("the cdk8s CLI's upgrade check", () => {
  it('is read from the flag or the environment only, never from cdk8s.yaml', () => {
    const cli = fs.readFileSync(path.join(ROOT, 'node_modules', 'cdk8s-cli', 'lib', 'cli', 'index.js'), 'utf8');
    expect(cli).toMatch(/\.option\('check-upgrade'/);
    expect(cli).toContain(".env('CDK8S')");
    // a yargs configuration file (or package.json key) would let cdk8s.yaml carry it: then set it there
    expect(cli).not.toMatch(/\.(config|pkgConf)\(/);
    expect(fs.readFileSync(path.join(ROOT, 'cdk8s.yaml'), 'utf8')).toMatch(/upgrade check[^]*--no-check-upgrade[^]*CDK8S_CHECK_UPGRADE=false/);
  });

  it('is off in npm run synth', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
    // (after the bundles are built: the cdk8s app runs them, src/ edits included)
    expect(pkg.scripts.synth).toMatch(/(^|&& )cdk8s synth --no-check-upgrade\b/);
  });

  it.each([
    ['--no-check-upgrade', ['--no-check-upgrade'], {}],
    ['CDK8S_CHECK_UPGRADE=false', [], { CDK8S_CHECK_UPGRADE: 'false' }],
  ])('%s: synth asks no registry and prints no stack', (_what, args, env) => {
    const r = cdk8sSynth(args, env);
    expect(r.stderr + r.stdout).not.toMatch(/http error|new version|\n\s+at /);
    expect(r.status).toBe(0);
  }, 20_000);
});
