/**
 * Issue 23, concurrency: pods are reconciled independently. Real `systemd --user`, the API
 * simulator, the agent as its own process.
 *
 * - while one pod's unit takes its 300 s grace period to stop, another pod starts at once;
 * - a DELETE of a pod object or a status write that fails is retried with backoff, not left for
 *   the next resync (an hour here) or an API outage's end.
 */
import * as fs from 'fs';
import * as path from 'path';
import { startSimulator, Simulator } from '../sim';
import { clients } from '../sim/helpers';
import { AgentProcess, startAgent } from './harness/agent-process';
import { startUserSystemd, UserSystemd } from './harness/systemd-user';
import { untilWith } from './harness/until';

jest.setTimeout(120_000);

const NODE = 'busy-node';

let sd: UserSystemd;
let sim: Simulator;
let agent: AgentProcess;
let pkg: string;

const until = untilWith(() => agent?.stderr() ?? '');

function pod(name: string, command: string, spec: Record<string, unknown> = {}): any {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default' }, spec: { nodeName: NODE, containers: [{ name: 'main', image: 'svc:1.0', command: [command] }], ...spec } };
}

const unitOf = (name: string): string => `default-${name}-main.service`;
const getPod = (name: string): any => sim.get('v1', 'Pod', name, 'default');
const create = (p: any): Promise<unknown> => clients(sim).core.createNamespacedPod({ namespace: 'default', body: p });

beforeAll(async () => {
  sd = await startUserSystemd();
  sim = await startSimulator({ externalNodes: [NODE] });
  pkg = path.join(sd.base, 'packages');
  fs.mkdirSync(path.join(pkg, 'svc-1.0'), { recursive: true });
  fs.writeFileSync(path.join(pkg, 'svc-1.0', 'serve.sh'), '#!/bin/sh\nexec sleep 1d\n', { mode: 0o755 });
  // Ignores SIGTERM: its stop takes the whole grace period (until SIGKILL).
  fs.writeFileSync(path.join(pkg, 'svc-1.0', 'stubborn.sh'), "#!/bin/sh\ntrap '' TERM\nwhile :; do sleep 1; done\n", { mode: 0o755 });
  agent = startAgent(['--node', NODE, '--session', '--package-dir', pkg, '--kubeconfig', sim.kubeconfigPath, '--node-ip', '10.9.8.4', '--resync', '3600'], sd.env);
  await agent.waitFor(/Watching the pods of node/);
}, 60_000);

afterAll(async () => {
  await agent?.stop('SIGKILL');
  await sim?.stop();
  await sd?.stop();
});

describe('agent run reconciles pods independently', () => {
  it('starts a new pod while another takes its 300 s grace period to stop', async () => {
    await create(pod('slow', 'stubborn.sh', { terminationGracePeriodSeconds: 300 }));
    await until('slow Running', () => getPod('slow')?.status?.phase === 'Running');
    await clients(sim).core.deleteNamespacedPod({ name: 'slow', namespace: 'default' });
    await until('slow stopping', () => sd.show(unitOf('slow'), 'ActiveState') === 'deactivating');

    try {
      const t0 = Date.now();
      await create(pod('quick', 'serve.sh'));
      await until('quick Running', () => getPod('quick')?.status?.phase === 'Running');
      console.log(`a pod started ${Date.now() - t0} ms after its creation while another stops for 300 s`);
      expect(sd.show(unitOf('slow'), 'ActiveState')).toBe('deactivating');
      expect(sd.show(unitOf('quick'), 'ActiveState')).toBe('active');
    } finally {
      // The stop ends when the process dies; the unit is then removed and the object deleted.
      sd.systemctl('kill', '--signal=SIGKILL', unitOf('slow'));
    }
    await until('slow gone', () => getPod('slow') === undefined);
    expect(fs.existsSync(path.join(sd.unitDir, unitOf('slow')))).toBe(false);
  });

  it('retries a failed DELETE of the pod object with backoff', async () => {
    await create(pod('again', 'serve.sh'));
    await until('again Running', () => getPod('again')?.status?.phase === 'Running');
    await clients(sim).core.deleteNamespacedPod({ name: 'again', namespace: 'default' });
    // The agent's own DELETE (grace period 0, once the unit is stopped) fails twice.
    sim.failNext(2, 503, 'DELETE /api/v1/namespaces/default/pods/again');
    await until('again gone', () => getPod('again') === undefined, 10_000);
    expect(agent.stderr().match(/The pod \[default\/again\] could not be deleted/g)).toHaveLength(2);
    expect(agent.stderr()).toContain('The pod [default/again] was deleted with grace period 0');
  });

  it('retries a failed status write with backoff', async () => {
    sim.failNext(2, 503, '/api/v1/namespaces/default/pods/late/status');
    await create(pod('late', 'serve.sh'));
    await until('late Running', () => getPod('late')?.status?.phase === 'Running', 10_000);
    expect(agent.stderr().match(/The status of pod \[default\/late\] could not be updated/g)?.length).toBeGreaterThanOrEqual(1);
  });
});
