// The published package: what `npm pack` ships, that `npm i -g` of the tarball is a complete
// `uyuni-cdk`, and that the library example of docs/library.md builds, snapshot-tests and
// synthesizes against it. Installs use the local npm cache first (--prefer-offline): the
// dependencies' tarballs are there from `npm ci`; npm may still ask the registry for their metadata.
import { spawnSync, SpawnSyncOptions } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { parseConfig } from '../../src/config/load';
import { EXIT } from '../../src/plan/exit-codes';
import { synthesize } from '../../src/synth';
import { ROOT, tempDir, tree } from '../helpers/synth';
import { cli } from '../runtime/e2e/harness';
import { namespace, NS, service, writePlan } from '../runtime/plans';
import { startSimulator, Simulator } from '../sim';
import { onTerminal, sh } from './terminal';

const NPM = 'npm';
const QUIET = ['--no-audit', '--no-fund', '--loglevel=error'];
const VERSION: string = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')).version;

function run(cmd: string, args: string[], opts: SpawnSyncOptions = {}) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', timeout: 240_000, ...opts, env: { ...process.env, ...opts.env } });
  if (r.error) throw r.error;
  return { status: r.status, stdout: String(r.stdout), stderr: String(r.stderr) };
}

function ok(cmd: string, args: string[], opts: SpawnSyncOptions = {}) {
  const r = run(cmd, args, opts);
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}:\n${r.stdout}\n${r.stderr}`);
  return r;
}

/** The files of a directory, relative, sorted. */
const filesUnder = (dir: string) => Object.keys(tree(dir)).sort();

/**
 * The package is built as `npm pack` builds it: prepack (the library, scripts/lib.js) and the
 * bundles (scripts/build.js, `prepare`), from the sources as they are: what the installed command
 * runs (no other test runs bundle/: they run the sources, test/helpers/entry.ts). Then packed
 * without scripts, so that npm's --json report is all its output.
 */
function pack(dest: string): { tarball: string; files: string[] } {
  ok(process.execPath, [path.join(ROOT, 'scripts', 'lib.js')], { cwd: ROOT });
  ok(process.execPath, [path.join(ROOT, 'scripts', 'build.js')], { cwd: ROOT });
  const [info] = JSON.parse(ok(NPM, ['pack', '--ignore-scripts', '--json', '--pack-destination', dest, ...QUIET], { cwd: ROOT }).stdout);
  return { tarball: path.join(dest, info.filename), files: info.files.map((f: { path: string }) => f.path).sort() };
}

let work: string;
let packed: { tarball: string; files: string[] };

beforeAll(() => {
  work = tempDir('uyuni-cdk-pack-');
  packed = pack(work);
}, 300_000);

afterAll(() => {
  if (work) fs.rmSync(work, { recursive: true, force: true });
});

describe('npm pack', () => {
  it('ships the command, its bundles, the library with its types, the Jobs\' scripts and the docs, and nothing else', () => {
    const dry = JSON.parse(ok(NPM, ['pack', '--dry-run', '--ignore-scripts', '--json', ...QUIET], { cwd: ROOT }).stdout)[0];
    const files: string[] = dry.files.map((f: { path: string }) => f.path).sort();
    expect(files).toEqual(packed.files);

    // The bundles (bin/bundle.js runs them); not the agent's single executable (one machine's
    // binary) nor esbuild's metafiles.
    const bundles = filesUnder(path.join(ROOT, 'bundle')).filter((f) => f.endsWith('.cjs')).map((f) => `bundle/${f}`);
    const lib = filesUnder(path.join(ROOT, 'lib')).map((f) => `lib/${f}`);
    const expected = [
      'README.md', 'package.json', 'bin/bundle.js', 'bin/code-cache.js', 'bin/uyuni-cdk.js',
      // the starting configurations of `uyuni-cdk init` and the editors' schema they name
      'uyuni.yaml', 'uyuni.schema.json', ...fs.readdirSync(path.join(ROOT, 'examples')).map((f) => `examples/${f}`),
      ...fs.readdirSync(path.join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`),
      // the permissions the runtime needs, as the cluster admin applies them (docs/runtime.md, "Permissions")
      ...fs.readdirSync(path.join(ROOT, 'docs', 'rbac')).map((f) => `docs/rbac/${f}`),
      ...fs.readdirSync(path.join(ROOT, 'src', 'scripts'), { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => path.relative(ROOT, path.join(e.parentPath ?? e.path, e.name))),
      ...bundles, ...lib,
    ].sort();
    expect(files).toEqual(expected);
    expect(files.filter((f) => /^(test|bench|\.ci|dist|schemas|imports|node_modules)\/|kubeconfig|\.ts$/.test(f) && !f.endsWith('.d.ts'))).toEqual([]);
    expect(bundles).toEqual(expect.arrayContaining(['bundle/cli.cjs', 'bundle/agent.cjs', 'bundle/status.cjs']));
    // No build artefact for one machine (the agent's single executable) rides along.
    const big = dry.files.filter((f: { size: number }) => f.size > 10 * 1024 * 1024).map((f: { path: string }) => f.path);
    expect(big).toEqual([]);
  });

  it('allows the install scripts of its dependencies (allowScripts): npm ci warns of none left unreviewed', () => {
    expect(ok(NPM, ['install-scripts', 'ls'], { cwd: ROOT }).stdout).toBe('No packages with unreviewed install scripts.\n');
    expect(JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')).allowScripts).toEqual({ esbuild: true, '@swc/core': true });
  });

  it('builds the library as JavaScript with a .d.ts beside every module, from src/index.ts', () => {
    const lib = packed.files.filter((f) => f.startsWith('lib/'));
    const js = lib.filter((f) => f.endsWith('.js'));
    expect(js).toContain('lib/src/index.js');
    expect(js.filter((f) => !lib.includes(f.replace(/\.js$/, '.d.ts')))).toEqual([]);
    // Every module is compiled from a source of the repository (no stale leftovers of deleted files).
    expect(js.filter((f) => !fs.existsSync(path.join(ROOT, f.slice('lib/'.length).replace(/\.js$/, '.ts'))))).toEqual([]);
    // The step Jobs' scripts beside the compiled src/, where script-job reads them.
    expect(lib).toContain('lib/src/scripts/data-sync.sh');
    const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
    expect(manifest.private).toBeUndefined();
    expect([manifest.main, manifest.types, manifest.exports['.'].types]).toEqual(['lib/src/index.js', 'lib/src/index.d.ts', './lib/src/index.d.ts']);
  });
});

