import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { parse } from 'yaml';
import { parseConfig } from '../src/config/load';
import { outputOf } from '../src/main';
import { synthesize } from '../src/synth';
import { SYNTH_APP, UYUNI_CDK } from './helpers/entry';
import { ROOT, synthYaml, tempDir, tree } from './helpers/synth';

/** The cdk8s app from the sources (test/helpers/entry.ts), as a process and as cdk8s.yaml's `app`. */
const SYNTH = SYNTH_APP.join(' ');


function runSynth(cwd: string, env: Record<string, string> = {}) {
  return spawnSync(process.execPath, SYNTH_APP, { cwd, env: { ...process.env, ...env, CDK8S_OUTDIR: '' }, encoding: 'utf8' });
}

/** A project directory with a dist/ that already holds an older plan and a plan of another config. */
function projectWithDist(): string {
  const cwd = tempDir();
  fs.mkdirSync(path.join(cwd, 'dist', 'install'), { recursive: true });
  fs.writeFileSync(path.join(cwd, 'dist', 'install', 'uyuni.plan'), '{"old": true}\n');
  fs.mkdirSync(path.join(cwd, 'dist', 'proxy'), { recursive: true });
  fs.writeFileSync(path.join(cwd, 'dist', 'proxy', 'uyuni.plan'), '{"other": true}\n');
  return cwd;
}

