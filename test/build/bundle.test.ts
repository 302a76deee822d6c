/**
 * The bundles (scripts/build.js) and the agent's single executable (scripts/build-agent.js),
 * built into a temporary directory so the repository's bundle/ is left alone; and the bin scripts,
 * which run those bundles and nothing else (bin/bundle.js), in the layouts they are used in.
 */
import { execFile, execFileSync, spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { buildProgram } from '../../src/cli/main';
import { parseConfig } from '../../src/config/load';
import { synthesize } from '../../src/synth';
import { AGENT_NODE_OPTIONS } from '../../src/systemd/defaults';
import { startPodsServer } from '../agent/harness/pods-server';
import { UYUNI_CDK } from '../helpers/entry';
import { tree } from '../helpers/synth';

const ROOT = path.join(__dirname, '..', '..');
const { ENTRIES } = require(path.join(ROOT, 'bin', 'bundle.js')) as { ENTRIES: Record<string, { source: string }> };
// bundle/ of a directory directly in the temp dir, as deep as the layouts below that copy it: a
// bundle finds the files beside its sources (package.json, the Jobs' scripts) by relative paths.
const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'uyuni-cdk-build-')), 'bundle');
afterAll(() => fs.rmSync(path.dirname(out), { recursive: true, force: true }));

const POD = `apiVersion: v1
kind: Pod
metadata: {name: web, namespace: demo}
spec:
  nodeName: node-1
  initContainers:
  - {name: prepare, image: "tools:2", command: [prepare.sh], args: ["--dir", "/srv/a b"]}
  containers:
  - name: svc
    image: "noop:1.0"
    command: [start.sh]
    args: ["--port", "80", "it's \\"quoted\\" $HOME"]
    env: [{name: GREETING, value: "hello world"}]
`;

/**
 * `agent cleanup --dry-run` of `argv` (an agent executable and its first arguments) with a
 * kubeconfig whose token comes from an exec plugin, which only the full Kubernetes client serves:
 * the pod list succeeds (so the bus, which is not there, is what fails) and the plugin ran.
 */
async function cleanupWithExecPlugin(argv: string[], env: NodeJS.ProcessEnv): Promise<{ stderr: string; pluginRuns: string }> {
  const api = await startPodsServer([{ metadata: { name: 'p', namespace: 'd' }, spec: { nodeName: 'node-1', containers: [{ name: 'c', image: 'x:1', command: ['/bin/true'] }] } }]);
  try {
    const stderr = await new Promise<string>((resolve) => {
      execFile(argv[0], [...argv.slice(1), 'agent', 'cleanup', '--dry-run', '--session', '--node', 'node-1', '--kubeconfig', api.execKubeconfig],
        { encoding: 'utf8', env: { ...env, DBUS_SESSION_BUS_ADDRESS: `unix:path=${path.join(out, 'no-bus')}` } }, (_e, _stdout, err) => resolve(err));
    });
    return { stderr, pluginRuns: fs.existsSync(api.execRuns) ? fs.readFileSync(api.execRuns, 'utf8') : '' };
  } finally {
    await api.close();
  }
}

/** What cleanupWithExecPlugin shows when the client was found and used. */
const LISTED_WITH_EXEC_PLUGIN = { stderr: expect.stringMatching(/^uyuni-cdk agent cleanup: cannot connect to the session bus: .*ENOENT.*; no systemd unit was removed\n$/), pluginRuns: 'run\n' };

/** Every file of a directory, by name, with its content. */
const files = (dir: string) => Object.fromEntries(fs.readdirSync(dir).sort().map((f) => [f, fs.readFileSync(path.join(dir, f), 'utf8')]));

