/**
 * `uyuni-cdk init` writes a starting configuration that synth accepts as it is, names the
 * package's JSON Schema in its modeline, and never overwrites a file without --force.
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { parseConfig } from '../../src/config/load';
import { EXIT } from '../../src/plan/exit-codes';
import { tempDir } from '../helpers/synth';
import { BIN } from '../runtime/e2e/harness';

const ROOT = path.join(__dirname, '..', '..');
const init = (cwd: string, ...args: string[]) => spawnSync(process.execPath, [BIN, 'init', ...args], { cwd, encoding: 'utf8' });

describe('uyuni-cdk init', () => {
  it.each([
    [[], 'install', 'uyuni.yaml'],
    [['--migration'], 'migrate', 'examples/migration.yaml'],
    [['--upgrade'], 'upgrade', 'examples/upgrade.yaml'],
    [['--proxy'], 'proxy', 'examples/proxy.yaml'],
  ])('%j writes a configuration synth accepts for %s, commented as %s is', (flags, plan, source) => {
    const cwd = tempDir();
    const r = init(cwd, ...flags);
    expect(r.status).toBe(0);
    const text = fs.readFileSync(path.join(cwd, 'uyuni.yaml'), 'utf8');
    expect(text.split('\n')[0]).toBe(`# yaml-language-server: $schema=${path.join(ROOT, 'uyuni.schema.json')}`);
    expect(text.split('\n').slice(1)).toEqual(fs.readFileSync(path.join(ROOT, source), 'utf8').split('\n').slice(1));
    expect(text.match(/^#/gm)!.length).toBeGreaterThan(2);
    const config = parseConfig(text);
    expect(JSON.stringify(config)).toContain(plan === 'proxy' ? '"proxy"' : '"fqdn"');
    expect(r.stderr).toBe(`uyuni-cdk: wrote uyuni.yaml (${flags.length ? flags[0].slice(2) : 'install'}); edit it (docs/configuration.md), then: uyuni-cdk synth -c uyuni.yaml\n`);
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
    expect(fs.readdirSync(cwd)).toEqual([]);
    const both = init(cwd, '--proxy', '--upgrade');
    expect(both.status).toBe(EXIT.badInput);
    expect(both.stderr).toBe('uyuni-cdk: init: --upgrade and --proxy exclude each other: choose one\n');
  });
});
