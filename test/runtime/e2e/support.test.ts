/**
 * `uyuni-cdk support` on the simulator: the bundle holds the plan, the objects, the events, the
 * pods' descriptions and logs, the run records, the nodes and the files of the server's
 * supportconfig (through a real WebSocket exec), and none of the secret values planted everywhere
 * it reads.
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { attemptsNewestFirst } from '../../../src/runtime/core/run-dirs';
import { startSimulator, Simulator } from '../../sim';
import { supportCommand } from '../../../src/runtime/verbs/commands';
import { SUPPORTCONFIG, SUPPORTCONFIG_BATCH } from '../../../src/runtime/verbs/support';
import { EXIT } from '../../../src/plan/exit-codes';
import { cli, tmpDir, until } from './harness';
import { deployment, job, namespace, NS, writePlan } from '../plans';

let sim: Simulator;
afterEach(async () => {
  await sim?.stop();
});

/** A 24-character database password (with what URLs and JSON escape), the admin's, a kubeconfig token. */
const SECRETS = ['Db7"pw\\q2&Zr9!Lm4@Xs8%Kt', 'Adm1n-Secret-0815-Uyuni', 'eyJhbGciOiJSUzI1NiJ9.sim-kube-token-42'];
/** A private key of the namespace's CA: its body lines. */
const KEY_LINES = ['MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj', 'MZJ1dD8QVHqVKWe3nDQAQGvBn7W5E+XrV8hPUZq0Uc8lq+uYxK5PpgQ3rZpTyeBX'];
const KEY = `-----BEGIN PRIVATE KEY-----\n${KEY_LINES.join('\n')}\n-----END PRIVATE KEY-----\n`;
/** Words a helper needs, some of them Secret values that are no secret (user and database names). */
const WORDS = ['var-pgsql and var-pgsql18', 'registry.opensuse.org/uyuni/server-postgresql:2026.09', 'setup: user spacewalk db susemanager', 'su postgres', 'login admin'];
/** A file of supportconfig's that is bytes, not text. */
const BINARY = Buffer.from([0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00, 1, 2, 3, 255]);

/**
 * What `supportconfig -B <batch> -t <dir>` leaves in `<dir>/scc_<batch>/` (files as supportconfig
 * names them, one holding a password, one binary, a link out of it): written by `fakeSupportconfig`.
 */
function writeSccDir(dir: string, password: string): void {
  fs.mkdirSync(path.join(dir, 'rpm'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'basic-environment.txt'), '#==[ Command ]======#\n# /bin/uname -a\nLinux uyuni 6.4.0\n');
  fs.writeFileSync(path.join(dir, 'plugin-susemanager.txt'), `#==[ Configuration File ]===#\n# /etc/rhn/rhn.conf\ndb_password = ${password}\n`);
  fs.writeFileSync(path.join(dir, 'rpm', 'rpm.bin'), BINARY);
  fs.symlinkSync('/etc/passwd', path.join(dir, 'passwd-link'));
}

/** The tar stream the exec sends: supportconfig's directory, as `tar -cf - .` in it writes it. */
function sccStream(password: string): Buffer {
  const dir = path.join(tmpDir(), `scc_${SUPPORTCONFIG_BATCH}`);
  writeSccDir(dir, password);
  const r = spawnSync('tar', ['-C', dir, '-cf', '-', '.']);
  expect(r.status).toBe(0);
  return r.stdout;
}

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

