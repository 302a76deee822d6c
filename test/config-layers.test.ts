/**
 * Layered configuration (issue 28): `-c` given several times (later wins, mappings merge, lists
 * are replaced) and `--set key.path=value`, for `uyuni-cdk synth` and the cdk8s app
 * ($UYUNI_CONFIG with ":" between files, $UYUNI_SET); every problem in one round, naming the
 * layer its value came from; nothing written on a bad configuration, no stack trace.
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { ConfigSource, parseKeyPath, splitAssignments } from '../src/config/layers';
import { ConfigError, configSources, loadConfig } from '../src/config/load';
import { closest, editDistance } from '../src/config/suggest';
import { SYNTH_APP, UYUNI_CDK } from './helpers/entry';
import { tempDir, tree } from './helpers/synth';

/** A directory holding the given files. */
function files(contents: Record<string, string>): string {
  const dir = tempDir();
  for (const [name, text] of Object.entries(contents)) fs.writeFileSync(path.join(dir, name), text);
  return dir;
}

/** The problems `sources` are refused with (fails the test when they are accepted). */
function refused(sources: ConfigSource[]): { file: string; problems: readonly string[] } {
  try {
    loadConfig(sources);
  } catch (e) {
    if (e instanceof ConfigError) return { file: e.file, problems: e.problems };
    throw e;
  }
  throw new Error('the configuration was accepted');
}

const BASE = [
  'fqdn: uyuni.example.com',
  'images:',
  '  tag: "2026.08"',
  '  pullPolicy: Always',
  'volumes:',
  '  storageClass: fast',
  '  overrides:',
  '    var-spacewalk: {size: 500Gi}',
  'plans: [install]',
  'nodeServices:',
  '  pods:',
  '    - {name: a, namespace: x, nodeName: n1, containers: [{name: c, image: "c:1", command: [/bin/true]}]}',
  '    - {name: b, namespace: x, nodeName: n1, containers: [{name: c, image: "c:1", command: [/bin/true]}]}',
  '',
].join('\n');

