/**
 * Rendered units run by a real `systemd --user`: the started process receives exactly the pod's
 * argv and environment, and init containers run, in order, before the app containers.
 */
import * as fs from 'fs';
import * as path from 'path';
import { runCli, withoutTimes } from './harness/agent-cli';
import { startPodsServer, PodsServer } from './harness/pods-server';
import { dumperScript, HOSTILE_ARGS, HOSTILE_ENV } from './harness/hostile';
import { startUserSystemd, UserSystemd } from './harness/systemd-user';

let sd: UserSystemd;
let api: PodsServer;
let pkg: string;

beforeAll(async () => {
  sd = await startUserSystemd();
  api = await startPodsServer();
  pkg = path.join(sd.base, 'packages');
}, 60_000);

afterAll(async () => {
  await api?.close();
  await sd?.stop();
});

async function until<T>(what: string, probe: () => T | undefined, ms = 15_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function render(pod: unknown): Promise<string[]> {
  const file = path.join(sd.base, `pod-${Date.now()}.json`);
  fs.writeFileSync(file, JSON.stringify(pod));
  const r = await runCli(['agent', 'render', '-f', file, '--out', sd.unitDir, '--session', '--package-dir', pkg, '--kubeconfig', api.kubeconfig], sd.env);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  return r.stdout.trim().split('\n');
}

describe('rendered units on a real systemd --user', () => {
  it('gives the process exactly the pod\'s argv and environment', async () => {
    const dir = path.join(pkg, 'dumper-1.0');
    // A command path with a space and a percent sign, relative to the package root.
    const command = 'my tools/dump 100%.js';
    fs.mkdirSync(path.join(dir, 'my tools'), { recursive: true });
    const out = path.join(sd.base, 'dump.json');
    fs.writeFileSync(path.join(dir, command), dumperScript(out), { mode: 0o755 });
    const pod = {
      apiVersion: 'v1', kind: 'Pod',
      metadata: { name: 'hostile', namespace: 'default' },
      spec: {
        restartPolicy: 'Never',
        containers: [{
          name: 'dumper', image: 'dumper:1.0',
          command: [command, ...HOSTILE_ARGS.slice(0, 10)], args: HOSTILE_ARGS.slice(10),
          env: Object.entries(HOSTILE_ENV).map(([name, value]) => ({ name, value })),
        }],
      },
    };
    const files = await render(pod);
    expect(files).toEqual([path.join(sd.unitDir, 'default-hostile-dumper.service')]);
    const text = fs.readFileSync(files[0], 'utf8');
    // Nothing a value holds became a directive of its own.
    expect(text.split('\n').filter((l) => /^[A-Za-z]+=/.test(l)).map((l) => l.split('=')[0]).sort()).toEqual([
      'Description', 'StartLimitIntervalSec',
      ...Array(Object.keys(HOSTILE_ENV).length + 1).fill('Environment'),
      'ExecStart', 'RemainAfterExit', 'Restart', 'RestartSec', 'Slice', 'StandardError', 'StandardOutput', 'TimeoutStopSec', 'WantedBy',
    ].sort());

    sd.systemctl('daemon-reload');
    sd.systemctl('start', 'default-hostile-dumper.service');
    const dump = await until('the dump', () => (fs.existsSync(out) && fs.statSync(out).size > 0 ? JSON.parse(fs.readFileSync(out, 'utf8')) : undefined));
    expect(dump.argv).toEqual([path.join(dir, command), ...HOSTILE_ARGS]);
    for (const [name, value] of Object.entries(HOSTILE_ENV)) expect([name, dump.env[name]]).toEqual([name, value]);
    expect(dump.env.KUBECONFIG).toBe(api.kubeconfig);
    expect(dump.env.Y).toBeUndefined();
  });

  it('runs init containers once, in order, before the app containers, and the cleanup keeps all of them', async () => {
    const dir = path.join(pkg, 'multi-2.0');
    fs.mkdirSync(dir, { recursive: true });
    const marks = path.join(sd.base, 'marks');
    fs.writeFileSync(path.join(dir, 'mark.sh'), '#!/bin/sh\nsleep 0.2\necho "$1" >> "$MARKS"\n[ "$2" = stay ] && exec sleep 1d\nexit 0\n', { mode: 0o755 });
    const container = (name: string, ...args: string[]): Record<string, unknown> => ({
      name, image: 'multi:2.0', command: ['mark.sh'], args, env: [{ name: 'MARKS', value: marks }],
    });
    const pod = {
      apiVersion: 'v1', kind: 'Pod',
      metadata: { name: 'multi', namespace: 'apps' },
      spec: {
        nodeName: 'localhost',
        initContainers: [container('init-one', 'init-one'), container('init-two', 'init-two')],
        containers: [container('app-a', 'app-a', 'stay'), container('app-b', 'app-b', 'stay')],
      },
    };
    const units = ['apps-multi-init-one.service', 'apps-multi-init-two.service', 'apps-multi-app-a.service', 'apps-multi-app-b.service'];
    expect(await render(pod)).toEqual(units.map((u) => path.join(sd.unitDir, u)));
    expect(fs.readFileSync(path.join(sd.unitDir, units[0]), 'utf8')).toContain(`Before=${units.slice(1).join(' ')}\n`);
    expect(fs.readFileSync(path.join(sd.unitDir, units[0]), 'utf8')).toContain('Type=oneshot\n');
    expect(fs.readFileSync(path.join(sd.unitDir, units[3]), 'utf8')).toContain(`Requires=${units.slice(0, 2).join(' ')}\n`);

    sd.systemctl('daemon-reload');
    // Starting one app container pulls in the init containers, ordered before it.
    sd.systemctl('start', units[2]);
    sd.systemctl('start', units[3]);
    await until('both app containers', () => {
      const lines = fs.existsSync(marks) ? fs.readFileSync(marks, 'utf8').trim().split('\n') : [];
      return lines.length === 4 ? lines : undefined;
    });
    const lines = fs.readFileSync(marks, 'utf8').trim().split('\n');
    expect(lines.slice(0, 2)).toEqual(['init-one', 'init-two']);
    expect(lines.slice(2).sort()).toEqual(['app-a', 'app-b']);
    expect(units.map((u) => `${sd.show(u, 'ActiveState')}/${sd.show(u, 'SubState')}`)).toEqual(['active/exited', 'active/exited', 'active/running', 'active/running']);

    api.pods = [pod];
    const kept = await runCli(['agent', 'cleanup', '--node', 'localhost', '--session', '--package-dir', pkg, '--kubeconfig', api.kubeconfig], sd.env);
    expect(kept.code).toBe(0);
    expect(withoutTimes(kept.stderr).split('\n').filter(Boolean).sort()).toEqual(
      ['default-hostile-dumper.service', ...units].map((u) => `[T INFO  uyuni_cdk::agent::cleanup] The systemd unit [${u}] will be ${u.startsWith('default-hostile') ? 'removed because no corresponding pod exists' : 'kept because a corresponding pod exists'}.`).sort(),
    );
    expect(sd.show(units[2], 'ActiveState')).toBe('active');

    api.pods = [];
    const removed = await runCli(['agent', 'cleanup', '--node', 'localhost', '--session', '--package-dir', pkg, '--kubeconfig', api.kubeconfig], sd.env);
    expect(removed.code).toBe(0);
    for (const u of units) {
      expect(sd.show(u, 'LoadState')).toBe('not-found');
      expect(fs.existsSync(path.join(sd.unitDir, u))).toBe(false);
    }
  });
});