describe('the supportconfig command run in the server pod', () => {
  /** A fake supportconfig on PATH that writes, as the real one with -B and -t, <dir>/scc_<batch>/, then exits with `code`. */
  function run(code: number, writes = true) {
    const dir = tmpDir();
    const bin = path.join(dir, 'bin');
    fs.mkdirSync(bin);
    const args = path.join(dir, 'args');
    fs.writeFileSync(path.join(bin, 'supportconfig'), `#!/bin/sh
echo "$@" > ${args}
while [ $# -gt 0 ]; do case $1 in -B) b=$2; shift 2 ;; -t) t=$2; shift 2 ;; *) shift ;; esac; done
echo "Gathering system information"
${writes ? `mkdir -p "$t/scc_$b" && echo "Linux uyuni" > "$t/scc_$b/basic-environment.txt"` : ''}
exit ${code}
`, { mode: 0o755 });
    const r = spawnSync(SUPPORTCONFIG[0], SUPPORTCONFIG.slice(1), { env: { PATH: `${bin}:${process.env.PATH}`, TMPDIR: dir } });
    const list = r.status === 0 ? spawnSync('tar', ['-tf', '-'], { input: r.stdout, encoding: 'utf8' }).stdout.trim().split('\n') : [];
    return { status: r.status, stderr: r.stderr.toString('utf8'), list, args: fs.readFileSync(args, 'utf8').trim(), left: fs.readdirSync(dir).sort() };
  }

  it('runs supportconfig -B <batch> -t <a temporary directory> and sends the directory as a tar stream, removing it', () => {
    const r = run(0);
    expect(r.status).toBe(0);
    expect(r.args).toMatch(new RegExp(`^-B ${SUPPORTCONFIG_BATCH} -t /.*/tmp\\.\\w+$`));
    expect(r.list).toEqual(['./', './basic-environment.txt']);
    expect(r.stderr).toContain('Gathering system information');
    expect(r.left).toEqual(['args', 'bin']);
  });

  it('still sends the directory when supportconfig failed in part, saying so', () => {
    const r = run(3);
    expect(r.status).toBe(0);
    expect(r.list).toEqual(['./', './basic-environment.txt']);
    expect(r.stderr).toContain('supportconfig exited with 3');
  });

  it('fails when supportconfig wrote no directory', () => {
    expect(run(0, false).status).toBe(1);
    expect(run(2, false).status).toBe(2);
  });
});