describe('layers', () => {
  it('merge mappings deeply, later files winning, and replace lists whole', () => {
    const dir = files({
      'base.yaml': BASE,
      'prod.yaml': 'images:\n  tag: "2026.10"\nvolumes:\n  overrides:\n    var-pgsql18: {size: 1Ti}\nplans: [install, node-services]\nnodeServices:\n  pods:\n    - {name: z, nodeName: n2, containers: [{name: c, image: "c:2"}]}\n',
    });
    const c = loadConfig([{ file: path.join(dir, 'base.yaml') }, { file: path.join(dir, 'prod.yaml') }]);
    expect(c.images.tag).toBe('2026.10');
    expect(c.images.pullPolicy).toBe('Always'); // kept from base: mappings merge
    expect(c.volumes.storageClass).toBe('fast');
    expect(c.volumes.overrides).toEqual({ 'var-spacewalk': { size: '500Gi' }, 'var-pgsql18': { size: '1Ti' } });
    expect(c.plans).toEqual(['install', 'node-services']);
    expect(c.nodeServices!.pods.map((p) => p.name)).toEqual(['z']); // lists are replaced
  });

  it('take --set after the files: values read as YAML, keys with escaped dots, list items, null removing', () => {
    const dir = files({ 'base.yaml': BASE });
    const c = loadConfig([{ file: path.join(dir, 'base.yaml') },
      { set: 'images.tag="2026.10",timeouts.defaultStepSeconds=900' },
      { set: 'services.web.annotations.metallb\\.universe\\.tf/allow-shared-ip=uyuni' },
      { set: 'nodeServices.pods[1].nodeName=n2' },
      { set: 'plans=[install, node-services]' },
      { set: 'debugJava=true' },
      { set: 'volumes.storageClass=null' },
    ]);
    expect(c.images.tag).toBe('2026.10');
    expect(c.timeouts.defaultStepSeconds).toBe(900);
    expect(c.services.web.annotations).toEqual({ 'metallb.universe.tf/allow-shared-ip': 'uyuni' });
    expect(c.nodeServices!.pods.map((p) => `${p.name}@${p.nodeName}`)).toEqual(['a@n1', 'b@n2']);
    expect(c.plans).toEqual(['install', 'node-services']);
    expect(c.debugJava).toBe(true);
    expect(c.volumes.storageClass).toBeUndefined();
    expect(refused([{ file: path.join(dir, 'base.yaml') }, { set: 'server.email=' }]).problems).toEqual([
      'server.email: must be an e-mail address (--set server.email=)']);
  });

  it('name the file and line, or the --set, each bad value came from, with the quoting hint of each', () => {
    const dir = files({ 'base.yaml': BASE, 'prod.yaml': 'images:\n  tag: 2026.10\nvolumes:\n  storageclass: slow\n' });
    const r = refused([{ file: path.join(dir, 'base.yaml') }, { file: path.join(dir, 'prod.yaml') },
      { set: 'images.pullPolicy=always' }, { set: 'images.components.server.tag=5.1' }, { set: 'volumes.overrides.var-pgsql2.size=1Gi' }, { set: 'fdqn=x.example.com' }]);
    expect(r.file).toBe(`${path.join(dir, 'base.yaml')} + ${path.join(dir, 'prod.yaml')} + --set`);
    expect(r.problems).toEqual([
      `images.tag: must be a string: YAML reads 2026.10 as the number 2026.1; quote it: tag: "2026.10" (${path.join(dir, 'prod.yaml')}, line 2, column 3)`,
      'images.pullPolicy: must be one of "Always", "IfNotPresent", "Never"; did you mean "Always"? (--set images.pullPolicy=always)',
      'images.components.server.tag: must be a string: YAML reads 5.1 as a number; quote it: --set \'images.components.server.tag="5.1"\' (--set images.components.server.tag=5.1)',
      expect.stringMatching(/^volumes\.overrides\.var-pgsql2: no such claim; did you mean var-pgsql\? \(known: .*\) \(--set volumes\.overrides\.var-pgsql2\.size=1Gi\)$/),
      `volumes.storageclass: unknown setting; did you mean volumes.storageClass? (${path.join(dir, 'prod.yaml')}, line 4, column 3)`,
      'fdqn: unknown setting; did you mean fqdn? (--set fdqn=x.example.com)',
    ]);
  });

  it('name the layer of a cross check\'s field, and list the YAML problems of every file at once', () => {
    const dir = files({ 'base.yaml': BASE, 'a.yaml': 'fqdn: [\n', 'b.yaml': '- x\n' });
    expect(refused([{ file: path.join(dir, 'base.yaml') }, { set: 'ingress.type=none,ingress.className=x' }]).problems).toEqual([
      'services.salt.type: must be LoadBalancer or NodePort with ingress.type none (only Traefik routes salt 4505/4506 to a ClusterIP Service; clients cannot reach it otherwise)',
      'ingress.className: there is no Ingress with ingress.type none (--set ingress.className=x)',
    ]);
    const r = refused([{ file: path.join(dir, 'a.yaml') }, { file: path.join(dir, 'b.yaml') }, { file: path.join(dir, 'missing.yaml') }]);
    expect(r.problems).toEqual([
      expect.stringMatching(new RegExp(`^${path.join(dir, 'a.yaml')}: not valid YAML: .* at line \\d+, column \\d+$`)),
      `${path.join(dir, 'b.yaml')}: the document must be a mapping of settings (see docs/configuration.md)`,
      `config file ${path.join(dir, 'missing.yaml')}: not found`,
    ]);
  });

  it('refuse a --set that is no key.path=value, or reaches past the end of a list, naming it', () => {
    const dir = files({ 'base.yaml': BASE });
    const base = { file: path.join(dir, 'base.yaml') };
    expect(refused([base, { set: 'images.tag' }]).problems).toEqual([
      '--set images.tag: must be key.path=value (a comma separates assignments; write \\, for a comma in a value)']);
    expect(refused([base, { set: 'images..tag=x' }]).problems).toEqual(['--set images..tag=x: the key path images..tag has an empty key']);
    expect(refused([base, { set: 'nodeServices.pods[x].name=a' }]).problems).toEqual([
      '--set nodeServices.pods[x].name=a: the key path nodeServices.pods[x].name has an index that is not a whole number in [ ]']);
    expect(refused([base, { set: 'nodeServices.pods[5].nodeName=n3' }]).problems).toEqual([
      '--set nodeServices.pods[5].nodeName=n3: nodeServices.pods[5] is past the end of the list (nodeServices.pods has 2 items; [2] adds one)']);
  });

  it('come from $UYUNI_CONFIG (":" between files) and $UYUNI_SET for the cdk8s app', () => {
    expect(configSources({ UYUNI_CONFIG: 'a.yaml:b.yaml', UYUNI_SET: 'images.tag="1"' }, '/p')).toEqual([
      { file: '/p/a.yaml' }, { file: '/p/b.yaml' }, { set: 'images.tag="1"', via: 'UYUNI_SET' }]);
    expect(configSources({}, '/p')).toEqual([{ file: '/p/uyuni.yaml' }]);
  });
});

