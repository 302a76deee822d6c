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
import * as fs from 'fs';
import * as path from 'path';
import { startSimulator } from '../test/sim';
import { clients } from '../test/sim/helpers';
import { startAgent } from '../test/agent/harness/agent-process';
import { startUserSystemd } from '../test/agent/harness/systemd-user';
import { TOLERATIONS } from '../test/agent/harness/tolerations';
import { AGENT_NODE_OPTIONS } from '../src/systemd/defaults';

const BIN = process.env.UYUNI_CDK_BIN ?? path.join(__dirname, '..', 'bin', 'uyuni-cdk.js');
const NODE = 'bench-node';
const COUNTS = (process.env.PODS ?? '0,100,1000').split(',').map(Number);
const MAX_RSS_MB = 90;
/** Idle this long before the RSS is read: one of the agent's 10 s ticks, on which it collects a burst's garbage (src/agent/heap.ts), and a margin. */
const IDLE_MS = Number(process.env.IDLE_MS ?? 12_000);
/** The unit's NODE_OPTIONS, or the environment's AGENT_NODE_OPTIONS (empty: none). */
const NODE_OPTIONS = process.env.AGENT_NODE_OPTIONS ?? AGENT_NODE_OPTIONS;

const pod = (name: string): any => ({
  apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default', labels: { app: 'idle' }, annotations: { note: 'a pod as a Deployment makes it' } },
  spec: { nodeName: NODE, tolerations: TOLERATIONS, containers: [{ name: 'svc', image: 'noop:1.0', command: ['start.sh'], args: ['--name', name] }] },
});

async function until(what: string, probe: () => boolean, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

const rssMb = (pid: number): number => Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;

async function main(): Promise<number> {
  const sd = await startUserSystemd();
  const sim = await startSimulator({ externalNodes: [NODE] });
  const core = clients(sim).core;
  const pkg = path.join(sd.base, 'packages');
  fs.mkdirSync(path.join(pkg, 'noop-1.0'), { recursive: true });
  fs.writeFileSync(path.join(pkg, 'noop-1.0', 'start.sh'), '#!/bin/sh\nexec sleep 1d\n', { mode: 0o755 });
  // the first start compiles the bundle and writes its code cache: a start that fails at once does that
  const warm = startAgent(['--node', NODE, '--session', '--kubeconfig', path.join(sd.base, 'none')], sd.env, BIN);
  if ((await warm.exited) !== 3) throw new Error(`warm-up: ${warm.stderr()}`);
  let made = 0;
  let missed = false;
  try {
    for (const n of COUNTS) {
      for (; made < n; made++) await core.createNamespacedPod({ namespace: 'default', body: pod(`idle-${String(made).padStart(4, '0')}`) });
      const agent = startAgent(['--node', NODE, '--session', '--package-dir', pkg, '--kubeconfig', sim.kubeconfigPath], NODE_OPTIONS ? { ...sd.env, NODE_OPTIONS } : sd.env, BIN);
      try {
        await agent.waitFor(/Watching the pods/, 300_000);
        // every pod handled: Running, or (past --max-pods, 110 as a kubelet's) Failed with reason
        // OutOfpods; all of them are in the agent's informer and book either way
        await until(`${n} pods Running or OutOfpods`, () => sim.list('v1', 'Pod', 'default').filter((p) => p.status?.phase === 'Running' || p.status?.reason === 'OutOfpods').length === n, 300_000);
        await new Promise((r) => setTimeout(r, IDLE_MS));
        const rss = rssMb(agent.child.pid!);
        console.log(`agent RSS idle, ${n} pods: ${rss.toFixed(1)} MB, target ≤ ${MAX_RSS_MB}${NODE_OPTIONS ? ` (NODE_OPTIONS=${NODE_OPTIONS})` : ' (no NODE_OPTIONS)'}`);
        if (rss > MAX_RSS_MB) missed = true;
      } finally {
        await agent.stop();
      }
    }
  } finally {
    await sim.stop();
    await sd.stop();
  }
  return missed ? 1 : 0;
}

main().then((code) => process.exit(code), (e) => {
  console.error(e);
  process.exit(1);
});