describe('the synth app', () => {
  it('exits 2 on a bad configuration, names the field, and leaves dist/ exactly as it was', () => {
    const cwd = projectWithDist();
    fs.writeFileSync(path.join(cwd, 'bad.yaml'), 'fqdn: uyuni.example.com\nimages:\n  pullPolicy: Sometimes\n');
    const before = tree(path.join(cwd, 'dist'));
    const r = runSynth(cwd, { UYUNI_CONFIG: 'bad.yaml' });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('bad.yaml: invalid configuration');
    expect(r.stderr).toContain('images.pullPolicy: must be one of "Always", "IfNotPresent", "Never"');
    expect(r.stderr).toContain('dist/ is unchanged');
    expect(tree(path.join(cwd, 'dist'))).toEqual(before);
  });

  it('exits 2 naming the pod when two node pods would share a systemd unit', () => {
    const cwd = projectWithDist();
    fs.writeFileSync(path.join(cwd, 'uyuni.yaml'), [
      'fqdn: uyuni.example.com',
      'nodeServices:',
      '  pods:',
      '    - {name: a-b, namespace: x, nodeName: n1, containers: [{name: c, image: "c:1", command: [/bin/true]}]}',
      '    - {name: b, namespace: x-a, nodeName: n1, containers: [{name: c, image: "c:1", command: [/bin/true]}]}',
    ].join('\n'));
    const before = tree(path.join(cwd, 'dist'));
    const r = runSynth(cwd);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('nodeServices.pods[1]: its unit x-a-b-c.service is also the unit of nodeServices.pods[0] (x/a-b)');
    expect(tree(path.join(cwd, 'dist'))).toEqual(before);
  });

  it('exits 2 when the configuration file does not exist, saying so in words', () => {
    const cwd = projectWithDist();
    const r = runSynth(cwd, { UYUNI_CONFIG: 'missing.yaml' });
    expect(r.status).toBe(2);
    expect(r.stderr).toBe(`config file ${path.join(cwd, 'missing.yaml')}: not found\nuyuni-cdk: nothing written; dist/ is unchanged\n`);
  });

  it('exits 2, reading nothing, on a file over 1 MiB or one that is not a regular file', () => {
    const cwd = projectWithDist();
    fs.writeFileSync(path.join(cwd, 'big.yaml'), `fqdn: uyuni.example.com\n#${'x'.repeat(1024 * 1024)}\n`);
    const before = tree(path.join(cwd, 'dist'));
    const big = runSynth(cwd, { UYUNI_CONFIG: 'big.yaml' });
    expect(big.status).toBe(2);
    expect(big.stderr).toContain('big.yaml: invalid configuration\n  - is 1048602 bytes: a configuration may have at most 1048576 bytes (1 MiB)');
    for (const special of ['/dev/zero', cwd]) {
      const r = runSynth(cwd, { UYUNI_CONFIG: special });
      expect(r.status).toBe(2);
      expect(r.stderr).toContain(`${special}: invalid configuration\n  - cannot be read: not a regular file`);
    }
    expect(tree(path.join(cwd, 'dist'))).toEqual(before);
  });

  it('replaces the plans it writes and keeps the other plans in dist/', () => {
    const cwd = projectWithDist();
    fs.writeFileSync(path.join(cwd, 'uyuni.yaml'), 'fqdn: uyuni.example.org\n');
    const r = runSynth(cwd);
    expect(r.status).toBe(0);
    const files = fs.readdirSync(path.join(cwd, 'dist', 'install'));
    expect(r.stderr).toBe(`uyuni-cdk: wrote dist/install/ (${files.length} files) from uyuni.yaml\n`);
    expect(files).toContain('0000-namespace.k8s.yaml');
    expect(JSON.parse(fs.readFileSync(path.join(cwd, 'dist', 'install', 'uyuni.plan'), 'utf8')).name).toBe('install');
    expect(fs.readFileSync(path.join(cwd, 'dist', 'proxy', 'uyuni.plan'), 'utf8')).toBe('{"other": true}\n');
    expect(fs.readdirSync(path.join(cwd, 'dist')).sort()).toEqual(['install', 'proxy']);
  });

  it('keeps dist/ untouched through the cdk8s CLI too, which exits non-zero', () => {
    const cwd = projectWithDist();
    fs.writeFileSync(path.join(cwd, 'cdk8s.yaml'), `language: typescript\napp: node ${SYNTH}\noutput: .cdk8s.out\n`);
    fs.writeFileSync(path.join(cwd, 'uyuni.yaml'), 'fqdn: not a domain\n');
    const before = tree(path.join(cwd, 'dist'));
    const r = spawnSync(path.join(ROOT, 'node_modules', '.bin', 'cdk8s'), ['synth', '--no-check-upgrade'], { cwd, encoding: 'utf8', env: { ...process.env, CDK8S_OUTDIR: '' } });
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain('fqdn: must be a fully qualified domain name');
    expect(tree(path.join(cwd, 'dist'))).toEqual(before);
  });

  it('never loads the runtime, the agent or their dependencies', () => {
    const probe = `
      require(${JSON.stringify(path.join(ROOT, 'bin', 'register.js'))});
      const { parseConfig } = require(${JSON.stringify(path.join(ROOT, 'src', 'config', 'load.ts'))});
      const { synthesize } = require(${JSON.stringify(path.join(ROOT, 'src', 'synth.ts'))});
      const fs = require('fs');
      synthesize(parseConfig(fs.readFileSync(${JSON.stringify(path.join(ROOT, 'uyuni.yaml'))}, 'utf8')), ${JSON.stringify(tempDir())});
      console.log(JSON.stringify(Object.keys(require.cache)));`;
    const r = spawnSync(process.execPath, ['-e', probe], { encoding: 'utf8' });
    expect(r.stderr).toBe('');
    const loaded: string[] = JSON.parse(r.stdout);
    expect(loaded.some((f) => f.includes('/src/plans/'))).toBe(true);
    const forbidden = loaded.filter((f) => /node_modules\/(@kubernetes\/client-node|dbus-next)\/|\/src\/(runtime|agent|cli)\//.test(f));
    expect(forbidden).toEqual([]);
  });
});

/** A project directory with the repository's cdk8s.yaml (its `output`), running our synth app. */
function cdk8sProject(): string {
  const cwd = projectWithDist();
  const { output } = parse(fs.readFileSync(path.join(ROOT, 'cdk8s.yaml'), 'utf8'));
  fs.writeFileSync(path.join(cwd, 'cdk8s.yaml'), `language: typescript\napp: node ${SYNTH}\noutput: ${output}\n`);
  fs.writeFileSync(path.join(cwd, 'proxy.yaml'), fs.readFileSync(path.join(ROOT, 'examples', 'proxy.yaml')));
  return cwd;
}

function cdk8s(cwd: string, args: string[], env: Record<string, string> = {}) {
  return spawnSync(path.join(ROOT, 'node_modules', '.bin', 'cdk8s'), ['synth', '--no-check-upgrade', ...args], {
    cwd, encoding: 'utf8', env: { ...process.env, CDK8S_OUTDIR: '', UYUNI_DIST: '', ...env },
  });
}

describe('the output directory', () => {
  it('is -o of the cdk8s CLI: the plans go there and dist/ stays byte for byte as it was', () => {
    const cwd = cdk8sProject();
    const before = tree(path.join(cwd, 'dist'));
    const out = path.join(tempDir(), 'x');
    const r = cdk8s(cwd, ['-o', out], { UYUNI_CONFIG: 'proxy.yaml' });
    expect(r.status).toBe(0);
    expect(r.stderr).toBe(`uyuni-cdk: wrote ${out}/proxy/ (${fs.readdirSync(path.join(out, 'proxy')).length} files) from proxy.yaml\n`);
    expect(tree(path.join(cwd, 'dist'))).toEqual(before);
    expect(tree(out)).toEqual(tree(synthYaml(fs.readFileSync(path.join(cwd, 'proxy.yaml'), 'utf8')).root));
    // The CLI lists what it finds in -o: the plan's step files, nothing staged elsewhere.
    expect(r.stdout).toContain(`${out}/proxy/0000-namespace.k8s.yaml`);
    expect(fs.readdirSync(path.dirname(out))).toEqual(['x']);
  });

  it('is dist/ without -o, staged in the CLI\'s configured output, which keeps a copy for its listing', () => {
    const cwd = cdk8sProject();
    const r = cdk8s(cwd, [], { UYUNI_CONFIG: 'proxy.yaml' });
    expect(r.status).toBe(0);
    expect(r.stderr).toBe(`uyuni-cdk: wrote dist/proxy/ (${fs.readdirSync(path.join(cwd, 'dist', 'proxy')).length} files) from proxy.yaml\n`);
    const { output } = parse(fs.readFileSync(path.join(cwd, 'cdk8s.yaml'), 'utf8'));
    expect(tree(path.join(cwd, 'dist', 'proxy'))).toEqual(tree(path.join(cwd, output, 'proxy')));
    expect(fs.readFileSync(path.join(cwd, 'dist', 'install', 'uyuni.plan'), 'utf8')).toBe('{"old": true}\n');
  });

  it('is told from the default by comparing CDK8S_OUTDIR with cdk8s.yaml\'s output', () => {
    const cwd = cdk8sProject();
    const at = (p: string) => path.join(cwd, p);
    expect(outputOf({}, cwd)).toEqual({ outdir: at('dist') });
    expect(outputOf({ UYUNI_DIST: 'out' }, cwd)).toEqual({ outdir: at('out') });
    expect(outputOf({ CDK8S_OUTDIR: '.cdk8s.out' }, cwd)).toEqual({ outdir: at('dist'), cliOutdir: at('.cdk8s.out') });
    expect(outputOf({ CDK8S_OUTDIR: at('.cdk8s.out'), UYUNI_DIST: 'out' }, cwd)).toEqual({ outdir: at('out'), cliOutdir: at('.cdk8s.out') });
    expect(outputOf({ CDK8S_OUTDIR: 'elsewhere', UYUNI_DIST: 'out' }, cwd)).toEqual({ outdir: at('elsewhere') });
    // Without cdk8s.yaml (or its `output`) the CLI's own default is dist: that is the output then.
    fs.rmSync(at('cdk8s.yaml'));
    expect(outputOf({ CDK8S_OUTDIR: 'dist' }, cwd)).toEqual({ outdir: at('dist') });
  });
});

describe('uyuni-cdk synth', () => {
  const CLI = UYUNI_CDK;
  const cli = (cwd: string, args: string[], env: Record<string, string> = {}) =>
    spawnSync(process.execPath, [CLI, ...args], { cwd, encoding: 'utf8', env: { ...process.env, UYUNI_CONFIG: '', UYUNI_DIST: '', ...env } });

  it('writes the plans of -c into -o, keeping the other plans there, as the cdk8s app does', () => {
    const cwd = cdk8sProject();
    const before = tree(path.join(cwd, 'dist'));
    const r = cli(cwd, ['synth', '-c', 'proxy.yaml', '-o', 'out']);
    expect(r.status).toBe(0);
    expect(r.stderr).toMatch(/^uyuni-cdk: wrote out\/proxy\/ \(\d+ files\) from proxy.yaml\n$/);
    expect(tree(path.join(cwd, 'out'))).toEqual(tree(synthYaml(fs.readFileSync(path.join(cwd, 'proxy.yaml'), 'utf8')).root));
    expect(tree(path.join(cwd, 'dist'))).toEqual(before);
    const again = cli(cwd, ['synth', '-o', 'out'], { UYUNI_CONFIG: path.join(ROOT, 'uyuni.yaml') });
    expect(again.status).toBe(0);
    const planDirs = synthesize(parseConfig(fs.readFileSync(path.join(ROOT, 'uyuni.yaml'), 'utf8')), tempDir());
    expect(fs.readdirSync(path.join(cwd, 'out')).sort()).toEqual([...planDirs, 'proxy'].sort());
  });

  it('defaults to uyuni.yaml and dist/, and exits 2 naming the field on a bad configuration', () => {
    const cwd = cdk8sProject();
    fs.writeFileSync(path.join(cwd, 'uyuni.yaml'), 'fqdn: uyuni.example.org\n');
    expect(cli(cwd, ['synth']).status).toBe(0);
    expect(JSON.parse(fs.readFileSync(path.join(cwd, 'dist', 'install', 'uyuni.plan'), 'utf8')).name).toBe('install');
    fs.writeFileSync(path.join(cwd, 'uyuni.yaml'), 'fqdn: uyuni.example.org\ntimezone: 3\n');
    const before = tree(path.join(cwd, 'dist'));
    const r = cli(cwd, ['synth']);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('timezone: must be a string');
    expect(r.stderr).toContain('dist/ is unchanged');
    expect(tree(path.join(cwd, 'dist'))).toEqual(before);
  });

  it('prints the version of package.json with --version and -V', () => {
    const { version } = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
    for (const flag of ['--version', '-V']) {
      const r = cli(ROOT, [flag]);
      expect([r.status, r.stdout]).toEqual([0, `${version}\n`]);
    }
  });
});

describe('the committed dist/', () => {
  it('is what synth writes from the committed configurations (uyuni.yaml and examples/)', () => {
    const staging = tempDir();
    const configs = [path.join(ROOT, 'uyuni.yaml')];
    const examples = path.join(ROOT, 'examples');
    if (fs.existsSync(examples)) {
      configs.push(...fs.readdirSync(examples).filter((f) => f.endsWith('.yaml')).sort().map((f) => path.join(examples, f)));
    }
    const written = new Map<string, string>();
    for (const file of configs) {
      const dir = tempDir();
      for (const d of synthesize(parseConfig(fs.readFileSync(file, 'utf8'), file), dir)) {
        expect({ dir: d, from: written.get(d) }).toEqual({ dir: d, from: undefined }); // one config per plan dir
        written.set(d, file);
        fs.cpSync(path.join(dir, d), path.join(staging, d), { recursive: true });
      }
    }
    // A difference here means dist/ is stale: run `npx cdk8s synth` for each config and commit dist/.
    expect(tree(path.join(ROOT, 'dist'))).toEqual(tree(staging));
  });
});