describe('scripts/build.js', () => {
  beforeAll(() => {
    execFileSync(process.execPath, [path.join(ROOT, 'scripts', 'build.js'), '--outdir', out], { stdio: 'pipe' });
  }, 120_000);

  it('writes one bundle per command group, from the sources of each', () => {
    expect(fs.readdirSync(out).filter((f) => f.endsWith('.cjs')).sort()).toEqual(Object.keys(ENTRIES).map((n) => `${n}.cjs`).sort());
    const meta = JSON.parse(fs.readFileSync(path.join(out, 'meta.json'), 'utf8'));
    for (const [name, e] of Object.entries(ENTRIES)) expect(Object.keys(meta[name].inputs)).toContain(e.source);
  });

  /** A checkout's layout with `bundle` (or none) as its bundle/ and a src/ of its own: what the bin scripts see. */
  function checkout(bundle?: string): string {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'uyuni-cdk-checkout-'));
    fs.cpSync(path.join(ROOT, 'bin'), path.join(root, 'bin'), { recursive: true });
    fs.copyFileSync(path.join(ROOT, 'package.json'), path.join(root, 'package.json'));
    if (bundle) fs.cpSync(bundle, path.join(root, 'bundle'), { recursive: true });
    // Sources edited after the build, newer than every bundle: a command must not run them.
    fs.mkdirSync(path.join(root, 'src', 'cli'), { recursive: true });
    fs.writeFileSync(path.join(root, 'src', 'cli', 'main.ts'), 'export function main(): void { console.log(\'from the sources\'); }\n');
    fs.writeFileSync(path.join(root, 'src', 'main.ts'), 'export function start(): void { console.log(\'from the sources\'); }\n');
    return root;
  }
  const node = (root: string, script: string, args: string[], cwd = root) => spawnSync(process.execPath, [path.join(root, 'bin', script), ...args],
    { cwd, encoding: 'utf8', env: { PATH: process.env.PATH, HOME: root, XDG_CACHE_HOME: path.join(root, 'cache') } });

  it('runs the bundles, never the sources beside them, however much newer', () => {
    const root = checkout(out);
    try {
      const version = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')).version;
      expect(node(root, 'uyuni-cdk.js', ['--version'])).toMatchObject({ status: 0, stdout: `${version}\n` });
      expect(node(root, 'uyuni-cdk.js', ['agent', '--version'])).toMatchObject({ status: 0, stdout: `${version}\n` });
      // The cdk8s app: the synth bundle writes what the sources of this repository synthesize.
      const cwd = fs.mkdtempSync(path.join(root, 'project-'));
      fs.copyFileSync(path.join(ROOT, 'uyuni.yaml'), path.join(cwd, 'uyuni.yaml'));
      const synth = node(root, 'synth.js', [], cwd);
      expect([synth.status, synth.stdout]).toEqual([0, '']);
      expect(synth.stderr).toMatch(/^uyuni-cdk: wrote dist\/install\/ /m);
      const expected = fs.mkdtempSync(path.join(root, 'expected-'));
      synthesize(parseConfig(fs.readFileSync(path.join(ROOT, 'uyuni.yaml'), 'utf8')), expected);
      expect(tree(path.join(cwd, 'dist'))).toEqual(tree(expected));
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });

  it('says how to build when there is no bundle, and runs nothing else', () => {
    const root = checkout();
    try {
      for (const [script, args, bundle] of [['uyuni-cdk.js', ['plan', '--help'], 'cli'], ['uyuni-cdk.js', ['status', '--help'], 'status'], ['uyuni-cdk.js', ['agent', 'render', '--help'], 'agent'], ['synth.js', [], 'synth']] as const) {
        const r = node(root, script, [...args]);
        expect([r.status, r.stdout]).toEqual([1, '']);
        expect(r.stderr).toBe(`uyuni-cdk: bundle/${bundle}.cjs is missing: \`npm run build\` writes the bundles (\`npm run dev -- <args>\` runs the sources)\n`);
      }
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });

  it('loads neither the runtime nor the agent with the synth app or the CLI before a verb runs', () => {
    const meta = JSON.parse(fs.readFileSync(path.join(out, 'meta.json'), 'utf8'));
    /**
     * The inputs a bundle evaluates when it is loaded: its entry and what that imports or requires,
     * transitively; not what is behind an `import()` (evaluated only when reached).
     */
    const statically = (name: string): string[] => {
      const inputs = meta[name].inputs;
      const seen = new Set<string>();
      const visit = (file: string): void => {
        if (seen.has(file)) return;
        seen.add(file);
        for (const i of inputs[file].imports) if (!i.external && i.kind !== 'dynamic-import' && i.kind !== 'require-resolve') visit(i.path);
      };
      visit(ENTRIES[name].source);
      return [...seen];
    };
    const heavy = /src\/runtime\/|src\/agent\/|@kubernetes\/client-node|dbus-next/;
    expect(statically('synth').filter((i) => heavy.test(i))).toEqual([]);
    expect(statically('cli').filter((i) => heavy.test(i))).toEqual([]);
    // status's own bundle: what status runs, none of the other verbs' runtime, no synth, no
    // cdk8s (issue 36: status start-up)
    // (what esbuild kept of each input: it drops the client's API classes status does not use)
    const kept = Object.entries(Object.values(meta.status.outputs as Record<string, { inputs: Record<string, { bytesInOutput: number }> }>)[0].inputs).filter(([, v]) => v.bytesInOutput > 0).map(([i]) => i);
    expect(kept.filter((i) => /src\/runtime\/(verbs\/commands|apply\/run|decide\/plan-result|verbs\/destroy|decide\/plan)\.ts|src\/(plans|constructs|config)\/|cdk8s|client-node\/dist\/gen\/apis\/CoreV1Api/.test(i))).toEqual([]);
    expect(kept).toEqual(expect.arrayContaining(['src/runtime/verbs/status-command.ts', 'node_modules/@kubernetes/client-node/dist/config.js']));
    expect(statically('status')).toEqual(expect.arrayContaining(['src/runtime/verbs/status-command.ts', 'src/runtime/verbs/status.ts']));
    // (1.5 MB against the CLI's 3.3 MB: the CLI too keeps none of client-node's generated API
    // classes since src/runtime imports no value of it; status.cjs held 7.5 MB / 5 before that)
    expect(fs.statSync(path.join(out, 'status.cjs')).size).toBeLessThan(fs.statSync(path.join(out, 'cli.cjs')).size / 2);
    expect(kept.filter((i) => /client-node\/dist\/gen\/apis\/[A-Z]\w*Api\.js/.test(i))).toEqual([]);
    expect(statically('agent').filter((i) => /src\/runtime\/|@kubernetes\/client-node\/dist\/index/.test(i))).toEqual([]);
    // Not vacuous: the walk follows requires (the verbs' modules), and what the verbs need is in
    // the bundles, behind their import().
    expect(statically('cli')).toEqual(expect.arrayContaining(['src/cli/status.ts', 'node_modules/commander/esm.mjs']));
    expect(Object.keys(meta.cli.inputs)).toEqual(expect.arrayContaining(['src/runtime/verbs/commands.ts', 'node_modules/@kubernetes/client-node/dist/index.js']));
    // The agent's bundle holds what it uses of the client (KubeConfig under every request: src/kube
    // KubeClient), not the generated API classes; the whole client, which every agent loaded,
    // was 5.4 MB beside a 0.6 MB agent.cjs (issue 36)
    // (of each API module only esbuild's empty init wrapper is left, ~200 bytes; CoreV1Api alone is 0.3 MB)
    const agentInputs = Object.entries(Object.values(meta.agent.outputs as Record<string, { inputs: Record<string, { bytesInOutput: number }> }>)[0].inputs);
    expect(agentInputs.find(([i]) => i === 'node_modules/@kubernetes/client-node/dist/config.js')?.[1].bytesInOutput).toBeGreaterThan(0);
    expect(agentInputs.filter(([i]) => /client-node\/dist\/gen\/apis\/[A-Z]\w*Api\.js/.test(i)).reduce((sum, [, v]) => sum + v.bytesInOutput, 0)).toBeLessThan(20_000);
    expect(fs.statSync(path.join(out, 'agent.cjs')).size).toBeLessThan(2.5e6);
  });

  it('runs an installed package\'s bundles with a code cache that the next start takes', async () => {
    // An installed package's layout: bin/, bundle/ and package.json, no sources.
    const pkg = fs.mkdtempSync(path.join(os.tmpdir(), 'uyuni-cdk-installed-'));
    const cache = path.join(pkg, 'cache');
    try {
      fs.cpSync(path.join(ROOT, 'bin'), path.join(pkg, 'bin'), { recursive: true });
      fs.cpSync(out, path.join(pkg, 'bundle'), { recursive: true });
      fs.copyFileSync(path.join(ROOT, 'package.json'), path.join(pkg, 'package.json'));
      const cli = (...args: string[]) => spawnSync(process.execPath, [path.join(pkg, 'bin', 'uyuni-cdk.js'), ...args],
        { encoding: 'utf8', env: { PATH: process.env.PATH, HOME: pkg, XDG_CACHE_HOME: cache } });
      const caches = () => fs.readdirSync(path.join(cache, 'uyuni-cdk', 'code')).sort();
      const first = cli('status', path.join(pkg, 'no-such-plan'));
      expect([first.status, first.stderr]).toEqual([2, expect.stringMatching(/no-such-plan: no such plan directory/)]);
      expect(caches()).toEqual([expect.stringMatching(/^status\.cjs-status-[0-9a-f]{16}-[0-9a-f]{32}\.bin$/)]);
      const file = path.join(cache, 'uyuni-cdk', 'code', caches()[0]);
      const made = fs.readFileSync(file);
      // Taken, not refused: a refused cache (other V8 flags than at its making) would be written again.
      fs.utimesSync(file, 1000, 1000);
      expect(cli('status', path.join(pkg, 'no-such-plan')).status).toBe(2);
      expect([fs.statSync(file).mtimeMs, fs.readFileSync(file).equals(made)]).toEqual([1000 * 1000, true]);
      expect(cli('agent', 'render', '--help').status).toBe(0);
      expect(caches()).toEqual([expect.stringMatching(/^agent\.cjs-agent-render-/), expect.stringMatching(/^status\.cjs-status-/)]);
      // Mistyped verbs share one cache (each had its own: 26 typos were 31 MB).
      for (const typo of [['statsu'], ['stauts', 'dist/install'], ['agent', 'rendr']]) expect(cli(...typo).status).toBe(2);
      expect(caches()).toEqual([
        expect.stringMatching(/^agent\.cjs-agent-other-/), expect.stringMatching(/^agent\.cjs-agent-render-/),
        expect.stringMatching(/^cli\.cjs-other-/), expect.stringMatching(/^status\.cjs-status-/),
      ]);
      // The full client, for an exec plugin's token, is found beside the agent's bundle.
      expect(await cleanupWithExecPlugin([process.execPath, path.join(pkg, 'bin', 'uyuni-cdk.js')], { PATH: process.env.PATH, HOME: pkg, XDG_CACHE_HOME: cache }))
        .toEqual(LISTED_WITH_EXEC_PLUGIN);
    } finally {
      fs.rmSync(pkg, { recursive: true, force: true });
    }
  });

  it('keeps a code cache for each verb the CLI has, and for nothing else', () => {
    const { VERBS, AGENT_VERBS } = require(path.join(ROOT, 'bin', 'bundle.js')) as { VERBS: string[]; AGENT_VERBS: string[] };
    const program = buildProgram();
    expect([...VERBS].sort()).toEqual(program.commands.map((c) => c.name()).sort());
    expect([...AGENT_VERBS].sort()).toEqual(program.commands.find((c) => c.name() === 'agent')!.commands.map((c) => c.name()).sort());
  });

  it('builds the agent into one executable that renders the units the source CLI renders', async () => {
    const r = spawnSync(process.execPath, [path.join(ROOT, 'scripts', 'build-agent.js'), '--bundle-dir', out], { encoding: 'utf8' });
    // postject injects into this machine's Node binary; a build that cannot fails here, never skips
    expect({ status: r.status, stderr: r.status === 0 ? '' : r.stderr }).toEqual({ status: 0, stderr: '' });
    const exe = path.join(out, 'uyuni-cdk');
    const pod = path.join(out, 'pod.yaml');
    fs.writeFileSync(pod, POD);
    const version = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')).version;
    // No Node.js on the PATH: the executable carries its own.
    const env = { PATH: '/nonexistent', HOME: out };
    expect(execFileSync(exe, ['--version'], { encoding: 'utf8', env }).trim()).toBe(version);
    const sea = spawnSync(exe, ['agent', 'render', '-f', pod, '--out', path.join(out, 'sea'), '--kubeconfig', '/etc/uyuni/kubeconfig'], { encoding: 'utf8', env });
    expect(sea.stderr).toBe('');
    expect(sea.status).toBe(0);
    // under the agent unit's NODE_OPTIONS (its heap settings, src/systemd/defaults.ts), which the
    // executable reads as node does and refuses when it does not know one
    const unitEnv = spawnSync(exe, ['agent', 'render', '-f', pod, '--out', path.join(out, 'sea-unit'), '--kubeconfig', '/etc/uyuni/kubeconfig'], { encoding: 'utf8', env: { ...env, NODE_OPTIONS: AGENT_NODE_OPTIONS } });
    expect(unitEnv.status).toBe(0);
    expect(spawnSync(exe, ['--version'], { encoding: 'utf8', env: { ...env, NODE_OPTIONS: `${AGENT_NODE_OPTIONS} --no-such-flag` } }).stderr).toMatch(/--no-such-flag is not allowed in NODE_OPTIONS/);
    const src = spawnSync(process.execPath, [UYUNI_CDK, 'agent', 'render', '-f', pod, '--out', path.join(out, 'src'), '--kubeconfig', '/etc/uyuni/kubeconfig'], { encoding: 'utf8' });
    expect(src.status).toBe(0);
    expect(Object.keys(files(path.join(out, 'sea')))).toEqual(['demo-web-prepare.service', 'demo-web-svc.service']);
    expect(files(path.join(out, 'sea'))).toEqual(files(path.join(out, 'src')));
    // A bad file: the same message and exit code as the CLI.
    const bad = spawnSync(exe, ['agent', 'render', '-f', path.join(out, 'missing.yaml'), '--out', path.join(out, 'x')], { encoding: 'utf8', env });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/^uyuni-cdk agent render: .*missing\.yaml: /);
    // The executable carries the full client inside (it has no bundle beside it).
    expect(await cleanupWithExecPlugin([exe], { PATH: '/usr/bin:/bin', HOME: out })).toEqual(LISTED_WITH_EXEC_PLUGIN);
  }, 180_000);

  /**
   * scripts/build.js's build() into `dir` with one more entry, `source` (the repository's entries
   * are fixed: the extra one is added in the child process that builds): its exit code and stderr.
   */
  const buildWith = (dir: string, source: string) => spawnSync(process.execPath, ['-e', `
    require(${JSON.stringify(path.join(ROOT, 'bin', 'bundle.js'))}).ENTRIES.extra = { source: ${JSON.stringify(path.relative(ROOT, source))} };
    require(${JSON.stringify(path.join(ROOT, 'scripts', 'build.js'))}).build(${JSON.stringify(dir)})
      .then(() => process.exit(0), (e) => { process.stderr.write(e.message); process.exit(1); });`], { encoding: 'utf8', timeout: 120_000 });
  /** The bundles in `dir`: name and inode (a rename over a file gives it another). */
  const inodes = (dir: string) => Object.fromEntries(fs.readdirSync(dir).sort().map((f) => [f, fs.statSync(path.join(dir, f)).ino]));

  it('fails a bundle that still holds an import() (a builtin: vm.Script cannot import it), naming it, and leaves the bundles there as they were', () => {
    const dir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'uyuni-cdk-build-check-')), 'bundle');
    fs.cpSync(out, dir, { recursive: true });
    const before = inodes(dir);
    const source = path.join(path.dirname(dir), 'ask.ts');
    fs.writeFileSync(source, "export async function main(): Promise<unknown> {\n  return (await import('readline')).createInterface;\n}\n");
    const r = buildWith(dir, source);
    expect(r.stderr).toMatch(/^an import\(\) left in a bundle, which bin\/code-cache\.js cannot run \(vm\.Script has no dynamic-import callback\): \S*ask\.ts: import\('readline'\); use a static import or require\(\)$/);
    expect(r.status).toBe(1);
    // nothing half-built, nothing removed: the command in use keeps its bundles
    expect(inodes(dir)).toEqual(before);
    fs.rmSync(path.dirname(dir), { recursive: true, force: true });
  }, 120_000);

  it('swaps the bundles in by renaming each whole one over the old (never a moment without them), and a failed build keeps the old ones', () => {
    const dir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'uyuni-cdk-build-swap-')), 'bundle');
    fs.cpSync(out, dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'gone.cjs'), '// the bundle of an entry there is no more\n');
    const before = inodes(dir);
    const broken = path.join(path.dirname(dir), 'broken.ts');
    fs.writeFileSync(broken, 'export const x = ;\n');
    expect(buildWith(dir, broken).status).toBe(1);
    expect(inodes(dir)).toEqual(before);
    const fine = path.join(path.dirname(dir), 'fine.ts');
    fs.writeFileSync(fine, 'export const main = (): number => 42;\n');
    expect(buildWith(dir, fine).status).toBe(0);
    const after = inodes(dir);
    // the new entry's bundle in, the one of no entry gone, nothing temporary left; the rest as it was
    expect(Object.keys(after)).toEqual([...Object.keys(before).filter((f) => f !== 'gone.cjs'), 'extra.cjs'].sort());
    for (const f of ['agent.cjs', 'cli.cjs', 'synth.cjs', 'meta.json']) expect(after[f]).not.toBe(before[f]);
    fs.rmSync(path.dirname(dir), { recursive: true, force: true });
  }, 120_000);
});
