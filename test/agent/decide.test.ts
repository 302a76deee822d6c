import { decideCleanup, ObservedUnit } from '../../src/agent/decide';
import { formatLogLine } from '../../src/agent/log';
import { PodLike, renderNodeUnits } from '../../src/systemd';

function noop(name: string, extra: Record<string, unknown> = {}): PodLike {
  return {
    metadata: { name, ...extra },
    spec: { containers: [{ name: 'noop-service', image: 'noop-service:1.0.0', command: ['noop-service-1.0.0/start.sh'] }], nodeName: 'localhost' },
  };
}

const OPTS = { kubeconfig: '/root/.kube/config' };
const unit = (n: string): string => `default-cleanup-test-${n}-noop-service.service`;

describe('cleanup decisions (spec §3)', () => {
  const expected = renderNodeUnits([
    noop('cleanup-test-ok'), noop('cleanup-test-terminating', { deletionTimestamp: '2021-09-24T11:52:20Z' }),
    noop('cleanup-test-unexpected-content'), noop('cleanup-test-nopath'), noop('cleanup-test-unreadable'),
  ], OPTS);
  const content = (n: string): string => expected.units.get(unit(n))!.content;

  it('keeps a unit equal to its pod\'s rendering and removes the others, each with the reference\'s line', () => {
    const units: ObservedUnit[] = [
      { name: unit('ok'), fragmentPath: `/lib/systemd/system/${unit('ok')}`, content: content('ok') },
      { name: unit('terminating'), fragmentPath: '/f', content: content('terminating') },
      { name: unit('unexpected-content'), fragmentPath: '/f', content: '[Unit]\nDescription=You did not expect this, did you?' },
      { name: unit('nopath'), fragmentPath: '' },
      { name: unit('unreadable'), fragmentPath: '/f', readError: 'EACCES: permission denied' },
      { name: unit('no-pod'), fragmentPath: '/f', content: 'x' },
    ];
    const d = decideCleanup(units, expected);
    expect(d.map((x) => [x.unit, x.action, x.reason, x.level])).toEqual([
      [unit('no-pod'), 'remove', 'no-pod', 'INFO'],
      [unit('nopath'), 'remove', 'no-file-path', 'INFO'],
      [unit('ok'), 'keep', 'pod-exists', 'INFO'],
      [unit('terminating'), 'remove', 'terminating', 'INFO'],
      [unit('unexpected-content'), 'remove', 'differs', 'INFO'],
      [unit('unreadable'), 'remove', 'unreadable', 'WARN'],
    ]);
    const msg = Object.fromEntries(d.map((x) => [x.reason, x.message]));
    expect(msg['no-pod']).toBe(`The systemd unit [${unit('no-pod')}] will be removed because no corresponding pod exists.`);
    expect(msg['no-file-path']).toBe(`The systemd unit [${unit('nopath')}] will be removed because its file path could not be determined.`);
    expect(msg['pod-exists']).toBe(`The systemd unit [${unit('ok')}] will be kept because a corresponding pod exists.`);
    expect(msg.terminating).toBe(`The systemd unit [${unit('terminating')}] will be removed because the corresponding pod is terminating.`);
    expect(msg.unreadable).toBe(`The systemd unit [${unit('unreadable')}] will be removed because the file content could not be retrieved. EACCES: permission denied`);
  });

  it('logs the expected and the actual content of a differing unit, indented as the reference does', () => {
    const [d] = decideCleanup([{ name: unit('unexpected-content'), fragmentPath: '/f', content: '[Unit]\nDescription=You did not expect this, did you?\n\n[Install]\nWantedBy=multi-user.target' }], expected);
    const line = formatLogLine('INFO', 'stackable_agent::provider::cleanup', d.message, new Date('2021-09-24T11:26:39.123Z'));
    expect(line).toBe(`[2021-09-24T11:26:39Z INFO  stackable_agent::provider::cleanup] The systemd unit [${unit('unexpected-content')}] will be removed because it differs from the corresponding pod specification.
    expected content:
    [Unit]
    Description=default-cleanup-test-unexpected-content-noop-service
    StartLimitIntervalSec=0

    [Service]
    Environment="KUBECONFIG=/root/.kube/config"
    ExecStart=/opt/stackable/packages/noop-service-1.0.0/noop-service-1.0.0/start.sh
    RemainAfterExit=no
    Restart=always
    RestartSec=2
    Slice=system-stackable.slice
    StandardError=journal
    StandardOutput=journal
    TimeoutStopSec=30

    [Install]
    WantedBy=multi-user.target

    actual content:
    [Unit]
    Description=You did not expect this, did you?

    [Install]
    WantedBy=multi-user.target`);
  });

  it('removes a unit of a terminating pod even when its content matches', () => {
    const [d] = decideCleanup([{ name: unit('terminating'), fragmentPath: '/f', content: content('terminating') }], expected);
    expect(d.action).toBe('remove');
  });

  it('leaves a unit alone, with a warning, when two pods map to it or its pod cannot be rendered', () => {
    const colliding = renderNodeUnits([
      { metadata: { namespace: 'a-b', name: 'c' }, spec: { containers: [{ name: 'x', image: 'i:1', command: ['/x'] }] } },
      { metadata: { namespace: 'a', name: 'b-c' }, spec: { containers: [{ name: 'x', image: 'i:1', command: ['/x'] }] } },
      { metadata: { namespace: 'a', name: 'broken' }, spec: { restartPolicy: 'Sometimes', containers: [{ name: 'x', image: 'i:1', command: ['/x'] }] } },
    ], OPTS);
    const d = decideCleanup([{ name: 'a-b-c-x.service', fragmentPath: '/f', content: 'x' }, { name: 'a-broken-x.service', fragmentPath: '/f', content: 'x' }], colliding);
    expect(d.map((x) => [x.action, x.reason, x.level])).toEqual([['keep', 'collision', 'WARN'], ['keep', 'pod-unrenderable', 'WARN']]);
    expect(d[0].message).toBe('The systemd unit [a-b-c-x.service] is left untouched because the pods [a-b/c] and [a/b-c] map to the same unit name; rename one of them.');
    expect(d[1].message).toMatch(/^The systemd unit \[a-broken-x.service\] is left untouched because its pod \[a\/broken\] cannot be rendered: .*restartPolicy/);
  });
});

describe('log lines', () => {
  it('pads the level to five characters as env_logger does', () => {
    const t = new Date('2021-09-24T11:26:39Z');
    expect(formatLogLine('INFO', 'x::cleanup', 'm', t)).toBe('[2021-09-24T11:26:39Z INFO  x::cleanup] m');
    expect(formatLogLine('WARN', 'x::cleanup', 'm', t)).toBe('[2021-09-24T11:26:39Z WARN  x::cleanup] m');
    expect(formatLogLine('ERROR', 'x::cleanup', 'm', t)).toBe('[2021-09-24T11:26:39Z ERROR x::cleanup] m');
  });
});
