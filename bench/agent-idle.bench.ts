/**
 * The agent's idle memory (issue 36): `agent run` (the installed command, as a node runs it) on a
 * real `systemd --user` against the API simulator, with 0, 100 and 1000 pods bound to its node
 * (past its --max-pods, 110, a pod is Failed with reason OutOfpods: it runs 110 units, and keeps
 * all 1000 pods in its informer and book);
 * for each count a fresh agent (it adopts the units already there), its RSS once every pod is
 * Running and it has been idle for 12 s (one of its 10 s ticks, on which it collects the
 * garbage of its start-up: src/agent/heap.ts). `UYUNI_CDK_BIN` names another installed command
 * (a build of an earlier commit, for a before/after). What it keeps per pod is what it reads
 * (src/agent/api-pod.ts `keptPod`). It runs with the environment the agent's unit gives it:
 * NODE_OPTIONS=AGENT_NODE_OPTIONS (src/systemd/defaults.ts, its V8 heap setting);
 * `AGENT_NODE_OPTIONS=` (empty) measures without it, any other value with that instead.
 *
 * Target (issue 36): ≤ 90 MB at each count.
 */
import { agentNode, benchPod, nodeOptionsNote, rssMb, until } from './agent-node';

/** What a Deployment's pod carries besides (dropped by the agent's informer: src/agent/api-pod.ts keptPod). */
const IDLE_META = { labels: { app: 'idle' }, annotations: { note: 'a pod as a Deployment makes it' } };
const COUNTS = (process.env.PODS ?? '0,100,1000').split(',').map(Number);
const MAX_RSS_MB = 90;
/** Idle this long before the RSS is read: one of the agent's 10 s ticks, on which it collects a burst's garbage (src/agent/heap.ts), and a margin. */
const IDLE_MS = Number(process.env.IDLE_MS ?? 12_000);

async function main(): Promise<number> {
  const node = await agentNode();
  const { sim, core } = node;
  let made = 0;
  let missed = false;
  try {
    for (const n of COUNTS) {
      for (; made < n; made++) await core.createNamespacedPod({ namespace: 'default', body: benchPod(`idle-${String(made).padStart(4, '0')}`, IDLE_META) });
      const agent = node.start();
      try {
        await agent.waitFor(/Watching the pods/, 300_000);
        // every pod handled: Running, or (past --max-pods, 110 as a kubelet's) Failed with reason
        // OutOfpods; all of them are in the agent's informer and book either way
        await until(`${n} pods Running or OutOfpods`, () => sim.list('v1', 'Pod', 'default').filter((p) => p.status?.phase === 'Running' || p.status?.reason === 'OutOfpods').length === n, 300_000, 200);
        await new Promise((r) => setTimeout(r, IDLE_MS));
        const rss = rssMb(agent.child.pid!);
        console.log(`agent RSS idle, ${n} pods: ${rss.toFixed(1)} MB, target ≤ ${MAX_RSS_MB}${nodeOptionsNote()}`);
        if (rss > MAX_RSS_MB) missed = true;
      } finally {
        await agent.stop();
      }
    }
  } finally {
    await node.stop();
  }
  return missed ? 1 : 0;
}

main().then((code) => process.exit(code), (e) => {
  console.error(e);
  process.exit(1);
});
