/**
 * What the agent benchmarks share (`agent-idle`, `agent-run`): a node of their own on a real
 * `systemd --user` against the API simulator, with a package whose service sleeps, and the
 * installed command started as the agent's unit starts it (NODE_OPTIONS=AGENT_NODE_OPTIONS,
 * src/systemd/defaults.ts; `AGENT_NODE_OPTIONS=` (empty) measures without it, any other value
 * with that instead). `UYUNI_CDK_BIN` names another installed command (a build of an earlier
 * commit, for a before/after).
 */
import * as fs from 'fs';
import * as path from 'path';
import { startSimulator, Simulator } from '../test/sim';
import { clients } from '../test/sim/helpers';
import { AgentProcess, startAgent } from '../test/agent/harness/agent-process';
import { startUserSystemd, UserSystemd } from '../test/agent/harness/systemd-user';
import { TOLERATIONS } from '../test/agent/harness/tolerations';
import { AGENT_NODE_OPTIONS } from '../src/systemd/defaults';

/** The installed command (bin/bundle.js: the bundles), which a node runs. */
export const BIN = process.env.UYUNI_CDK_BIN ?? path.join(__dirname, '..', 'bin', 'uyuni-cdk.js');
export const NODE = 'bench-node';
/** The unit's NODE_OPTIONS, or the environment's AGENT_NODE_OPTIONS (empty: none). */
export const NODE_OPTIONS = process.env.AGENT_NODE_OPTIONS ?? AGENT_NODE_OPTIONS;

/** A pod of the bench's node running the package's service, as a Deployment would make it (`extra` metadata merged). */
export const benchPod = (name: string, metadata: Record<string, unknown> = {}): any => ({
  apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default', ...metadata },
  spec: { nodeName: NODE, tolerations: TOLERATIONS, containers: [{ name: 'svc', image: 'noop:1.0', command: ['start.sh'], args: ['--name', name] }] },
});

/** Resolves with what `probe` gives once it gives something, looking every `every` ms; fails past `ms`. */
export async function until<T>(what: string, probe: () => T | undefined | false, ms = 60_000, every = 2): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = probe();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, every));
  }
}

/** The resident set of a process, in MB. */
export const rssMb = (pid: number): number => Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;

/** How the agent ran: with the unit's NODE_OPTIONS, or without. */
export const nodeOptionsNote = (): string => (NODE_OPTIONS ? ` (NODE_OPTIONS=${NODE_OPTIONS})` : ' (no NODE_OPTIONS)');

export interface AgentNode {
  readonly sd: UserSystemd;
  readonly sim: Simulator;
  readonly core: ReturnType<typeof clients>['core'];
  /** Starts `agent run` on the node as its unit does. */
  start(): AgentProcess;
  stop(): Promise<void>;
}

/**
 * The node, with the installed command warmed: its first start compiles the bundle and writes
 * the code cache, and one start that fails at once (no kubeconfig) does that, so the figures
 * are the agent's own.
 */
export async function agentNode(): Promise<AgentNode> {
  const sd = await startUserSystemd();
  const sim = await startSimulator({ externalNodes: [NODE] });
  const pkg = path.join(sd.base, 'packages');
  fs.mkdirSync(path.join(pkg, 'noop-1.0'), { recursive: true });
  fs.writeFileSync(path.join(pkg, 'noop-1.0', 'start.sh'), '#!/bin/sh\nexec sleep 1d\n', { mode: 0o755 });
  const stop = async () => {
    await sim.stop();
    await sd.stop();
  };
  try {
    const warm = startAgent(['--node', NODE, '--session', '--kubeconfig', path.join(sd.base, 'none')], sd.env, BIN);
    if ((await warm.exited) !== 3) throw new Error(`warm-up: ${warm.stderr()}`);
  } catch (e) {
    await stop();
    throw e;
  }
  return {
    sd, sim, core: clients(sim).core, stop,
    start: () => startAgent(['--node', NODE, '--session', '--package-dir', pkg, '--kubeconfig', sim.kubeconfigPath], NODE_OPTIONS ? { ...sd.env, NODE_OPTIONS } : sd.env, BIN),
  };
}
