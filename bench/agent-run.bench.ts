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
import { median } from './stats';
import { agentNode, benchPod as pod, nodeOptionsNote, rssMb, until } from './agent-node';

const IDLE_PODS = 100;
const ROUNDS = 20;
const MAX_MEDIAN_MS = 300;
const MAX_RSS_MB = 110;

async function main(): Promise<number> {
  const node = await agentNode();
  const { sd, sim, core } = node;
  const mgr = await SystemdManager.connect({ session: true, address: sd.busAddress });
  const agent = node.start();
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
    console.log(`agent RSS idle, ${IDLE_PODS} pods: ${rss.toFixed(1)} MB, target ≤ ${MAX_RSS_MB}${nodeOptionsNote()}`);
    return c <= MAX_MEDIAN_MS && d <= MAX_MEDIAN_MS && rss <= MAX_RSS_MB ? 0 : 1;
  } finally {
    await agent.stop();
    mgr.close();
    await node.stop();
  }
}

main().then((code) => process.exit(code), (e) => {
  console.error(e);
  process.exit(1);
});