describe('the pieces', () => {
  it('split assignments at commas outside quotes and brackets, and key paths at dots', () => {
    expect(splitAssignments('a=1,b=[x,y],c="p,q",d=e\\,f')).toEqual(['a=1', 'b=[x,y]', 'c="p,q"', 'd=e,f']);
    expect(parseKeyPath('a.b[0].c\\.d[2]')).toEqual(['a', 'b', 0, 'c.d', 2]);
  });

  it('measure edits with swaps and without case, and guess only near misses', () => {
    expect(editDistance('fdqn', 'fqdn')).toBe(1);
    expect(editDistance('storageclass', 'storageClass')).toBe(0);
    expect(editDistance('kitten', 'sitting')).toBe(3);
    expect(closest('fdqn', ['namespace', 'fqdn', 'tls'])).toBe('fqdn');
    expect(closest('colour', ['registry', 'tag', 'pullPolicy', 'pullSecret', 'components'])).toBeUndefined();
    expect(closest('x', ['tls'])).toBeUndefined();
  });
});

/** Everything a typo-ridden configuration gets wrong, in one file. */
const BAD = [
  'fdqn: uyuni.example.com',
  'images:',
  '  tag: 2026.10',
  'volumes:',
  '  storageclass: fast',
  '  overrides:',
  '    var-pgsql18: {size: 50 GB}',
  '    var-pgsql2: {size: 1Gi}',
  'nodeServices:',
  '  pods:',
  '    - {name: a-b, namespace: x, nodeName: n1, containers: [{name: c, image: "c:1", command: [/bin/true]}]}',
  '    - {name: b, namespace: x-a, nodeName: n1, containers: [{name: c, image: "c:1", command: [/bin/true]}]}',
  '',
].join('\n');

const EVERY_PROBLEM = [
  'fqdn: is required',
  'images.tag: must be a string: YAML reads 2026.10 as the number 2026.1; quote it: tag: "2026.10"',
  'volumes.overrides.var-pgsql18.size: must be a Kubernetes quantity such as 10Gi, 300Mi or 1Ti',
  'volumes.overrides.var-pgsql2: no such claim; did you mean var-pgsql?',
  'volumes.storageclass: unknown setting; did you mean volumes.storageClass?',
  'fdqn: unknown setting; did you mean fqdn?',
  'nodeServices.pods[1]: its unit x-a-b-c.service is also the unit of nodeServices.pods[0] (x/a-b); rename one of them',
];

