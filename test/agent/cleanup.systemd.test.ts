/**
 * The #312 scenario end to end: a real `systemd --user`, a pods-only API over HTTP, and the agent
 * CLI as its own process (`uyuni-cdk agent cleanup --session`).
 */
import * as fs from 'fs';
import * as path from 'path';
import { renderPodUnits } from '../../src/systemd';
import { runCli, withoutTimes } from './harness/agent-cli';
import { startPodsServer, PodsServer } from './harness/pods-server';
import { startUserSystemd, UserSystemd } from './harness/systemd-user';

let sd: UserSystemd;
let api: PodsServer;
let pkg: string;

/** The unit text of the #312 test script, for the user manager and this test's paths. */
function referenceUnit(name: string, kubeconfig: string): string {
  return `[Unit]
Description=${name}
StartLimitIntervalSec=0

[Service]
Environment="KUBECONFIG=${kubeconfig}"
ExecStart=${pkg}/noop-service-1.0.0/noop-service-1.0.0/start.sh
RemainAfterExit=no
Restart=always
RestartSec=2
Slice=system-stackable.slice
StandardError=journal
StandardOutput=journal
TimeoutStopSec=30

[Install]
WantedBy=default.target`;
}

const UNEXPECTED = (pkgDir: string): string => `[Unit]
Description=You did not expect this, did you?

[Service]
ExecStart=${pkgDir}/noop-service-1.0.0/noop-service-1.0.0/start.sh
Slice=system-stackable.slice

[Install]
WantedBy=default.target`;

function noopPod(name: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    metadata: { name, namespace: 'default', ...extra },
    spec: {
      containers: [{ name: 'noop-service', image: 'noop-service:1.0.0', command: ['noop-service-1.0.0/start.sh'] }],
      nodeName: 'localhost',
      nodeSelector: { 'kubernetes.io/arch': 'stackable-linux' },
      tolerations: [{ key: 'kubernetes.io/arch', operator: 'Equal', value: 'stackable-linux' }],
    },
  };
}

const unit = (name: string): string => `default-cleanup-test-${name}-noop-service.service`;

function install(name: string, content: string, start = true): void {
  fs.writeFileSync(path.join(sd.unitDir, name), content);
  sd.systemctl('daemon-reload');
  sd.systemctl('enable', name);
  if (start) sd.systemctl('start', name);
}

function cleanupArgs(...extra: string[]): string[] {
  return ['agent', 'cleanup', '--node', 'localhost', '--session', '--package-dir', pkg, '--kubeconfig', api.kubeconfig, ...extra];
}

let okPid: string;

beforeAll(async () => {
  sd = await startUserSystemd();
  api = await startPodsServer();
  pkg = path.join(sd.base, 'packages');
  const script = path.join(pkg, 'noop-service-1.0.0', 'noop-service-1.0.0', 'start.sh');
  fs.mkdirSync(path.dirname(script), { recursive: true });
  fs.writeFileSync(script, '#!/bin/sh\necho test-service started\nexec sleep 1d\n', { mode: 0o755 });

  install(unit('ok'), referenceUnit('default-cleanup-test-ok-noop-service', api.kubeconfig));
  install(unit('no-pod'), referenceUnit('default-cleanup-test-no-pod-noop-service', api.kubeconfig));
  install(unit('unexpected-content'), UNEXPECTED(pkg));
  install(unit('terminating'), referenceUnit('default-cleanup-test-terminating-noop-service', api.kubeconfig));
  // A unit of the slice that failed: it must not stay "failed" after its removal (#321).
  install('default-cleanup-test-failed-x.service', '[Service]\nExecStart=/bin/false\nSlice=system-stackable.slice\n\n[Install]\nWantedBy=default.target');
  // A unit file of the slice that systemd has not loaded: found on disk (§4.3).
  fs.writeFileSync(path.join(sd.unitDir, 'default-cleanup-test-disk-only-x.service'), '[Service]\nExecStart=/bin/sleep 1d\nSlice=system-stackable.slice\n');
  // Outside the slice, and without a pod: never touched.
  install('bystander.service', '[Service]\nExecStart=/bin/sleep 1d\n\n[Install]\nWantedBy=default.target');

  api.pods = [
    noopPod('cleanup-test-ok'),
    noopPod('cleanup-test-unexpected-content'),
    noopPod('cleanup-test-terminating', { deletionTimestamp: '2021-09-24T11:52:20Z' }),
    // Another node's pod with the name of a unit here: does not count.
    { ...noopPod('cleanup-test-no-pod'), spec: { ...(noopPod('x').spec as object), nodeName: 'node-2' } },
  ];
  okPid = sd.show(unit('ok'), 'MainPID');
  expect(Number(okPid)).toBeGreaterThan(0);
  expect(sd.show('default-cleanup-test-failed-x.service', 'ActiveState')).toBe('failed');
}, 60_000);

