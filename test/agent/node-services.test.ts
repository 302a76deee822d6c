import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { parseConfig } from '../../src/config/load';
import { nodeServicesProblems } from '../../src/plans/node-services';
import { AGENT_NODE_OPTIONS, PodLike, renderAgentUnit, renderPodUnits } from '../../src/systemd';
import { defaultConfigWith, synthYaml } from '../helpers/synth';
import { REFERENCE_UNIT } from './reference';

/** The pod of the #312 test, as the nodeServices section carries it. */
const NOOP = {
  name: 'cleanup-test-ok',
  nodeName: 'localhost',
  containers: [{ name: 'noop-service', image: 'noop-service:1.0.0', command: ['noop-service-1.0.0/start.sh'] }],
};


describe('the node-services plan', () => {
  const out = synthYaml(defaultConfigWith({ nodeServices: { pods: [NOOP] } }));
  const plan = out['node-services'];

  it('writes the Pod step, uyuni.plan, the units for review and the agent\'s unit', () => {
    expect(plan.plan.steps.map((s) => s.name)).toEqual(['pods']);
    expect(plan.plan.selector['app.kubernetes.io/part-of']).toBe('uyuni-node-services');
    expect(fs.readdirSync(path.join(plan.dir, 'systemd'))).toEqual(['default-cleanup-test-ok-noop-service.service']);
    expect(fs.readFileSync(path.join(plan.dir, 'systemd', 'default-cleanup-test-ok-noop-service.service'), 'utf8')).toBe(REFERENCE_UNIT);
    expect(fs.readFileSync(path.join(out.root, 'agent', 'uyuni-cdk-agent.service'), 'utf8')).toBe(renderAgentUnit({ kubeconfig: '/root/.kube/config' }));
  });

  it('emits the Pod of the #312 test: node, selector and toleration of systemd-backed nodes', () => {
    const pod = plan.find('Pod', 'cleanup-test-ok');
    expect(pod.metadata.namespace).toBe('default');
    expect(pod.spec).toEqual({
      nodeName: 'localhost',
      nodeSelector: { 'kubernetes.io/arch': 'stackable-linux' },
      tolerations: [{ key: 'kubernetes.io/arch', operator: 'Equal', value: 'stackable-linux' }],
      restartPolicy: 'Always',
      containers: [{ name: 'noop-service', image: 'noop-service:1.0.0', command: ['noop-service-1.0.0/start.sh'] }],
    });
  });

  it('runs `agent run` from nodeServices.agentExecutable (default /usr/local/bin/uyuni-cdk)', () => {
    const unit = fs.readFileSync(path.join(out.root, 'agent', 'uyuni-cdk-agent.service'), 'utf8');
    expect(unit).toContain('\nExecStart=/usr/local/bin/uyuni-cdk agent run --node %H ');
    expect(unit).toContain('\nType=notify\n');
    expect(unit).toContain('\nRestart=always\n');
    const custom = synthYaml(defaultConfigWith({ nodeServices: { agentExecutable: '/opt/uyuni cdk/uyuni-cdk-agent', pods: [NOOP] } }));
    expect(fs.readFileSync(path.join(custom.root, 'agent', 'uyuni-cdk-agent.service'), 'utf8')).toContain('\nExecStart="/opt/uyuni cdk/uyuni-cdk-agent" agent run --node %H ');
    expect(() => parseConfig(defaultConfigWith({ nodeServices: { agentExecutable: 'uyuni-cdk' } }), 'test.yaml')).toThrow(/nodeServices\.agentExecutable/);
  });

  it('runs the agent with its V8 heap setting, which Node takes from the unit\'s environment (issue 36)', () => {
    const unit = fs.readFileSync(path.join(out.root, 'agent', 'uyuni-cdk-agent.service'), 'utf8');
    expect(unit).toContain(`\nEnvironment="NODE_OPTIONS=${AGENT_NODE_OPTIONS}"\n`);
    // what a process started with it gets: a young generation that stays at 1 MB per semi-space
    // under an allocation that grows Node 20's default to 16 MB
    const semiSpaceMb = (env: NodeJS.ProcessEnv): number => Number(execFileSync(process.execPath, ['-e', `
      const keep = [];
      for (let i = 0; i < 100; i++) { keep.push(Array.from({ length: 20000 }, (_, j) => ({ j }))); if (keep.length > 10) keep.shift(); }
      process.stdout.write(String(require('v8').getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size / 2 / 1048576));
    `], { encoding: 'utf8', env: { ...process.env, ...env } }));
    const assignment = /\nEnvironment="NODE_OPTIONS=([^"\n]*)"\n/.exec(unit)![1];
    expect(semiSpaceMb({ NODE_OPTIONS: assignment })).toBeLessThanOrEqual(1);
    expect(semiSpaceMb({ NODE_OPTIONS: '' })).toBeGreaterThan(1);
  });

  it('records exactly what the agent renders from the emitted Pod (one source for both)', () => {
    const pod = plan.find('Pod', 'cleanup-test-ok') as PodLike;
    const [unit] = renderPodUnits(pod, { kubeconfig: '/root/.kube/config' });
    expect(fs.readFileSync(path.join(plan.dir, 'systemd', unit.name), 'utf8')).toBe(unit.content);
  });

  it('puts pods of other namespaces after their Namespace and writes init container units', () => {
    const more = synthYaml(defaultConfigWith({
      nodeServices: {
        pods: [NOOP, {
          name: 'web', namespace: 'apps', nodeName: 'node-2',
          initContainers: [{ name: 'prepare', image: 'web:2', command: ['bin/prepare'] }],
          containers: [{ name: 'server', image: 'web:2', command: ['bin/server'], args: ['--port', '8080'], env: [{ name: 'MODE', value: 'a b' }] }],
        }],
      },
    }))['node-services'];
    expect(more.plan.steps.map((s) => s.name)).toEqual(['namespaces', 'pods']);
    expect(fs.readdirSync(path.join(more.dir, 'systemd')).sort()).toEqual(['apps-web-prepare.service', 'apps-web-server.service', 'default-cleanup-test-ok-noop-service.service']);
    const server = fs.readFileSync(path.join(more.dir, 'systemd', 'apps-web-server.service'), 'utf8');
    expect(server).toContain('\nRequires=apps-web-prepare.service\n');
    expect(server).toContain('\nEnvironment="MODE=a b"\n');
    expect(server).toContain('\nExecStart=/opt/stackable/packages/web-2/bin/server --port 8080\n');
  });

  it('reports pods the renderer refuses and pods whose units would share a name, by field', () => {
    const config = parseConfig(defaultConfigWith({
      nodeServices: {
        pods: [
          { name: 'c', namespace: 'a-b', nodeName: 'n', containers: [{ name: 'x', image: 'i:1', command: ['/x'] }] },
          { name: 'b-c', namespace: 'a', nodeName: 'n', containers: [{ name: 'x', image: 'i:1', command: ['/x'] }] },
          { name: 'nocommand', nodeName: 'n', containers: [{ name: 'x', image: 'i:1' }] },
        ],
      },
    }), 'test.yaml');
    expect(nodeServicesProblems(config)).toEqual([
      'nodeServices.pods[1]: its unit a-b-c-x.service is also the unit of nodeServices.pods[0] (a-b/c); rename one of them',
      expect.stringMatching(/^nodeServices\.pods\[2\]: SystemdPod default\/nocommand: .*command is required/),
    ]);
  });

  it('writes an agent unit that systemd-analyze verify accepts', () => {
    const dir = fs.mkdtempSync(path.join(out.root, 'verify-'));
    const file = path.join(dir, 'uyuni-cdk-agent.service');
    fs.writeFileSync(file, renderAgentUnit({ executable: process.execPath, kubeconfig: '/root/.kube/config' }));
    // Only the unit's own problems count (not the host's units it is checked against).
    const r = (() => {
      try {
        return execFileSync('systemd-analyze', ['verify', '--man=no', file], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
      } catch (e) {
        return String((e as { stderr?: string }).stderr ?? e);
      }
    })();
    expect(r.split('\n').filter((l) => l.includes('uyuni-cdk-agent'))).toEqual([]);
    expect(fs.readFileSync(file, 'utf8')).toContain(`\nExecStart=${process.execPath} agent run --node %H --package-dir /opt/stackable/packages --slice system-stackable.slice --kubeconfig /root/.kube/config\n`);
  });
});
