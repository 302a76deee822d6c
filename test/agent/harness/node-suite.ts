/**
 * One node for an agent suite on a real `systemd --user`: the user manager, the API simulator with
 * the node as an external node, a package directory `svc-1.0` holding the suite's scripts, and the
 * agent as its own process (`agent run --session`), started in `beforeAll` unless `start: false`.
 * Registers `beforeAll`/`afterAll`; `afterAll` stops what was started, by PID.
 *
 * The fields are filled in by `beforeAll`: read them inside tests and hooks only.
 */
import * as fs from 'fs';
import * as path from 'path';
import { startSimulator, Simulator } from '../../sim';
import { clients } from '../../sim/helpers';
import { AgentProcess, startAgent } from './agent-process';
import { startUserSystemd, UserSystemd } from './systemd-user';
import { Until, untilWith } from './until';

export interface NodeSuiteOptions {
  readonly node: string;
  /** `--node-ip`: each suite its own, so their status writes are told apart. */
  readonly nodeIp: string;
  /** Scripts of package `svc-1.0` (mode 0755), by file name. */
  readonly scripts: Readonly<Record<string, string>>;
  /** Flags added to `agent run`. */
  readonly args?: readonly string[];
  /** Runs after the package directory is written, before the agent starts. */
  readonly prepare?: (s: NodeSuite) => void;
  /** Start the agent in `beforeAll` (default) or leave it to the tests (`s.start()`). */
  readonly start?: boolean;
  /** The default deadline of `until`. */
  readonly untilMs?: number;
}

export interface NodeSuite {
  sd: UserSystemd;
  sim: Simulator;
  /** The `--package-dir`. */
  pkg: string;
  agent: AgentProcess | undefined;
  /** Polls a probe; a timeout names what it waited for and shows the agent's stderr. */
  readonly until: Until;
  /** Starts `agent run` with the suite's flags and waits until it watches the node's pods. */
  start(): Promise<AgentProcess>;
  getPod(name: string, namespace?: string): any;
  /** Creates the pod, and its namespace first when it is not `default`. */
  create(pod: any): Promise<void>;
  remove(name: string, namespace?: string): Promise<unknown>;
  /** The unit file the agent writes for a pod's container. */
  unitFile(name: string, container?: string, namespace?: string): string;
}

export function nodeSuite(o: NodeSuiteOptions): NodeSuite {
  const s: NodeSuite = {
    sd: undefined as unknown as UserSystemd,
    sim: undefined as unknown as Simulator,
    pkg: '',
    agent: undefined,
    until: untilWith(() => s.agent?.stderr() ?? '', o.untilMs),
    async start() {
      const agent = startAgent(['--node', o.node, '--session', '--package-dir', s.pkg, '--kubeconfig', s.sim.kubeconfigPath,
        '--node-ip', o.nodeIp, '--resync', '3600', ...(o.args ?? [])], s.sd.env);
      s.agent = agent;
      await agent.waitFor(/Watching the pods of node/);
      return agent;
    },
    getPod: (name, namespace = 'default') => s.sim.get('v1', 'Pod', name, namespace),
    async create(pod) {
      const core = clients(s.sim).core;
      const namespace: string = pod.metadata.namespace ?? 'default';
      if (namespace !== 'default') await core.createNamespace({ body: { metadata: { name: namespace } } }).catch(() => undefined);
      await core.createNamespacedPod({ namespace, body: pod });
    },
    remove: (name, namespace = 'default') => clients(s.sim).core.deleteNamespacedPod({ name, namespace }),
    unitFile: (name, container = 'main', namespace = 'default') => path.join(s.sd.unitDir, `${namespace}-${name}-${container}.service`),
  };

  beforeAll(async () => {
    s.sd = await startUserSystemd();
    s.sim = await startSimulator({ externalNodes: [o.node] });
    s.pkg = path.join(s.sd.base, 'packages');
    const dir = path.join(s.pkg, 'svc-1.0');
    fs.mkdirSync(dir, { recursive: true });
    for (const [file, text] of Object.entries(o.scripts)) fs.writeFileSync(path.join(dir, file), text, { mode: 0o755 });
    o.prepare?.(s);
    if (o.start !== false) await s.start();
  }, 60_000);

  afterAll(async () => {
    await s.agent?.stop('SIGKILL');
    await s.sim?.stop();
    await s.sd?.stop();
  });

  return s;
}
