import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { runCli } from './harness/agent-cli';

describe('uyuni-cdk agent render', () => {
  let dir: string;
  beforeEach(() => { dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-cli-')); });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  const container = { name: 'x', image: 'i:1', command: ['/x'] };

  it('writes one file per container of a YAML pod, exactly the rendered text', async () => {
    fs.writeFileSync(path.join(dir, 'pod.yaml'), `apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\nspec:\n  containers:\n  - name: a\n    image: web:1\n    command: [bin/a, "x y"]\n  - name: b\n    image: web:1\n    command: [/usr/bin/b]\n`);
    const r = await runCli(['agent', 'render', '-f', path.join(dir, 'pod.yaml'), '--out', path.join(dir, 'out'), '--kubeconfig', '/etc/k.conf', '--package-dir', '/pk'], process.env);
    expect(r.code).toBe(0);
    expect(r.stdout.trim().split('\n')).toEqual([path.join(dir, 'out', 'default-web-a.service'), path.join(dir, 'out', 'default-web-b.service')]);
    const a = fs.readFileSync(path.join(dir, 'out', 'default-web-a.service'), 'utf8');
    expect(a).toContain('\nExecStart=/pk/web-1/bin/a "x y"\n');
    expect(a).toContain('\nEnvironment="KUBECONFIG=/etc/k.conf"\n');
    expect(a.endsWith('WantedBy=multi-user.target')).toBe(true);
  });

  it('refuses, with exit 2, pods that collide on a unit name and writes nothing', async () => {
    const pods = [
      { kind: 'Pod', metadata: { namespace: 'a-b', name: 'c' }, spec: { containers: [container] } },
      { kind: 'Pod', metadata: { namespace: 'a', name: 'b-c' }, spec: { containers: [container] } },
    ];
    fs.writeFileSync(path.join(dir, 'pods.json'), JSON.stringify({ kind: 'List', items: pods }));
    const r = await runCli(['agent', 'render', '-f', path.join(dir, 'pods.json'), '--out', path.join(dir, 'out'), '--kubeconfig', '/k'], process.env);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('the pods a-b/c and a/b-c map to the same unit a-b-c-x.service');
    expect(fs.existsSync(path.join(dir, 'out'))).toBe(false);
  });

  it('refuses something that is not a pod', async () => {
    fs.writeFileSync(path.join(dir, 'cm.yaml'), 'kind: ConfigMap\nmetadata:\n  name: x\n');
    const r = await runCli(['agent', 'render', '-f', path.join(dir, 'cm.yaml'), '--out', dir], process.env);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/holds a ConfigMap, not a Pod/);
  });
});

describe('uyuni-cdk agent cleanup', () => {
  it('exits 2 on a bad option value and 3 when the kubeconfig is unusable', async () => {
    expect((await runCli(['agent', 'cleanup', '--node', 'n', '--api-timeout', 'soon'], process.env)).code).toBe(2);
    const r = await runCli(['agent', 'cleanup', '--node', 'n', '--kubeconfig', '/nonexistent/kubeconfig'], process.env);
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/could not be listed completely, so no systemd unit was touched: cannot read the kubeconfig/);
  });
});

describe('uyuni-cdk agent run', () => {
  it('exits 2 on a bad option value and 3, touching nothing, when the pods cannot be listed', async () => {
    expect((await runCli(['agent', 'run', '--node', 'n', '--resync', '0'], process.env)).code).toBe(2);
    expect((await runCli(['agent', 'run', '--node', 'n', '--output', 'yaml'], process.env)).code).toBe(2);
    const r = await runCli(['agent', 'run', '--node', 'n', '--kubeconfig', '/nonexistent/kubeconfig'], process.env);
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/^uyuni-cdk agent run: the pods of node n could not be listed completely, so no systemd unit was touched: cannot read the kubeconfig/m);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });
});