/** A project with a dist/ holding a plan already. */
function project(config: Record<string, string>): string {
  const cwd = files(config);
  fs.mkdirSync(path.join(cwd, 'dist', 'install'), { recursive: true });
  fs.writeFileSync(path.join(cwd, 'dist', 'install', 'uyuni.plan'), '{"old": true}\n');
  return cwd;
}

describe.each([
  ['uyuni-cdk synth', (cwd: string, files: string[], sets: string[]) => spawnSync(process.execPath,
    [UYUNI_CDK, 'synth', ...files.flatMap((f) => ['-c', f]), ...sets.flatMap((s) => ['--set', s])],
    { cwd, encoding: 'utf8', env: { ...process.env, UYUNI_CONFIG: '', UYUNI_SET: '', UYUNI_DIST: '' } })],
  ['the cdk8s app', (cwd: string, files: string[], sets: string[]) => spawnSync(process.execPath, SYNTH_APP,
    { cwd, encoding: 'utf8', env: { ...process.env, UYUNI_CONFIG: files.join(':'), UYUNI_SET: sets.join(','), UYUNI_DIST: '', CDK8S_OUTDIR: '' } })],
])('%s', (_entry, synth) => {
  it('lists every problem of the configuration in one round, exits 2, writes nothing, prints no stack', () => {
    const cwd = project({ 'uyuni.yaml': BAD });
    const before = tree(path.join(cwd, 'dist'));
    const r = synth(cwd, ['uyuni.yaml'], []);
    expect(r.status).toBe(2);
    const listed = r.stderr.split('\n').filter((l) => l.startsWith('  - ')).map((l) => l.slice(4));
    const at = / \((?:\S*\/)?uyuni\.yaml, (line \d+, column \d+)\)$/;
    expect(listed.map((l) => l.replace(/ \(known: .*\)$/, '').replace(at, ''))).toEqual(EVERY_PROBLEM);
    // one file, too: where each setting is in it (the file, line and column), as with several
    expect(Object.fromEntries(listed.filter((l) => at.test(l)).map((l) => [l.split(':')[0], at.exec(l)![1]]))).toEqual({
      'images.tag': 'line 3, column 3', 'volumes.overrides.var-pgsql18.size': 'line 7, column 19', 'volumes.overrides.var-pgsql2': 'line 8, column 5',
      'volumes.storageclass': 'line 5, column 3', fdqn: 'line 1, column 1',
    });
    expect(r.stderr).toContain('nothing written; dist/ is unchanged');
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(tree(path.join(cwd, 'dist'))).toEqual(before);
  });

  it('layers files and --set, naming where a bad value came from, and writes the merged plans', () => {
    const cwd = project({ 'base.yaml': 'fqdn: uyuni.example.com\n', 'prod.yaml': 'namespace: uyuni-prod\nimages: {tag: 2026.10}\n' });
    const before = tree(path.join(cwd, 'dist'));
    const bad = synth(cwd, ['base.yaml', 'prod.yaml'], ['images.pullpolicy=Always']);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/base\.yaml \+ \S*prod\.yaml \+ (--set|UYUNI_SET): invalid configuration\n/);
    expect(bad.stderr).toMatch(/ {2}- images\.tag: must be a string: YAML reads 2026\.10 as the number 2026\.1; quote it: tag: "2026\.10" \(\S*prod\.yaml, line 2, column 10\)\n/);
    expect(bad.stderr).toMatch(/ {2}- images\.pullpolicy: unknown setting; did you mean images\.pullPolicy\? \((--set|UYUNI_SET) images\.pullpolicy=Always\)\n/);
    expect(tree(path.join(cwd, 'dist'))).toEqual(before);

    const good = synth(cwd, ['base.yaml', 'prod.yaml'], ['images.tag="2026.10"']);
    expect(good.stderr).toMatch(/^uyuni-cdk: wrote dist\/install\/ \(\d+ files\) from base\.yaml \+ prod\.yaml \+ (--set|UYUNI_SET)\n$/);
    expect(good.status).toBe(0);
    const ns = fs.readFileSync(path.join(cwd, 'dist', 'install', '0000-namespace.k8s.yaml'), 'utf8');
    expect(ns).toMatch(/name: uyuni-prod\n/);
    const steps = fs.readdirSync(path.join(cwd, 'dist', 'install')).map((f) => fs.readFileSync(path.join(cwd, 'dist', 'install', f), 'utf8')).join('\n');
    expect(steps).toContain('image: registry.opensuse.org/uyuni/server:2026.10\n');
  });
});

