/**
 * `uyuni-cdk init` writes a starting configuration that synth turns into that flow's plans alone
 * (no test pods, no words that hold only inside the repository), and the package's JSON Schema
 * beside it, which its modeline names; it never overwrites a file without --force.
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { EXIT } from '../../src/plan/exit-codes';
import { tempDir } from '../helpers/synth';
import { BIN } from '../runtime/e2e/harness';

const ROOT = path.join(__dirname, '..', '..');
const init = (cwd: string, ...args: string[]) => spawnSync(process.execPath, [BIN, 'init', ...args], { cwd, encoding: 'utf8' });

describe('uyuni-cdk init', () => {
  it.each([
    [[], ['install'], 'uyuni.yaml'],
    [['--migration'], ['migrate', 'migrate-prepare'], 'examples/migration.yaml'],
    [['--upgrade'], ['upgrade'], 'examples/upgrade.yaml'],
    [['--proxy'], ['proxy'], 'examples/proxy.yaml'],
  ])('%j writes a configuration and its schema beside it, which synth turns into %j alone, commented as %s is', (flags, plans, source) => {
    const cwd = tempDir();
    const r = init(cwd, ...flags);
    expect(r.status).toBe(0);
    expect(r.stderr).toBe(`uyuni-cdk: wrote uyuni.yaml (${flags.length ? flags[0].slice(2) : 'install'}) and, for editors, uyuni.schema.json; edit it (docs/configuration.md), then: uyuni-cdk synth -c uyuni.yaml\n`);
    expect(fs.readdirSync(cwd).sort()).toEqual(['uyuni.schema.json', 'uyuni.yaml']);
    const text = fs.readFileSync(path.join(cwd, 'uyuni.yaml'), 'utf8');
    // the schema by a path that holds wherever the package is: the file beside it, the package's own
    expect(text.split('\n')[0]).toBe('# yaml-language-server: $schema=uyuni.schema.json');
    expect(fs.readFileSync(path.join(cwd, 'uyuni.schema.json'), 'utf8')).toBe(fs.readFileSync(path.join(ROOT, 'uyuni.schema.json'), 'utf8'));
    // no test fixture, nothing that holds only inside the repository
    expect(text).not.toMatch(/nodeServices|cleanup-test-ok|noop-service|npx|cdk8s|examples\/|\.\.\//);
    expect(text.match(/^#.*uyuni-cdk synth/m)).not.toBeNull();
    // the rest of the shipped file's comments and settings, as they are
    const shipped = fs.readFileSync(path.join(ROOT, source), 'utf8').split('\n').slice(1);
    const written = text.split('\n').slice(1);
    if (source === 'uyuni.yaml') expect(shipped.slice(0, shipped.findIndex((l) => l.startsWith('# Pods that run as systemd services')))).toEqual(written.slice(0, -1));
    else expect(written).toEqual(shipped);
    expect(text.match(/^#/gm)!.length).toBeGreaterThan(2);
    const synth = spawnSync(process.execPath, [BIN, 'synth'], { cwd, encoding: 'utf8' });
    expect(synth.status).toBe(0);
    expect(fs.readdirSync(path.join(cwd, 'dist')).sort()).toEqual(plans);
  });

  it('replaces an older schema of its own, and leaves another file of that name alone (writing nothing) without --force', () => {
    const cwd = tempDir();
    fs.writeFileSync(path.join(cwd, 'uyuni.schema.json'), JSON.stringify({ title: 'uyuni-cdk configuration (uyuni.yaml)', properties: {} }));
    expect(init(cwd, '-o', 'a.yaml').status).toBe(0);
    expect(fs.readFileSync(path.join(cwd, 'uyuni.schema.json'), 'utf8')).toBe(fs.readFileSync(path.join(ROOT, 'uyuni.schema.json'), 'utf8'));
    const other = tempDir();
    fs.writeFileSync(path.join(other, 'uyuni.schema.json'), '{"title": "mine"}');
    const r = init(other);
    expect(r.status).toBe(EXIT.badInput);
    expect(r.stderr).toBe('uyuni-cdk: init: uyuni.schema.json exists and is not this package\'s schema; nothing written (--force overwrites it, -o writes elsewhere)\n');
    expect(fs.readdirSync(other)).toEqual(['uyuni.schema.json']);
    expect(init(other, '--force').status).toBe(0);
    expect(fs.readdirSync(other).sort()).toEqual(['uyuni.schema.json', 'uyuni.yaml']);
  });

  it('never overwrites a file without --force, and writes nothing then', () => {
    const cwd = tempDir();
    fs.writeFileSync(path.join(cwd, 'uyuni.yaml'), 'mine\n');
    const r = init(cwd);
    expect(r.status).toBe(EXIT.badInput);
    expect(r.stderr).toBe('uyuni-cdk: init: uyuni.yaml exists; nothing written (--force overwrites it, -o writes another file)\n');
    expect(fs.readFileSync(path.join(cwd, 'uyuni.yaml'), 'utf8')).toBe('mine\n');
    expect(init(cwd, '--force').status).toBe(0);
    expect(fs.readFileSync(path.join(cwd, 'uyuni.yaml'), 'utf8')).not.toBe('mine\n');
  });

  it('prints it with -o -, and refuses two flows at once', () => {
    const cwd = tempDir();
    const r = init(cwd, '--proxy', '-o', '-');
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('plans: [proxy]');
    expect(r.stderr).toMatch(/^uyuni-cdk: init: its first line names uyuni.schema.json beside the file, for editors: init -o FILE writes it there/);
    expect(fs.readdirSync(cwd)).toEqual([]);
    const both = init(cwd, '--proxy', '--upgrade');
    expect(both.status).toBe(EXIT.badInput);
    expect(both.stderr).toBe('uyuni-cdk: init: --upgrade and --proxy exclude each other: choose one\n');
  });
});