describe('npm i -g of the tarball', () => {
  let bin: string;
  beforeAll(() => {
    const prefix = path.join(work, 'prefix');
    ok(NPM, ['i', '-g', '--prefix', prefix, '--prefer-offline', ...QUIET, packed.tarball], { cwd: work });
    bin = path.join(prefix, 'bin', 'uyuni-cdk');
  }, 300_000);

  it('answers --version and plan --help', () => {
    expect(ok(bin, ['--version']).stdout).toBe(`${VERSION}\n`);
    const help = ok(bin, ['plan', '--help']).stdout;
    expect(help).toMatch(/^Usage: uyuni-cdk plan \[options\] <planDir>/);
  });

  it.each([
    [[], ['install']],
    [['--migration'], ['migrate', 'migrate-prepare']],
    [['--upgrade'], ['upgrade']],
    [['--proxy'], ['proxy']],
  ])('init %j in an empty folder writes a configuration and its schema beside it; synth there writes %j alone', (flags, plans) => {
    const cwd = tempDir();
    ok(bin, ['init', ...flags], { cwd });
    expect(fs.readdirSync(cwd).sort()).toEqual(['uyuni.schema.json', 'uyuni.yaml']);
    const text = fs.readFileSync(path.join(cwd, 'uyuni.yaml'), 'utf8');
    expect(/^# yaml-language-server: \$schema=(\S+)/.exec(text)![1]).toBe('uyuni.schema.json');
    expect(JSON.parse(fs.readFileSync(path.join(cwd, 'uyuni.schema.json'), 'utf8')).title).toBe('uyuni-cdk configuration (uyuni.yaml)');
    expect(text).not.toMatch(/cleanup-test-ok|npx|examples\/|\.\.\/|\/prefix\//);
    expect(ok(bin, ['synth'], { cwd }).stderr).toMatch(new RegExp(`^uyuni-cdk: wrote dist/${plans[0]}/ `));
    expect(fs.readdirSync(path.join(cwd, 'dist')).sort()).toEqual(plans);
  });

  it('synthesizes what the repository\'s sources synthesize, for the install and the migration flow', () => {
    const cwd = tempDir();
    fs.copyFileSync(path.join(ROOT, 'uyuni.yaml'), path.join(cwd, 'uyuni.yaml'));
    const r = ok(bin, ['synth'], { cwd });
    expect(r.stderr).toMatch(/^uyuni-cdk: wrote dist\/install\/ /);
    const migration = path.join(ROOT, 'examples', 'migration.yaml');
    ok(bin, ['synth', '-c', migration, '-o', 'migrate-out'], { cwd });
    for (const [file, out] of [[path.join(ROOT, 'uyuni.yaml'), 'dist'], [migration, 'migrate-out']]) {
      const expected = tempDir();
      synthesize(parseConfig(fs.readFileSync(file, 'utf8'), file), expected);
      expect(tree(path.join(cwd, out))).toEqual(tree(expected));
    }
  });

  describe('on a real terminal (a pty), against the API simulator: the confirmation of destructive changes', () => {
    let sim: Simulator;
    let plan: string;
    let env: NodeJS.ProcessEnv;
    const PROMPT = 'Enter a value:';
    const steps = (extra: boolean) => [{ name: 'namespace', objects: [namespace()] }, { name: 'server', objects: [service('uyuni'), ...(extra ? [service('extra')] : [])] }];
    /** Every object the run could write, with its resourceVersion: equal before and after means nothing was written. */
    const snapshot = () => Object.fromEntries([
      ...sim.list('v1', 'Namespace'), ...sim.list('v1', 'Service', NS), ...sim.list('v1', 'ConfigMap', NS), ...sim.list('v1', 'Secret', NS),
      ...sim.list('coordination.k8s.io/v1', 'Lease', NS),
    ].map((o) => [`${o.kind}/${o.metadata.name}`, o.metadata.resourceVersion]));
    const command = (...extra: string[]) => [bin, 'run', plan, '--kubeconfig', sim.kubeconfigPath, ...extra].map(sh).join(' ');

    beforeAll(async () => {
      sim = await startSimulator();
      env = { ...process.env, XDG_STATE_HOME: tempDir('uyuni-state-') };
      // installed with Service/extra, which the plan then no longer has: the run prunes it, a destructive change
      plan = writePlan(steps(true));
      expect((await cli('run', plan, { kubeconfig: sim.kubeconfigPath })).code).toBe(EXIT.ok);
      writePlan(steps(false), { dir: plan });
    });
    afterAll(() => sim?.stop());

    it.each([
      ['no', 'no\r'],
      ['Enter alone', '\r'],
    ])('lists the change, asks, and on %s stops: exit 1 as run --help says, nothing written', async (_what, keys) => {
      const before = snapshot();
      const r = await onTerminal(command(), PROMPT, keys, env);
      expect(r.text).toMatch(/destructive changes \(1\):\r?\n\s+delete\s+Service\/extra \(uyuni-test\)/);
      expect(r.text).toContain("Only 'yes' will be accepted to approve.");
      expect(r.text).toContain('destructive changes not approved: nothing was done');
      expect(r.code).toBe(EXIT.stepFailed);
      expect(snapshot()).toEqual(before);
    });

    it('on Ctrl-C at the question: ends as an interrupted run, exit 130, nothing written', async () => {
      const before = snapshot();
      const r = await onTerminal(command(), PROMPT, '\x03', env);
      expect(r.text).toContain(PROMPT);
      expect(r.text).toContain('uyuni-cdk: interrupted (SIGINT)');
      expect(r.code).toBe(EXIT.interrupted);
      expect(r.text).not.toContain('not approved');
      expect(snapshot()).toEqual(before);
    });

    it('asks also when its output goes into a pipe (| tee), the terminal on stdin; yes goes ahead', async () => {
      const log = path.join(tempDir(), 'run.log');
      const r = await onTerminal(`${command()} | tee ${sh(log)}`, PROMPT, 'yes\r', env);
      expect(r.text).toContain("Only 'yes' will be accepted to approve.");
      expect(r.code).toBe(EXIT.ok);
      expect(fs.readFileSync(log, 'utf8')).toMatch(/delete\s+Service\/extra \(uyuni-test\)/);
      expect(sim.get('v1', 'Service', 'extra', NS)).toBeUndefined();
    });

    it('on yes goes ahead: the change is made, exit 0', async () => {
      // Service/extra back, as the first install made it
      writePlan(steps(true), { dir: plan });
      expect((await cli('run', plan, { kubeconfig: sim.kubeconfigPath })).code).toBe(EXIT.ok);
      writePlan(steps(false), { dir: plan });
      const r = await onTerminal(command(), PROMPT, 'yes\r', env);
      expect(r.text).toContain('going ahead: answered yes');
      expect(r.code).toBe(EXIT.ok);
      expect(sim.get('v1', 'Service', 'extra', NS)).toBeUndefined();
    });
  });
});

describe('the library example of docs/library.md, against the tarball', () => {
  /** The doc's files: each ```ts block after a paragraph that starts with its name, `chart.ts`: … */
  const example = (() => {
    const doc = fs.readFileSync(path.join(ROOT, 'docs', 'library.md'), 'utf8');
    return Object.fromEntries([...doc.matchAll(/^`([\w.-]+\.ts)`:.*?\n```ts\n([\s\S]*?)```/gms)].map((m) => [m[1], m[2]]));
  })();

  const cdk8sVersion = (name: string) => JSON.parse(fs.readFileSync(path.join(ROOT, 'node_modules', name, 'package.json'), 'utf8')).version;
  let app: string;

  beforeAll(() => {
    app = path.join(work, 'app');
    fs.mkdirSync(app);
    for (const [name, text] of Object.entries(example)) fs.writeFileSync(path.join(app, name), text);
    fs.writeFileSync(path.join(app, 'package.json'), JSON.stringify({
      name: 'my-cluster', private: true,
      dependencies: { 'uyuni-cdk': `file:${packed.tarball}`, cdk8s: cdk8sVersion('cdk8s'), constructs: cdk8sVersion('constructs') },
    }, null, 2));
    ok(NPM, ['i', '--prefer-offline', '--ignore-scripts', ...QUIET], { cwd: app });
  }, 300_000);

  it('has the three files the doc promises', () => {
    expect(Object.keys(example).sort()).toEqual(['chart.test.ts', 'chart.ts', 'main.ts']);
  });

  const tsc = (compilerOptions: object, include: string[]) => {
    fs.writeFileSync(path.join(app, 'tsconfig.json'), JSON.stringify({
      compilerOptions: {
        strict: true, target: 'ES2022', noEmit: true, typeRoots: [path.join(ROOT, 'node_modules', '@types')], types: ['node', 'jest'], ...compilerOptions,
      },
      include,
    }));
    const r = run(process.execPath, [path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', app], { cwd: app });
    return { status: r.status, output: r.stdout + r.stderr };
  };
  const EXAMPLE = ['chart.ts', 'main.ts', 'chart.test.ts'];
  // cdk8s's template: CommonJS, node10 resolution (`types`), every .d.ts checked.
  const TEMPLATE = { module: 'commonjs', moduleResolution: 'node10', skipLibCheck: false };
  // Resolution through `exports` (docs/library.md says why skipLibCheck).
  const NODE16 = { module: 'node16', moduleResolution: 'node16', skipLibCheck: true };

  it('type-checks, strict, as cdk8s\'s template compiles it and with node16 resolution, its props typed', () => {
    expect(tsc(TEMPLATE, EXAMPLE)).toEqual({ status: 0, output: '' });
    // The example and a copy with one wrong value: that value is the one error.
    fs.writeFileSync(path.join(app, 'wrong.ts'), example['chart.ts'].replace("'LoadBalancer'", "'Public'"));
    const r = tsc(NODE16, [...EXAMPLE, 'wrong.ts']);
    fs.rmSync(path.join(app, 'wrong.ts'));
    expect(r.status).toBe(2);
    expect(r.output).toMatch(/^wrong\.ts\(\d+,\d+\): error TS2322: Type '"Public"' is not assignable to type '"ClusterIP" \| "LoadBalancer" \| "NodePort" \| undefined'\.\n$/);
  }, 120_000);

  it('runs its snapshot test: written once, then passing under --ci', () => {
    fs.writeFileSync(path.join(app, 'jest.config.js'), `module.exports = ${JSON.stringify({
      rootDir: app,
      testEnvironment: 'node',
      transform: { '^.+\\.ts$': [path.join(ROOT, 'node_modules', '@swc', 'jest'), { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, module: { type: 'commonjs' } }] },
    })};\n`);
    const jest = (ci: boolean) => run(process.execPath, [path.join(ROOT, 'node_modules', 'jest', 'bin', 'jest.js'), '--config', path.join(app, 'jest.config.js'), `--ci=${ci}`], { cwd: app });
    const first = jest(false);
    expect(first.stderr).toContain('1 snapshot written');
    expect(first.status).toBe(0);
    const second = jest(true);
    expect(second.stderr).toContain('1 passed');
    expect(second.status).toBe(0);
    const snapshot = fs.readFileSync(path.join(app, '__snapshots__', 'chart.test.ts.snap'), 'utf8');
    expect(snapshot).toContain('"name": "uyuni-proxy"');
  }, 120_000);

  it('synthesizes with the tarball exactly what it synthesizes with the repository\'s sources', () => {
    const synth = (dir: string) => ok(process.execPath, ['-e', `require(${JSON.stringify(path.join(ROOT, 'bin', 'register.js'))}); require('./main.ts')`], { cwd: dir });
    synth(app);
    // The same app, its `uyuni-cdk` the sources and its cdk8s and constructs the repository's.
    const fromSources = path.join(work, 'app-sources');
    fs.mkdirSync(path.join(fromSources, 'node_modules', 'uyuni-cdk'), { recursive: true });
    for (const name of Object.keys(example)) fs.copyFileSync(path.join(app, name), path.join(fromSources, name));
    fs.writeFileSync(path.join(fromSources, 'node_modules', 'uyuni-cdk', 'index.js'), `module.exports = require(${JSON.stringify(path.join(ROOT, 'src', 'index.ts'))});\n`);
    for (const name of ['cdk8s', 'constructs']) fs.symlinkSync(path.join(ROOT, 'node_modules', name), path.join(fromSources, 'node_modules', name));
    synth(fromSources);
    expect(filesUnder(path.join(app, 'dist'))).toEqual(['uyuni.k8s.yaml']);
    expect(fs.readFileSync(path.join(app, 'dist', 'uyuni.k8s.yaml'), 'utf8')).toBe(fs.readFileSync(path.join(fromSources, 'dist', 'uyuni.k8s.yaml'), 'utf8'));
    // Resolved from the tarball's copy, not from the repository.
    const resolved = ok(process.execPath, ['-p', "require.resolve('uyuni-cdk')"], { cwd: app }).stdout.trim();
    expect(resolved).toBe(path.join(fs.realpathSync(app), 'node_modules', 'uyuni-cdk', 'lib', 'src', 'index.js'));
  }, 120_000);
});
