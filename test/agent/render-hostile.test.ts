/**
 * `uyuni-cdk agent render` under hostile input (issue "Reliability under hostile input", item 5):
 * a link planted in --out is refused and its target never written; a pod of the wrong shape is
 * refused naming the field, exit 2, without a stack trace.
 */
import { spawn } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { stringify } from 'yaml';

import { UYUNI_CDK } from '../helpers/entry';

const BIN = UYUNI_CDK;

function cli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { env: process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

let dir: string;
beforeEach(() => { dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-hostile-')); });
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const pod = (container: Record<string, unknown>, spec: Record<string, unknown> = {}) => ({
  apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'ns' }, spec: { containers: [container], ...spec },
});
const good = { name: 'c', image: 'i:1', command: ['/bin/x', '--flag'] };
const UNIT = 'ns-p-c.service';

async function render(p: unknown, out = path.join(dir, 'out')) {
  fs.writeFileSync(path.join(dir, 'pod.yaml'), stringify(p));
  return cli(['agent', 'render', '-f', path.join(dir, 'pod.yaml'), '--out', out, '--kubeconfig', '/k', '--package-dir', '/pk']);
}

describe('agent render --out: never writes through a link', () => {
  it('refuses a symbolic link planted at a unit name, and leaves its target alone', async () => {
    const out = path.join(dir, 'out');
    fs.mkdirSync(out);
    const target = path.join(dir, 'victim');
    fs.writeFileSync(target, 'precious\n');
    fs.symlinkSync(target, path.join(out, UNIT));
    const r = await render(pod(good));
    const victim = fs.readFileSync(target, 'utf8');
    expect(victim).toBe('precious\n');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${path.join(out, UNIT)} is a symbolic link: refused`);
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(fs.lstatSync(path.join(out, UNIT)).isSymbolicLink()).toBe(true);
  });

  it('refuses a dangling symbolic link (it would create the file elsewhere)', async () => {
    const out = path.join(dir, 'out');
    fs.mkdirSync(out);
    const target = path.join(dir, 'created-elsewhere');
    fs.symlinkSync(target, path.join(out, UNIT));
    const r = await render(pod(good));
    expect(fs.existsSync(target)).toBe(false);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('is a symbolic link: refused');
  });

  it('refuses a hard link to another file', async () => {
    const out = path.join(dir, 'out');
    fs.mkdirSync(out);
    const target = path.join(dir, 'victim');
    fs.writeFileSync(target, 'precious\n');
    fs.linkSync(target, path.join(out, UNIT));
    const r = await render(pod(good));
    const victim = fs.readFileSync(target, 'utf8');
    expect(victim).toBe('precious\n');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('has other hard links: refused');
  });

  it('still writes fresh files, and rewrites its own regular files', async () => {
    const first = await render(pod(good));
    const again = await render(pod({ ...good, args: ['more'] }));
    expect(first.code).toBe(0);
    expect(again.code).toBe(0);
    expect(fs.readFileSync(path.join(dir, 'out', UNIT), 'utf8')).toContain('ExecStart=/bin/x --flag more');
  });
});

describe('agent render: the pod shape, field by field (exit 2, no stack trace)', () => {
  it.each([
    ['command given as a string', pod({ ...good, command: '/bin/sh -c reboot' }), /pod ns\/p: spec\.containers\[0\]\.command must be a list of strings, not the string "\/bin\/sh -c reboot"/],
    ['args given as a string', pod({ ...good, args: 'abc' }), /spec\.containers\[0\]\.args must be a list of strings, not the string "abc"/],
    ['a number in command', pod({ ...good, command: ['/bin/x', 5] }), /spec\.containers\[0\]\.command\[1\] must be a string, not a number/],
    ['containers as an object', { ...pod(good), spec: { containers: { name: 'c' } } }, /spec\.containers must be a list of containers, not an object/],
    ['containers as a string', { ...pod(good), spec: { containers: 'abc' } }, /spec\.containers must be a list of containers, not the string "abc"/],
    ['initContainers as a string', pod(good, { initContainers: 'x' }), /spec\.initContainers must be a list of containers, not the string "x"/],
    ['a container that is a string', { ...pod(good), spec: { containers: ['c'] } }, /spec\.containers\[0\] must be an object \(a container\), not the string "c"/],
    ['env as a map', pod({ ...good, env: { A: '1' } }), /spec\.containers\[0\]\.env must be a list of \{name, value\}, not an object/],
    ['an env value that is a number', pod({ ...good, env: [{ name: 'A', value: 1 }] }), /spec\.containers\[0\]\.env\[0\] \(A\)\.value must be a string, not a number/],
    ['an env entry without a name', pod({ ...good, env: [{ value: 'x' }] }), /spec\.containers\[0\]\.env\[0\]\.name must be a non-empty string/],
    ['a container without a name', pod({ image: 'i:1', command: ['/x'] }), /spec\.containers\[0\]\.name must be a non-empty string/],
    ['spec as a list', { ...pod(good), spec: [] }, /pod ns\/p: spec must be an object, not a list/],
    ['a List item that is null', { apiVersion: 'v1', kind: 'List', items: [null] }, /a pod must be an object, not null/],
  ])('refuses %s', async (_what, p, message) => {
    const r = await render(p);
    const written = fs.existsSync(path.join(dir, 'out')) ? fs.readdirSync(path.join(dir, 'out')) : [];
    expect(r.stderr).toMatch(message);
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(r.code).toBe(2);
    expect(written).toEqual([]);
  });
});
