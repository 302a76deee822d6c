/**
 * Issue 23, concurrency: pods are reconciled independently. Real `systemd --user`, the API
 * simulator, the agent as its own process.
 *
 * - while one pod's unit takes its 300 s grace period to stop, another pod starts at once;
 * - a DELETE of a pod object or a status write that fails is retried with backoff, not left for
 *   the next resync (an hour here) or an API outage's end.
 */
import * as fs from 'fs';
import { clients } from '../sim/helpers';
import { nodeSuite } from './harness/node-suite';
import { TOLERATIONS } from './harness/tolerations';

jest.setTimeout(120_000);

const NODE = 'busy-node';

const node = nodeSuite({
  node: NODE, nodeIp: '10.9.8.4',
  scripts: {
    'serve.sh': '#!/bin/sh\nexec sleep 1d\n',
    // Ignores SIGTERM: its stop takes the whole grace period (until SIGKILL).
    'stubborn.sh': "#!/bin/sh\ntrap '' TERM\nwhile :; do sleep 1; done\n",
  },
});
const { until, getPod, create } = node;

function pod(name: string, command: string, spec: Record<string, unknown> = {}): any {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default' }, spec: { nodeName: NODE, tolerations: TOLERATIONS, containers: [{ name: 'main', image: 'svc:1.0', command: [command] }], ...spec } };
}

const unitOf = (name: string): string => `default-${name}-main.service`;

describe('agent run reconciles pods independently', () => {
  it('starts a new pod while another takes its 300 s grace period to stop', async () => {
    await create(pod('slow', 'stubborn.sh', { terminationGracePeriodSeconds: 300 }));
    await until('slow Running', () => getPod('slow')?.status?.phase === 'Running');
    await clients(node.sim).core.deleteNamespacedPod({ name: 'slow', namespace: 'default' });
    await until('slow stopping', () => node.sd.show(unitOf('slow'), 'ActiveState') === 'deactivating');

    try {
      const t0 = Date.now();
      await create(pod('quick', 'serve.sh'));
      await until('quick Running', () => getPod('quick')?.status?.phase === 'Running');
      console.log(`a pod started ${Date.now() - t0} ms after its creation while another stops for 300 s`);
      expect(node.sd.show(unitOf('slow'), 'ActiveState')).toBe('deactivating');
      expect(node.sd.show(unitOf('quick'), 'ActiveState')).toBe('active');
    } finally {
      // The stop ends when the process dies; the unit is then removed and the object deleted.
      node.sd.systemctl('kill', '--signal=SIGKILL', unitOf('slow'));
    }
    await until('slow gone', () => getPod('slow') === undefined);
    expect(fs.existsSync(node.unitFile('slow'))).toBe(false);
  });

  it('retries a failed DELETE of the pod object with backoff', async () => {
    await create(pod('again', 'serve.sh'));
    await until('again Running', () => getPod('again')?.status?.phase === 'Running');
    await clients(node.sim).core.deleteNamespacedPod({ name: 'again', namespace: 'default' });
    // The agent's own DELETE (grace period 0, once the unit is stopped) fails twice.
    node.sim.failNext(2, 503, 'DELETE /api/v1/namespaces/default/pods/again');
    await until('again gone', () => getPod('again') === undefined, 10_000);
    // The agent logs its DELETE once the answer is in: the object may be gone a moment before.
    await until('the deletion logged', () => node.agent!.stderr().includes('The pod [default/again] was deleted with grace period 0'));
    expect(node.agent!.stderr().match(/The pod \[default\/again\] could not be deleted/g)).toHaveLength(2);
  });

  it('retries a failed status write with backoff', async () => {
    node.sim.failNext(2, 503, '/api/v1/namespaces/default/pods/late/status');
    await create(pod('late', 'serve.sh'));
    await until('late Running', () => getPod('late')?.status?.phase === 'Running', 10_000);
    expect(node.agent!.stderr().match(/The status of pod \[default\/late\] could not be updated/g)?.length).toBeGreaterThanOrEqual(1);
  });
});