describe('uyuni-cdk support', () => {
  it('bundles plan, objects, events, pods, logs, runs, nodes and supportconfig, and no secret value', async () => {
    sim = await startSimulator({
      jobs: { 'db-migrate': { logs: ['connecting', `password=${SECRETS[0]}`, ...WORDS, `url postgresql://spacewalk:${encodeURIComponent(SECRETS[0])}@db/susemanager`, `json {"password":${JSON.stringify(SECRETS[0])}}`, `key ${KEY_LINES[1]}`, 'password=hunter2', 'done'] } },
      deployments: { uyuni: { logs: ['setup: starting', `admin ${SECRETS[1]} set`, 'psql --password hunter3 -U postgres', 'curl -H "Authorization: Bearer abcdefgh12345678"'] } },
      exec: (call) => (call.command.join(' ').includes('supportconfig') ? { stdout: sccStream(SECRETS[0]), stderr: 'Gathering system information\n' } : { exitCode: 127 }),
    });
    const server = deployment('uyuni');
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
    sim.put({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'db-credentials', namespace: NS }, data: { username: b64('spacewalk'), password: b64(SECRETS[0]), database: b64('susemanager') } });
    // the default run directory: <runs>/<series>/<attempt>/ (src/runtime/core/run-dirs.ts)
    expect((await cli('run', dir, { kubeconfig, runDir: undefined })).code).toBe(0);
    const [attempt] = attemptsNewestFirst(path.join(process.env.XDG_STATE_HOME, 'uyuni-cdk', NS, 'migrate'));
    const runPath = `${path.basename(path.dirname(attempt))}/${path.basename(attempt)}`;
    // other Secrets of the namespace (not the plan's), an Event naming a secret
    sim.put({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'db-admin-credentials', namespace: NS }, stringData: { username: 'postgres', password: 'pgsql' } });
    sim.put({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'uyuni-ca', namespace: NS }, stringData: { 'tls.key': KEY, 'ca.crt': '-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIEAgAAuTANBgkqhkiG9w0BAQUFADBaMQswCQYDVQQGEwJJ\n-----END CERTIFICATE-----\n' } });
    sim.put({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'admin-credentials', namespace: NS, labels: { 'app.kubernetes.io/part-of': 'uyuni' } }, stringData: { username: 'admin', password: SECRETS[1] } });
    sim.put({ apiVersion: 'v1', kind: 'Event', metadata: { name: 'e1', namespace: NS }, involvedObject: { kind: 'Pod', name: 'x', namespace: NS }, reason: 'Leaked', message: `bad: ${SECRETS[1]}`, type: 'Warning', lastTimestamp: '2026-12-01T00:00:00Z' });
    fs.writeFileSync(path.join(attempt, 'note.txt'), `token ${SECRETS[2]}\n`);
    // an env value the live Deployment carries in clear (the plan holds none): named as secret, and named harmlessly
    const live = sim.get('apps/v1', 'Deployment', 'uyuni', NS);
    live.spec.template.spec.containers[0].env = [{ name: 'DB_PASSWORD', value: SECRETS[0] }, { name: 'MOTD', value: SECRETS[1] }];
    sim.put(live);
    await until('the server pod runs', () => sim.list('v1', 'Pod', NS).some((p) => p.metadata.name.startsWith('uyuni-') && p.status?.phase === 'Running'));
    // the pod of the edited template has written all its lines (the simulator writes them over its
    // first second): support read it before its last line under load (CI, 1 in 3 runs)
    const serverLog = async (): Promise<string> => {
      const pod = sim.list('v1', 'Pod', NS).find((p) => p.metadata.name.startsWith('uyuni-') && p.status?.phase === 'Running'
        && p.spec.containers[0].env?.some((e: { name: string }) => e.name === 'DB_PASSWORD'));
      if (!pod) return '';
      const r = await fetch(`${sim.url}/api/v1/namespaces/${NS}/pods/${pod.metadata.name}/log`);
      return r.ok ? r.text() : '';
    };
    for (let i = 0; i < 400 && !(await serverLog()).includes('Authorization'); i++) await new Promise((r) => setTimeout(r, 100));

    const file = path.join(tmpDir(), 'bundle.tar.gz');
    const c = captured();
    expect(await supportCommand(dir, { kubeconfig, file }, c.io)).toBe(EXIT.ok);
    expect(c.text.err).toMatch(/^support: credentials to scrub/);
    expect(c.text.err).toMatch(/support: pods \d+\/\d+: /);
    expect(c.text.err).toMatch(/\nuyuni-cdk: wrote .*bundle\.tar\.gz \(\d+ files, \d+ KiB\)/);

    const files = unpack(file);
    const names = Object.keys(files);
    expect(names).toEqual(expect.arrayContaining(['plan/uyuni.plan', 'events.yaml', 'events.txt', 'cluster/version.txt', 'cluster/nodes.yaml', 'notes.txt', 'server/supportconfig.log']));
    expect(names.some((n) => /^objects\/Deployment\.apps_v1\.yaml$/.test(n))).toBe(true);
    expect(names.filter((n) => /^pods\/db-migrate-\w+\/(describe\.txt|main\.log)$/.test(n))).toHaveLength(2);
    expect(names.some((n) => n.startsWith(`runs/${runPath}/migrate/db-migrate-`) && n.endsWith('.main.log'))).toBe(true);
    expect(names).toContain(`runs/${runPath}/events.jsonl`);
    expect(files['runs/index.txt'].toString('utf8')).toBe(`${path.dirname(runPath)}: 1 attempt, finished\n  ${path.basename(runPath)}: done\n`);
    // supportconfig's files as plain files of the bundle, no nested archive; text scrubbed, bytes as they are, no link
    expect(names.filter((n) => n.startsWith('server/supportconfig/')).sort()).toEqual([
      'server/supportconfig/basic-environment.txt', 'server/supportconfig/plugin-susemanager.txt', 'server/supportconfig/rpm/rpm.bin',
    ]);
    expect(names.some((n) => /\.(txz|tgz|tar)$/.test(n))).toBe(false);
    expect(files['server/supportconfig/basic-environment.txt'].toString('utf8')).toContain('Linux uyuni 6.4.0');
    expect(files['server/supportconfig/plugin-susemanager.txt'].toString('utf8')).toContain('db_password = <redacted>');
    expect(files['server/supportconfig/rpm/rpm.bin'].equals(BINARY)).toBe(true);
    expect(files['notes.txt'].toString('utf8')).toContain('supportconfig: links and special files of its directory left out (1): passwd-link');
    expect(sim.execs.map((e) => [e.pod.startsWith('uyuni-'), e.container, e.command])).toEqual([[true, 'main', SUPPORTCONFIG]]);
    const all = names.filter((n) => n !== 'server/supportconfig/rpm/rpm.bin').map((n) => files[n].toString('utf8')).join('\n');
    // the logs and objects are there, scrubbed
    expect(all).toContain('connecting');
    expect(all).toContain('setup: starting');
    expect(all).toContain('Leaked');
    expect(all).toContain('<redacted>');
    expect(all).toMatch(/password: <redacted> \(\d+ bytes\)/);
    for (const s of [...SECRETS, ...SECRETS.map(b64), encodeURIComponent(SECRETS[0]), JSON.stringify(SECRETS[0]).slice(1, -1), ...KEY_LINES, 'hunter2', 'hunter3', 'abcdefgh12345678']) {
      expect({ s, found: all.includes(s) }).toEqual({ s, found: false });
    }
    // the words stay: user and database names, and volume names a short value is part of
    const log = files[names.find((n) => /^pods\/db-migrate-\w+\/main\.log$/.test(n))!].toString('utf8');
    for (const w of WORDS) expect(log).toContain(w);
    expect(log).toContain('url postgresql://spacewalk:<redacted>@db/susemanager');
    expect(log).toContain('json {"password":"<redacted>"}');
    // the plan copy is as synthesized
    expect(files['plan/uyuni.plan'].equals(fs.readFileSync(path.join(dir, 'uyuni.plan')))).toBe(true);
    // what was scrubbed, where; never a value
    const redactions = files['redactions.txt'].toString('utf8');
    expect(redactions).toMatch(new RegExp(`^  ${NS}/db-credentials/password: \\d+ times in \\d+ files \\(.*URL-encoded.*\\)$`, 'm'));
    expect(redactions).toMatch(/^ {4}pods\/db-migrate-\w+\/main\.log: \d+$/m);
    expect(redactions).toMatch(new RegExp(`^  ${NS}/admin-credentials/password: \\d+ times? in`, 'm'));
    expect(redactions).toMatch(new RegExp(`^  ${NS}/uyuni-ca/tls.key: \\d+ times? in`, 'm'));
    expect(redactions).toMatch(/^ {2}kubeconfig user sim: token: \d+ times? in/m);
    expect(redactions).toContain(`  ${NS}/db-credentials/username: not a secret`);
    expect(redactions).toContain(`  ${NS}/db-admin-credentials/password: shorter than 8 characters`);
    expect(redactions).toMatch(/^ {2}password=…: \d+ times? in/m);
    expect(redactions).toMatch(/^ {2}--password …: 1 time in 1 file/m);
    expect(redactions).toMatch(/^ {2}Authorization: …: 1 time in 1 file/m);
    for (const s of [...SECRETS, 'hunter2']) expect(redactions.includes(s)).toBe(false);
  });

  it('says what it could not collect, and leaves supportconfig out with --no-exec', async () => {
    sim = await startSimulator({ exec: () => ({ stdout: sccStream('unused') }) });
    const dir = writePlan([{ name: 'namespace', objects: [namespace()] }, { name: 'server', objects: [deployment('uyuni')] }], { name: 'install' });
    process.env.XDG_STATE_HOME = tmpDir();
    const file = path.join(tmpDir(), 'b.tar.gz');
    const c = captured();
    expect(await supportCommand(dir, { kubeconfig: sim.kubeconfigPath, file, exec: false }, c.io)).toBe(EXIT.ok);
    const files = unpack(file);
    expect(Object.keys(files).filter((n) => n.startsWith('server/'))).toEqual([]);
    expect(sim.execs).toEqual([]);
    const notes = files['notes.txt'].toString('utf8');
    expect(notes).toContain('supportconfig: not run (--no-exec)');
    expect(notes).toMatch(/run directories: none in /);
    expect(c.text.err).toMatch(/2 not collected: see uyuni-support-install-\d{8}T\d{6}\.\d{3}Z\/notes.txt/);
  });

  describe('as a user who may not read Secrets (the built-in view role)', () => {
    const ADMIN = 'Printed-Admin-Pass-2026';
    /** A finished install whose Job printed the admin password, a Secret the user cannot read, and Secrets forbidden. */
    async function viewer() {
      sim = await startSimulator({
        jobs: { setup: { logs: ['creating the admin', `admin password: ${ADMIN}`, 'done'] } },
        exec: () => ({ stdout: sccStream(ADMIN) }),
      });
      const dir = writePlan([{ name: 'namespace', objects: [namespace()] }, { name: 'setup', objects: [job('setup')] }], { name: 'install' });
      process.env.XDG_STATE_HOME = tmpDir();
      sim.put({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
      expect((await cli('run', dir, { kubeconfig: sim.kubeconfigPath, runDir: undefined })).code).toBe(0);
      sim.put({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'admin-credentials', namespace: NS }, stringData: { username: 'admin', password: ADMIN } });
      sim.put({ apiVersion: 'v1', kind: 'Event', metadata: { name: 'e1', namespace: NS }, involvedObject: { kind: 'Pod', name: 'x', namespace: NS }, reason: 'Printed', message: `admin ${ADMIN}`, type: 'Normal', lastTimestamp: '2026-12-01T00:00:00Z' });
      sim.setForbidden([{ verbs: ['get', 'list', 'watch'], resource: 'secrets', namespace: NS, user: 'system:serviceaccount:uyuni-test:viewer' }]);
      return dir;
    }

    it('refuses, writes nothing, and names the permission and the flag', async () => {
      const dir = await viewer();
      const file = path.join(tmpDir(), 'b.tar.gz');
      const c = captured();
      expect(await supportCommand(dir, { kubeconfig: sim.kubeconfigPath, file }, c.io)).toBe(EXIT.stepFailed);
      expect(fs.existsSync(file)).toBe(false);
      expect(c.text.err).toContain(`the Secrets of namespace ${NS} cannot be read (`);
      expect(c.text.err).toContain('cannot list resource "secrets"');
      expect(c.text.err).toContain(`Grant get/list secrets in namespace ${NS}`);
      expect(c.text.err).toContain('--without-logs');
      expect(c.text.err).not.toContain(ADMIN);
      expect(c.text.err).not.toMatch(/\n\s+at /);
    });

    it('with --without-logs leaves out every log and event text, and says so on the terminal and in the bundle', async () => {
      const dir = await viewer();
      const file = path.join(tmpDir(), 'b.tar.gz');
      const c = captured();
      expect(await supportCommand(dir, { kubeconfig: sim.kubeconfigPath, file, withoutLogs: true }, c.io)).toBe(EXIT.ok);
      expect(c.text.err).toMatch(/support: --without-logs: no pod log, Event, run log, termination message or supportconfig is in this bundle \(the Secrets of uyuni-test cannot be read: .*forbidden/);
      expect(c.text.err).toMatch(/wrote .*b\.tar\.gz \(\d+ files, \d+ KiB, without logs and events\)/);
      const files = unpack(file);
      const names = Object.keys(files);
      expect(names.filter((n) => n.endsWith('.log') || n.endsWith('.jsonl') || n.startsWith('events.') || n.startsWith('server/'))).toEqual([]);
      expect(names).toEqual(expect.arrayContaining(['plan/uyuni.plan', 'objects/Pod.v1.yaml', 'runs/index.txt', 'notes.txt', 'redactions.txt']));
      expect(names.some((n) => /^pods\/setup-\w+\/describe\.txt$/.test(n))).toBe(true);
      expect(sim.execs).toEqual([]);
      for (const f of ['notes.txt', 'redactions.txt']) expect(files[f].toString('utf8')).toContain('--without-logs: no pod log, Event, run log');
      const all = names.map((n) => files[n].toString('utf8')).join('\n');
      expect(all).not.toContain(ADMIN);
      expect(all).not.toContain('creating the admin');
    });
  });
});
