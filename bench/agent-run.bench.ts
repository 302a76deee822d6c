/**
 * `agent run` on a real `systemd --user` against the API simulator, with 100 pods of the node
 * running: the time from a pod's creation in the API to its unit active (the unit's
 * PropertiesChanged signal), and from its deletion (`DELETE`, grace period 30) to the unit gone
 * (stopped, disabled, file removed, Reload done, pod object deleted by the agent), median of 20
 * each; and the agent's RSS while idle with those 100 pods. The agent runs with the environment
 * its unit gives it, NODE_OPTIONS=AGENT_NODE_OPTIONS (src/systemd/defaults.ts, its V8 heap
 * setting: a small young generation, so more scavenges); `AGENT_NODE_OPTIONS=` (empty) without it.
 *
 * Targets (issue 24): each median ≤ 300 ms; idle RSS ≤ 110 MB.
 */
import * as fs from 'fs';
import * as path from 'path';
import { SystemdManager, UNIT_IFACE, unitObjectPath } from '../src/agent/systemd-dbus';
import { startSimulator } from '../test/sim';
import { clients } from '../test/sim/helpers';
import { startAgent } from '../test/agent/harness/agent-process';
import { startUserSystemd } from '../test/agent/harness/systemd-user';
import { median } from './stats';
import { TOLERATIONS } from '../test/agent/harness/tolerations';
import { AGENT_NODE_OPTIONS } from '../src/systemd/defaults';

/** The installed command (bin/bundle.js: the bundles), which a node runs. */
const BIN = path.join(__dirname, '..', 'bin', 'uyuni-cdk.js');

const NODE = 'bench-node';
/** The unit's NODE_OPTIONS, or the environment's AGENT_NODE_OPTIONS (empty: none). */
const NODE_OPTIONS = process.env.AGENT_NODE_OPTIONS ?? AGENT_NODE_OPTIONS;
const IDLE_PODS = 100;
const ROUNDS = 20;
const MAX_MEDIAN_MS = 300;
const MAX_RSS_MB = 110;

const pod = (name: string): any => ({
  apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default' },
  spec: { nodeName: NODE, tolerations: TOLERATIONS, containers: [{ name: 'svc', image: 'noop:1.0', command: ['start.sh'], args: ['--name', name] }] },
});

async function until<T>(what: string, probe: () => T | undefined | false, ms = 60_000, every = 2): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = probe();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, every));
  }
}

function rssMb(pid: number): number {
  return Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;
}

async function main(): Promise<number> {
  const sd = await startUserSystemd();
  const sim = await startSimulator({ externalNodes: [NODE] });
  const core = clients(sim).core;
  const pkg = path.join(sd.base, 'packages');
  fs.mkdirSync(path.join(pkg, 'noop-1.0'), { recursive: true });
  fs.writeFileSync(path.join(pkg, 'noop-1.0', 'start.sh'), '#!/bin/sh\nexec sleep 1d\n', { mode: 0o755 });
  // The installed command (its bundle), as a node runs it. Its first start compiles the bundle and
  // writes the code cache: one start that fails at once (no kubeconfig) does that, so the figure is the agent's own.
  const warm = startAgent(['--node', NODE, '--session', '--kubeconfig', path.join(sd.base, 'none')], sd.env, BIN);
  if ((await warm.exited) !== 3) throw new Error(`warm-up: ${warm.stderr()}`);
  const mgr = await SystemdManager.connect({ session: true, address: sd.busAddress });
  const agent = startAgent(['--node', NODE, '--session', '--package-dir', pkg, '--kubeconfig', sim.kubeconfigPath], NODE_OPTIONS ? { ...sd.env, NODE_OPTIONS } : sd.env, BIN);
  try {
    // When each unit turned active, from systemd's own signals (no polling of systemctl).
    const activeAt = new Map<string, number>();
    await mgr.Subscribe();
    await mgr.watchUnitProperties((p, iface, changed) => {
      if (iface === UNIT_IFACE && changed.ActiveState === 'active' && !activeAt.has(p)) activeAt.set(p, performance.now());
    });

    for (let i = 0; i < IDLE_PODS; i++) await core.createNamespacedPod({ namespace: 'default', body: pod(`idle-${String(i).padStart(3, '0')}`) });
    await agent.waitFor(/Watching the pods/, 60_000);
    await until('100 pods Running', () => sim.list('v1', 'Pod', 'default').filter((p) => p.status?.phase === 'Running').length === IDLE_PODS);

    const create: number[] = [];
    const remove: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const name = `probe-${i}`;
      const unitPath = unitObjectPath(`default-${name}-svc.service`);
      const t0 = performance.now();
      await core.createNamespacedPod({ namespace: 'default', body: pod(name) });
      await until(`${name} active`, () => activeAt.has(unitPath));
      create.push(activeAt.get(unitPath)! - t0);
      await until(`${name} Running`, () => sim.get('v1', 'Pod', name, 'default')?.status?.phase === 'Running');

      const t1 = performance.now();
      await core.deleteNamespacedPod({ namespace: 'default', name });
      await until(`${name} gone`, () => !sim.get('v1', 'Pod', name, 'default'));
      remove.push(performance.now() - t1);
      if (fs.existsSync(path.join(sd.unitDir, `default-${name}-svc.service`))) throw new Error(`${name}: the unit file is still there`);
    }

    await new Promise((r) => setTimeout(r, 3000));
    const rss = rssMb(agent.child.pid!);
    const c = median(create);
    const d = median(remove);
    console.log(`pod created → unit active:   median ${c.toFixed(0)} ms (min ${Math.min(...create).toFixed(0)}, max ${Math.max(...create).toFixed(0)}) of ${ROUNDS}, target ≤ ${MAX_MEDIAN_MS}`);
    console.log(`pod deleted → unit gone:     median ${d.toFixed(0)} ms (min ${Math.min(...remove).toFixed(0)}, max ${Math.max(...remove).toFixed(0)}) of ${ROUNDS}, target ≤ ${MAX_MEDIAN_MS}`);
    console.log(`agent RSS idle, ${IDLE_PODS} pods: ${rss.toFixed(1)} MB, target ≤ ${MAX_RSS_MB}${NODE_OPTIONS ? ` (NODE_OPTIONS=${NODE_OPTIONS})` : ' (no NODE_OPTIONS)'}`);
    return c <= MAX_MEDIAN_MS && d <= MAX_MEDIAN_MS && rss <= MAX_RSS_MB ? 0 : 1;
  } finally {
    await agent.stop();
    mgr.close();
    await sim.stop();
    await sd.stop();
  }
}

main().then((code) => process.exit(code), (e) => {
  console.error(e);
  process.exit(1);
});