describe('layers from the environment', () => {
  it('uyuni-cdk synth takes $UYUNI_CONFIG\'s files and, without --set, $UYUNI_SET', () => {
    const cwd = project({ 'base.yaml': 'fqdn: uyuni.example.com\n', 'prod.yaml': 'namespace: uyuni-prod\n' });
    const env = { ...process.env, UYUNI_CONFIG: 'base.yaml:prod.yaml', UYUNI_SET: 'namespace=uyuni-env', UYUNI_DIST: '' };
    const run = (args: string[]) => spawnSync(process.execPath, [UYUNI_CDK, 'synth', ...args], { cwd, encoding: 'utf8', env });
    const ns = () => fs.readFileSync(path.join(cwd, 'dist', 'install', '0000-namespace.k8s.yaml'), 'utf8');
    expect(run([]).status).toBe(0);
    expect(ns()).toMatch(/name: uyuni-env\n/);
    const flag = run(['--set', 'namespace=uyuni-flag']);
    expect(flag.stderr).toMatch(/from base\.yaml \+ prod\.yaml \+ --set\n$/);
    expect(ns()).toMatch(/name: uyuni-flag\n/);
  });

  it('through the cdk8s CLI: our list once, then only the CLI\'s own trace of the exit code', () => {
    const cwd = project({ 'base.yaml': 'fqdn: uyuni.example.com\n', 'prod.yaml': 'images:\n  tag: 2026.10\n' });
    fs.writeFileSync(path.join(cwd, 'cdk8s.yaml'), `language: typescript\napp: node ${SYNTH_APP.join(' ')}\noutput: .cdk8s.out\n`);
    const before = tree(path.join(cwd, 'dist'));
    const r = spawnSync(path.join(__dirname, '..', 'node_modules', '.bin', 'cdk8s'), ['synth', '--no-check-upgrade'], {
      cwd, encoding: 'utf8', env: { ...process.env, UYUNI_CONFIG: 'base.yaml:prod.yaml', UYUNI_SET: 'images.pullpolicy=Always', UYUNI_DIST: '', CDK8S_OUTDIR: '' },
    });
    expect(r.status).not.toBe(0);
    const problems = r.stderr.split('\n').filter((l) => l.startsWith('  - '));
    expect(problems).toEqual([
      expect.stringMatching(/^ {2}- images\.tag: must be a string: YAML reads 2026\.10 as the number 2026\.1; quote it: tag: "2026\.10" \(\S*prod\.yaml, line 2, column 3\)$/),
      '  - images.pullpolicy: unknown setting; did you mean images.pullPolicy? (UYUNI_SET images.pullpolicy=Always)',
    ]);
    // the app's exit 2, as the cdk8s CLI reports every failure of an app: with a stack of its own code
    expect(r.stderr).toMatch(/returned a non-zero exit code 2\n/);
    const frames = r.stderr.split('\n').filter((l) => /^\s+at /.test(l));
    expect(frames.filter((l) => !/node_modules\/cdk8s-cli\/|node:/.test(l))).toEqual([]);
    expect(tree(path.join(cwd, 'dist'))).toEqual(before);
  }, 30_000);
});
