/**
 * `uyuni-cdk support` on the simulator: the bundle holds the plan, the objects, the events, the
 * pods' descriptions and logs, the run records, the nodes and the server's supportconfig archive
 * (through a real WebSocket exec), and none of the secret values planted everywhere it reads.
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { attemptsNewestFirst } from '../../../src/runtime/run-dirs';
import { startSimulator, Simulator } from '../../sim';
import { supportCommand } from '../../../src/runtime/commands';
import { EXIT } from '../../../src/plan/exit-codes';
import { cli, tmpDir, until } from './harness';
import { deployment, job, namespace, NS, writePlan } from '../plans';

let sim: Simulator;
afterEach(async () => {
  await sim?.stop();
});

const SECRETS = ['planted-db-password-4711', 'planted-admin-secret-0815', 'planted-kube-token-42'];
/** What the fake supportconfig "archive" holds: bytes, not text. */
const ARCHIVE = Buffer.from([0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00, 1, 2, 3, 255]);

function captured() {
  const text = { out: '', err: '' };
  return { text, io: { out: (t: string) => { text.out += t; }, err: (t: string) => { text.err += t; }, isTTY: false } };
}

/** Every file of an unpacked bundle, by path below its top directory. */
function unpack(file: string): Record<string, Buffer> {
  const dir = tmpDir();
  const r = spawnSync('tar', ['-xzf', file, '-C', dir], { encoding: 'utf8' });
  expect(r.status).toBe(0);
  const [top] = fs.readdirSync(dir);
  const out: Record<string, Buffer> = {};
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out[path.relative(path.join(dir, top), p)] = fs.readFileSync(p);
    }
  };
  walk(path.join(dir, top));
  return out;
}

