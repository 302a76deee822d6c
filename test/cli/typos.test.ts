/**
 * Typo suggestions that know the domain (issue 15 item 6): other tools' words for our verbs
 * suggest our verb; anything else keeps commander's edit-distance suggestion. Usage errors are
 * bad input (exit 2).
 */
import { spawnSync } from 'child_process';
import { EXIT } from '../../src/plan/exit-codes';
import { BIN } from '../runtime/e2e/harness';

const uyuni = (...args: string[]) => spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8' });

describe('an unknown command', () => {
  it.each([
    ['deploy', 'run'], ['apply', 'run'], ['install', 'run'], ['up', 'run'],
    ['delete', 'destroy'], ['down', 'destroy'], ['uninstall', 'destroy'],
    ['diff', 'plan'],
  ])('%s: suggests %s, with an example, exit 2', (word, verb) => {
    const r = uyuni(word, 'dist/install', '--kubeconfig', 'x');
    expect(r.status).toBe(EXIT.badInput);
    expect(r.stderr.split('\n').slice(0, 2)).toEqual([`error: unknown command '${word}'`, `(Did you mean ${verb}? e.g. uyuni-cdk ${verb} dist/install)`]);
  });

  it.each([['destory', 'destroy'], ['statsu', 'status'], ['rn', 'run']])("%s: keeps commander's suggestion (%s)", (word, verb) => {
    const r = uyuni(word);
    expect(r.status).toBe(EXIT.badInput);
    expect(r.stderr.split('\n').slice(0, 2)).toEqual([`error: unknown command '${word}'`, `(Did you mean ${verb}?)`]);
  });

  it('suggests nothing for a word like none of ours: one line and where the help is, as kubectl', () => {
    const r = uyuni('frobnicate');
    expect(r.status).toBe(EXIT.badInput);
    expect(r.stderr).toBe("error: unknown command 'frobnicate'\nSee 'uyuni-cdk --help' for usage.\n");
  });

  it('is not confused by a property name of plain objects', () => {
    expect(uyuni('constructor').stderr.split('\n')[0]).toBe("error: unknown command 'constructor'");
  });
});

describe('a usage error of a verb', () => {
  it.each([
    [['run', 'dist/install', '--contxt', 'x'], "error: unknown option '--contxt'\n(Did you mean --context?)\nSee 'uyuni-cdk run --help' for usage.\n"],
    [['plan'], "error: missing required argument 'planDir'\nSee 'uyuni-cdk plan --help' for usage.\n"],
    [['agent', 'cleanup'], "error: required option '--node <name>' not specified\nSee 'uyuni-cdk agent cleanup --help' for usage.\n"],
  ])('%j: its line, the suggestion, where its own help is, and not the whole help', (args, stderr) => {
    const r = uyuni(...args);
    expect(r.status).toBe(EXIT.badInput);
    expect(r.stderr).toBe(stderr);
  });

  it.each([['--detailed-exitcode'], ['--exit-code']])('is 1 under plan %s, where 2 means "changes"', (flag) => {
    for (const args of [['plan', 'dist/install', flag, '--contxt', 'x'], ['plan', flag, '-o', 'yml', 'dist/install']]) {
      const r = uyuni(...args);
      expect({ args, status: r.status }).toEqual({ args, status: EXIT.stepFailed });
      expect(r.stderr).toMatch(/^error: /);
    }
  });
});