afterAll(async () => {
  await api?.close();
  await sd?.stop();
});

const ALL = [unit('ok'), unit('no-pod'), unit('unexpected-content'), unit('terminating'), 'default-cleanup-test-failed-x.service', 'default-cleanup-test-disk-only-x.service', 'bystander.service'];

function snapshot(): Record<string, { file: boolean; state: string; pid: string }> {
  return Object.fromEntries(ALL.map((u) => [u, {
    file: fs.existsSync(path.join(sd.unitDir, u)),
    state: sd.show(u, 'ActiveState'),
    pid: sd.show(u, 'MainPID'),
  }]));
}

describe('agent cleanup on a real systemd --user (the #312 scenario)', () => {
  it('touches nothing and exits non-zero when the pod list fails', async () => {
    const before = snapshot();
    for (const kind of ['http-500', 'hang', 'not-a-pod-list'] as const) {
      api.failure = { page: 1, kind };
      const r = await runCli(cleanupArgs('--api-timeout', '1'), sd.env);
      expect(r.code).toBe(3);
      expect(r.stderr).toMatch(/^uyuni-cdk agent cleanup: the pods of node localhost could not be listed completely, so no systemd unit was touched: /);
      expect(r.stderr).not.toMatch(/will be (kept|removed)/);
      expect(snapshot()).toEqual(before);
    }
    api.failure = undefined;
  });

  it('prints the decisions in a dry run and changes nothing', async () => {
    const before = snapshot();
    const r = await runCli(cleanupArgs('--dry-run'), sd.env);
    expect(r.code).toBe(0);
    const out = withoutTimes(r.stderr);
    expect(out).toContain(`[T INFO  uyuni_cdk::agent::cleanup] The systemd unit [${unit('ok')}] will be kept because a corresponding pod exists.\n`);
    expect(out).toContain(`[T INFO  uyuni_cdk::agent::cleanup] The systemd unit [${unit('no-pod')}] will be removed because no corresponding pod exists.\n`);
    expect(out).toContain('[T INFO  uyuni_cdk::agent::cleanup] Dry run: 5 systemd units would be removed, 1 kept; nothing was changed.\n');
    expect(snapshot()).toEqual(before);
  });

  it('keeps the unit of a pod, removes the rest of the slice with the reference log lines, leaves other units alone', async () => {
    const expected = renderPodUnits(noopPod('cleanup-test-unexpected-content'), { session: true, packageDir: pkg, kubeconfig: api.kubeconfig })[0].content;
    const r = await runCli(cleanupArgs(), sd.env);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/^\[\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ INFO  uyuni_cdk::agent::cleanup\] /);
    const t = '[T INFO  uyuni_cdk::agent::cleanup] The systemd unit';
    const indented = (text: string): string => text.split('\n').map((l) => (l ? `    ${l}` : l)).join('\n');
    expect(withoutTimes(r.stderr)).toBe([
      `${t} [default-cleanup-test-disk-only-x.service] will be removed because no corresponding pod exists.`,
      `${t} [default-cleanup-test-failed-x.service] will be removed because no corresponding pod exists.`,
      `${t} [${unit('no-pod')}] will be removed because no corresponding pod exists.`,
      `${t} [${unit('ok')}] will be kept because a corresponding pod exists.`,
      `${t} [${unit('terminating')}] will be removed because the corresponding pod is terminating.`,
      `${t} [${unit('unexpected-content')}] will be removed because it differs from the corresponding pod specification.`,
      indented(`expected content:\n${expected}\n\nactual content:\n${UNEXPECTED(pkg)}`),
      '',
    ].join('\n'));

    // Kept, and still the same running process.
    expect(sd.show(unit('ok'), 'ActiveState')).toBe('active');
    expect(sd.show(unit('ok'), 'MainPID')).toBe(okPid);
    expect(fs.existsSync(path.join(sd.unitDir, 'default.target.wants', unit('ok')))).toBe(true);
    // Removed: stopped, disabled, file gone, not left failed.
    for (const gone of [unit('no-pod'), unit('unexpected-content'), unit('terminating'), 'default-cleanup-test-failed-x.service', 'default-cleanup-test-disk-only-x.service']) {
      expect(fs.existsSync(path.join(sd.unitDir, gone))).toBe(false);
      expect(fs.existsSync(path.join(sd.unitDir, 'default.target.wants', gone))).toBe(false);
      expect(sd.show(gone, 'LoadState')).toBe('not-found');
      expect(sd.show(gone, 'ActiveState')).toBe('inactive');
    }
    const listed = sd.systemctl('list-units', '--all', '--plain', '--no-legend', 'default-cleanup-test-*').trim().split('\n');
    expect(listed.map((l) => l.split(' ')[0])).toEqual([unit('ok')]);
    // Outside the slice: untouched.
    expect(sd.show('bystander.service', 'ActiveState')).toBe('active');
    expect(fs.existsSync(path.join(sd.unitDir, 'bystander.service'))).toBe(true);
  });

  it('keeps everything on a second run', async () => {
    const r = await runCli(cleanupArgs(), sd.env);
    expect(r.code).toBe(0);
    expect(withoutTimes(r.stderr)).toBe(`[T INFO  uyuni_cdk::agent::cleanup] The systemd unit [${unit('ok')}] will be kept because a corresponding pod exists.\n`);
    expect(sd.show(unit('ok'), 'MainPID')).toBe(okPid);
  });

  it('finds a unit put into the slice by a drop-in, and never touches one that merely requires the slice', async () => {
    // In the slice only through a drop-in: its file says nothing about the slice.
    fs.mkdirSync(path.join(sd.unitDir, 'default-dropin-x.service.d'), { recursive: true });
    fs.writeFileSync(path.join(sd.unitDir, 'default-dropin-x.service.d', 'slice.conf'), '[Service]\nSlice=system-stackable.slice\n');
    install('default-dropin-x.service', '[Service]\nExecStart=/bin/sleep 1d\n\n[Install]\nWantedBy=default.target');
    // Listed in the slice's RequiredBy, but runs elsewhere.
    install('default-requirer-x.service', '[Unit]\nRequires=system-stackable.slice\nAfter=system-stackable.slice\n\n[Service]\nExecStart=/bin/sleep 1d\n\n[Install]\nWantedBy=default.target');
    expect(sd.show('default-dropin-x.service', 'Slice')).toBe('system-stackable.slice');
    expect(sd.show('system-stackable.slice', 'RequiredBy').split(' ')).toContain('default-requirer-x.service');
    const requirerPid = sd.show('default-requirer-x.service', 'MainPID');

    const r = await runCli(cleanupArgs(), sd.env);
    expect(r.code).toBe(0);
    expect(withoutTimes(r.stderr)).toBe([
      `[T INFO  uyuni_cdk::agent::cleanup] The systemd unit [${unit('ok')}] will be kept because a corresponding pod exists.`,
      '[T INFO  uyuni_cdk::agent::cleanup] The systemd unit [default-dropin-x.service] will be removed because no corresponding pod exists.',
      '',
    ].join('\n'));
    expect(sd.show('default-dropin-x.service', 'ActiveState')).toBe('inactive');
    expect(sd.show('default-requirer-x.service', 'ActiveState')).toBe('active');
    expect(sd.show('default-requirer-x.service', 'MainPID')).toBe(requirerPid);
    expect(fs.existsSync(path.join(sd.unitDir, 'default-requirer-x.service'))).toBe(true);
    sd.systemctl('stop', 'default-requirer-x.service');
  });

  it('gives up waiting for a stop job after --job-timeout, says so and exits 1', async () => {
    // Ignores SIGTERM: its stop job lasts until TimeoutStopSec (3 s) kills it.
    install('default-stubborn-x.service', `[Service]\nExecStart=/bin/sh -c "trap '' TERM; while :; do sleep 0.1; done"\nTimeoutStopSec=3\nSlice=system-stackable.slice\n\n[Install]\nWantedBy=default.target`);
    const r = await runCli(cleanupArgs('--job-timeout', '1'), sd.env);
    expect(r.code).toBe(1);
    expect(withoutTimes(r.stderr)).toContain('[T INFO  uyuni_cdk::agent::cleanup] The systemd unit [default-stubborn-x.service] will be removed because no corresponding pod exists.\n');
    expect(withoutTimes(r.stderr)).toMatch(/\[T ERROR uyuni_cdk::agent::cleanup\] The systemd unit \[default-stubborn-x.service\] could not be removed cleanly: job \/org\/freedesktop\/systemd1\/job\/\d+ did not finish within 1000 ms\n/);
    expect(r.stderr).toMatch(/uyuni-cdk agent cleanup: 1 of 1 systemd units could not be removed cleanly/);
    // The rest of the removal still happened.
    expect(fs.existsSync(path.join(sd.unitDir, 'default-stubborn-x.service'))).toBe(false);
    expect(sd.show(unit('ok'), 'MainPID')).toBe(okPid);
  });
});