describe('uyuni-cdk support', () => {
  it('bundles plan, objects, events, pods, logs, runs, nodes and supportconfig, and no secret value', async () => {
    sim = await startSimulator({
      jobs: { 'db-migrate': { logs: ['connecting', `password=${SECRETS[0]}`, 'done'] } },
      deployments: { uyuni: { logs: ['setup: starting', `admin ${SECRETS[1]} set`] } },
      exec: (call) => (call.command.join(' ').includes('supportconfig') ? { stdout: ARCHIVE, stderr: 'Gathering system information\n' } : { exitCode: 127 }),
    });
    const server = deployment('uyuni');
    // an env value a pod spec carries in clear: named as secret, and named harmlessly
    (server.spec.template.spec.containers[0] as any).env = [{ name: 'DB_PASSWORD', value: SECRETS[0] }, { name: 'MOTD', value: SECRETS[1] }];
    const dir = writePlan([
      { name: 'namespace', objects: [namespace()] },
      { name: 'migrate', objects: [job('db-migrate')] },
      { name: 'server', objects: [server], requires: [{ kind: 'Secret', name: 'db-credentials', namespace: NS, keys: ['password'], ifMissing: 'fail' }] },
    ], { name: 'migrate' });
    const kubeconfig = path.join(tmpDir(), 'kubeconfig');
    const kc = fs.readFileSync(sim.kubeconfigPath, 'utf8').replace('user: {}', `user: { token: ${SECRETS[2]} }`);
    fs.writeFileSync(kubeconfig, kc);
    process.env.XDG_STATE_HOME = tmpDir();
    const b64 = (s: string) => Buffer.from(s).toString('base64');
    sim.put({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
    sim.put({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'db-credentials', namespace: NS }, data: { username: b64('spacewalk'), password: b64(SECRETS[0]) } });
    // the default run directory: <runs>/<series>/<attempt>/ (src/runtime/run-dirs.ts)
    expect((await cli('run', dir, { kubeconfig, runDir: undefined })).code).toBe(0);
    const [attempt] = attemptsNewestFirst(path.join(process.env.XDG_STATE_HOME, 'uyuni-cdk', NS, 'migrate'));
    const runPath = `${path.basename(path.dirname(attempt))}/${path.basename(attempt)}`;
    // another Secret of the namespace (not the plan's), an Event naming a secret
    sim.put({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'admin-credentials', namespace: NS, labels: { 'app.kubernetes.io/part-of': 'uyuni' } }, stringData: { password: SECRETS[1] } });
    sim.put({ apiVersion: 'v1', kind: 'Event', metadata: { name: 'e1', namespace: NS }, involvedObject: { kind: 'Pod', name: 'x', namespace: NS }, reason: 'Leaked', message: `bad: ${SECRETS[1]}`, type: 'Warning', lastTimestamp: '2026-12-01T00:00:00Z' });
    fs.writeFileSync(path.join(attempt, 'note.txt'), `token ${SECRETS[2]}\n`);
    await until('the server pod runs', () => sim.list('v1', 'Pod', NS).some((p) => p.metadata.name.startsWith('uyuni-') && p.status?.phase === 'Running'));

    const file = path.join(tmpDir(), 'bundle.tar.gz');
    const c = captured();
    expect(await supportCommand(dir, { kubeconfig, file }, c.io)).toBe(EXIT.ok);
    expect(c.text.err).toMatch(/^support: credentials to scrub/);
    expect(c.text.err).toMatch(/support: pods \d+\/\d+: /);
    expect(c.text.err).toMatch(/\nuyuni-cdk: wrote .*bundle\.tar\.gz \(\d+ files, \d+ KiB\)/);

    const files = unpack(file);
    const names = Object.keys(files);
    expect(names).toEqual(expect.arrayContaining(['plan/uyuni.plan', 'events.yaml', 'events.txt', 'cluster/version.txt', 'cluster/nodes.yaml', 'notes.txt', 'server/supportconfig.txz', 'server/supportconfig.log']));
    expect(names.some((n) => /^objects\/Deployment\.apps_v1\.yaml$/.test(n))).toBe(true);
    expect(names.filter((n) => /^pods\/db-migrate-\w+\/(describe\.txt|main\.log)$/.test(n))).toHaveLength(2);
    expect(names.some((n) => n.startsWith(`runs/${runPath}/migrate/db-migrate-`) && n.endsWith('.main.log'))).toBe(true);
    expect(names).toContain(`runs/${runPath}/events.jsonl`);
    expect(files['runs/index.txt'].toString('utf8')).toBe(`${path.dirname(runPath)}: 1 attempt, finished\n  ${path.basename(runPath)}: done\n`);
    expect(files['server/supportconfig.txz'].equals(ARCHIVE)).toBe(true);
    expect(sim.execs.map((e) => [e.pod.startsWith('uyuni-'), e.container])).toEqual([[true, 'main']]);
    const all = names.filter((n) => n !== 'server/supportconfig.txz').map((n) => files[n].toString('utf8')).join('\n');
    // the logs and objects are there, scrubbed
    expect(all).toContain('connecting');
    expect(all).toContain('setup: starting');
    expect(all).toContain('Leaked');
    expect(all).toContain('<redacted>');
    expect(all).toMatch(/password: <redacted> \(\d+ bytes\)/);
    for (const s of SECRETS) {
      expect({ s, found: all.includes(s) }).toEqual({ s, found: false });
      expect({ s, found: all.includes(b64(s)) }).toEqual({ s, found: false });
    }
  });

  it('says what it could not collect, and leaves supportconfig out with --no-exec', async () => {
    sim = await startSimulator({ exec: () => ({ stdout: ARCHIVE }) });
    const dir = writePlan([{ name: 'namespace', objects: [namespace()] }, { name: 'server', objects: [deployment('uyuni')] }], { name: 'install' });
    process.env.XDG_STATE_HOME = tmpDir();
    const file = path.join(tmpDir(), 'b.tar.gz');
    const c = captured();
    expect(await supportCommand(dir, { kubeconfig: sim.kubeconfigPath, file, exec: false }, c.io)).toBe(EXIT.ok);
    const files = unpack(file);
    expect(files['server/supportconfig.txz']).toBeUndefined();
    expect(sim.execs).toEqual([]);
    const notes = files['notes.txt'].toString('utf8');
    expect(notes).toContain('supportconfig: not run (--no-exec)');
    expect(notes).toMatch(/run directories: none in /);
    expect(c.text.err).toMatch(/2 not collected: see uyuni-support-install-\d{8}T\d{6}\.\d{3}Z\/notes.txt/);
  });
});
