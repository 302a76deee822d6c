import * as fs from 'fs';
import * as path from 'path';
import { App, Chart } from 'cdk8s';
import type { NodePodConfig, UyuniConfig } from '../config/schema';
import { UyuniNamespace } from '../constructs/namespace';
import { SystemdPod } from '../constructs/systemd-pod';
import { AGENT_UNIT_NAME, renderAgentUnit } from '../systemd';
import { configTimeouts, PlanApp } from './plan-app';
import type { Synthesizer } from './synthesizer';

export const NODE_SERVICES_PLAN = 'node-services';
export const AGENT_DIR = 'agent';
/** Beside the plan's step files: the unit files the nodes' agents will write. */
export const UNITS_DIR = 'systemd';

const PART_OF = 'uyuni-node-services';

function podProps(config: UyuniConfig, pod: NodePodConfig) {
  const ns = config.nodeServices!;
  return {
    name: pod.name,
    namespace: pod.namespace,
    nodeName: pod.nodeName,
    restartPolicy: pod.restartPolicy,
    terminationGracePeriodSeconds: pod.terminationGracePeriodSeconds,
    initContainers: pod.initContainers,
    containers: pod.containers,
    packageDir: ns.packageDir,
    kubeconfig: ns.kubeconfig,
    partOf: PART_OF,
  } as const;
}

/**
 * What keeps a configuration's node pods from becoming units, each naming its field: a pod the
 * renderer refuses, or two pods whose units would share a name. For config checks and synth.
 */
export function nodeServicesProblems(config: UyuniConfig): string[] {
  // main() checks before it synthesizes, the synthesizer checks again for direct callers:
  // render the pods once per configuration.
  const known = checked.get(config);
  if (known) return known;
  const problems = findProblems(config);
  checked.set(config, problems);
  return problems;
}

const checked = new WeakMap<UyuniConfig, string[]>();

function findProblems(config: UyuniConfig): string[] {
  const problems: string[] = [];
  const owners = new Map<string, string>();
  const scratch = new Chart(new App(), 'check');
  for (const [i, pod] of (config.nodeServices?.pods ?? []).entries()) {
    let units: readonly { name: string }[];
    try {
      units = new SystemdPod(scratch, `pod-${i}`, podProps(config, pod)).units;
    } catch (e) {
      problems.push(`nodeServices.pods[${i}]: ${(e as Error).message}`);
      continue;
    }
    for (const u of units) {
      const other = owners.get(u.name);
      if (other) problems.push(`nodeServices.pods[${i}]: its unit ${u.name} is also the unit of ${other}; rename one of them`);
      else owners.set(u.name, `nodeServices.pods[${i}] (${pod.namespace}/${pod.name})`);
    }
  }
  return problems;
}

/**
 * The node-services plan (L3): the Pods of systemd-backed nodes as one step
 * (dist/node-services/, namespaces first when not `default`), the unit files their agents
 * will write (dist/node-services/systemd/*.service, for review), and the agent's own unit
 * (dist/agent/uyuni-cdk-agent.service).
 */
export function nodeServicesSynthesizer(config: UyuniConfig): Synthesizer {
  return {
    synth(root, generator) {
      const ns = config.nodeServices;
      if (!ns) throw new Error('the node-services plan needs a nodeServices section');
      const problems = nodeServicesProblems(config);
      if (problems.length) throw new Error(`node-services:\n${problems.join('\n')}`);

      fs.mkdirSync(path.join(root, AGENT_DIR), { recursive: true });
      fs.writeFileSync(path.join(root, AGENT_DIR, AGENT_UNIT_NAME), renderAgentUnit({ executable: ns.agentExecutable, packageDir: ns.packageDir, kubeconfig: ns.kubeconfig }));
      if (ns.pods.length === 0) return [AGENT_DIR];

      const namespaces = [...new Set(ns.pods.map((p) => p.namespace))];
      const plan = new PlanApp({
        name: NODE_SERVICES_PLAN,
        description: `${ns.pods.length} pods on systemd-backed nodes (${[...new Set(ns.pods.map((p) => p.nodeName))].join(', ')})`,
        namespace: namespaces[0],
        partOf: PART_OF,
        ...configTimeouts(config),
      });
      const others = namespaces.filter((n) => n !== 'default');
      plan.addStep('namespaces', { description: `namespaces ${others.join(', ')}` }, (chart) => {
        for (const name of others) new UyuniNamespace(chart, `Namespace-${name}`, { name, partOf: PART_OF, component: 'node-service' });
      });
      const pods: SystemdPod[] = [];
      plan.addStep('pods', { description: `Pods ${ns.pods.map((p) => `${p.namespace}/${p.name}`).join(', ')}` }, (chart) => {
        for (const pod of ns.pods) pods.push(new SystemdPod(chart, `${pod.namespace}-${pod.name}`, podProps(config, pod)));
      });
      const dir = path.join(root, NODE_SERVICES_PLAN);
      plan.synth(dir, generator);

      fs.mkdirSync(path.join(dir, UNITS_DIR));
      for (const unit of pods.flatMap((p) => p.units)) fs.writeFileSync(path.join(dir, UNITS_DIR, unit.name), unit.content);
      return [NODE_SERVICES_PLAN, AGENT_DIR];
    },
  };
}
