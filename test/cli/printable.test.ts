/**
 * What the CLI echoes from its input is safe on a terminal (issue 33 item 6): an escape sequence
 * in a malformed kubeconfig is shown as escapes, not sent to the terminal; a 100 kB `--set` value
 * is cut in the error, not printed whole.
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { printable } from '../../src/plan/printable';
import { tempDir } from '../helpers/synth';
import { BIN, ROOT } from '../runtime/e2e/harness';

const uyuni = (args: string[], cwd: string) => spawnSync(process.execPath, [BIN, ...args], { cwd, encoding: 'utf8', env: { ...process.env, KUBECONFIG: '' } });

describe('printable', () => {
  it('shows control characters as escapes and cuts long runs, keeping newlines, tabs and words', () => {
    expect(printable('a\x1b[31mred\x1b]0;title\x07\x9b b\n\tc')).toBe('a\\x1b[31mred\\x1b]0;title\\x07\\x9b b\n\tc');
    expect(printable(`k=${'x'.repeat(1000)} next`, 10)).toBe('k=xxxxxxxx…(992 more characters) next');
    expect(printable('an ordinary message: uyuni.example.com (exit 2)')).toBe('an ordinary message: uyuni.example.com (exit 2)');
  });
});

describe('the CLI', () => {
  it('a kubeconfig whose context name carries escape sequences: the error shows them escaped', () => {
    const dir = tempDir('uyuni-printable-');
    fs.writeFileSync(path.join(dir, 'kc'), 'apiVersion: v1\nkind: Config\ncurrent-context: "\\e[31mred\\e]0;title\\a"\ncontexts: []\nclusters: []\nusers: []\n');
    const r = uyuni(['status', path.join(ROOT, 'dist', 'install'), '--kubeconfig', 'kc'], dir);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('current-context "\\x1b[31mred\\x1b]0;title\\x07" is not among its contexts');
    expect(r.stderr).not.toMatch(/[\x1b\x07]/);
  });

  it('a 100 kB --set value: the error names it, cut', () => {
    const dir = tempDir('uyuni-printable-');
    fs.copyFileSync(path.join(ROOT, 'uyuni.yaml'), path.join(dir, 'uyuni.yaml'));
    const r = uyuni(['synth', '--set', `fqdn=${'x'.repeat(100_000)}`, '-o', 'out'], dir);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/- fqdn: must be a fully qualified domain name[^\n]*\(--set fqdn=x{195}…\(99806 more characters\)/);
    expect(r.stderr.length).toBeLessThan(2000);
  });
});
