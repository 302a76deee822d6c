/**
 * Issue 23, securityContext: a pod that passes PodSecurity `restricted` runs as its uid, without
 * capabilities, and cannot write /usr; one asking runAsNonRoot without a uid never gets a unit.
 * Real `systemd --user` (of root), the API simulator, the agent as its own process.
 */
import * as fs from 'fs';
import * as path from 'path';
import { startSimulator, Simulator } from '../sim';
import { clients } from '../sim/helpers';
import { AgentProcess, startAgent } from './harness/agent-process';
import { startUserSystemd, UserSystemd } from './harness/systemd-user';
import { untilWith } from './harness/until';

jest.setTimeout(120_000);

const NODE = 'secure-node';

let sd: UserSystemd;
let sim: Simulator;
let agent: AgentProcess;
let pkg: string;
let out: string;

const until = untilWith(() => agent?.stderr() ?? '');

const getPod = (name: string): any => sim.get('v1', 'Pod', name, 'default');
const create = (p: any): Promise<unknown> => clients(sim).core.createNamespacedPod({ namespace: 'default', body: p });

/** A pod that passes PodSecurity `restricted`. */
function restricted(name: string, podSc: Record<string, unknown>): any {
  return {
    apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default' },
    spec: {
      nodeName: NODE, restartPolicy: 'Never', securityContext: podSc,
      volumes: [{ name: 'out', hostPath: { path: out } }],
      containers: [{
        name: 'main', image: 'svc:1.0', command: ['probe.sh'], env: [{ name: 'OUT', value: path.join(out, `${name}.txt`) }],
        volumeMounts: [{ name: 'out', mountPath: out }],
        securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] }, readOnlyRootFilesystem: true, seccompProfile: { type: 'RuntimeDefault' } },
      }],
    },
  };
}

beforeAll(async () => {
  sd = await startUserSystemd();
  sim = await startSimulator({ externalNodes: [NODE] });
  pkg = path.join(sd.base, 'packages');
  out = path.join(sd.base, 'out');
  fs.mkdirSync(out, { mode: 0o777 });
  fs.chmodSync(out, 0o777);
  fs.chmodSync(sd.base, 0o755);
  fs.mkdirSync(path.join(pkg, 'svc-1.0'), { recursive: true });
  fs.writeFileSync(path.join(pkg, 'svc-1.0', 'probe.sh'), [
    '#!/bin/sh',
    'usr=writable; touch /usr/uyuni-agent-probe 2>/dev/null || usr=read-only',
    'rm -f /usr/uyuni-agent-probe',
    'echo "uid=$(id -u) gid=$(id -g) $(grep -E \'^Cap(Eff|Bnd|Amb)\' /proc/self/status | tr -s \'\\t\\n\' \' \')usr=$usr" > "$OUT"',
    '',
  ].join('\n'), { mode: 0o755 });
  for (const d of [sd.base, pkg, path.join(pkg, 'svc-1.0')]) fs.chmodSync(d, 0o755);
  agent = startAgent(['--node', NODE, '--session', '--package-dir', pkg, '--kubeconfig', sim.kubeconfigPath, '--node-ip', '10.9.8.3', '--resync', '3600'], sd.env);
  await agent.waitFor(/Watching the pods of node/);
}, 60_000);

afterAll(async () => {
  await agent?.stop('SIGKILL');
  await sim?.stop();
  await sd?.stop();
});

describe('agent run honours securityContext', () => {
  it('runs a restricted pod as its uid, without capabilities, unable to write /usr', async () => {
    await create(restricted('locked', { runAsNonRoot: true, runAsUser: 1000, runAsGroup: 1000 }));
    const file = path.join(out, 'locked.txt');
    const text = await until('the probe', () => fs.existsSync(file) && fs.readFileSync(file, 'utf8'));
    expect(text).toMatch(/^uid=1000 gid=1000 /);
    expect(text).toContain('CapEff: 0000000000000000');
    expect(text).toContain('CapBnd: 0000000000000000');
    expect(text).toContain('usr=read-only');
    await until('Succeeded', () => getPod('locked')?.status?.phase === 'Succeeded');
  });

  it('refuses runAsNonRoot without a uid: Failed, no unit written', async () => {
    await create(restricted('rooted', { runAsNonRoot: true }));
    const failed = await until('Failed', () => getPod('rooted')?.status?.phase === 'Failed' && getPod('rooted'));
    expect(failed.status.containerStatuses[0].state.waiting.message).toMatch(/runAsNonRoot is true but the container would run as uid 0/);
    expect(fs.existsSync(path.join(sd.unitDir, 'default-rooted-main.service'))).toBe(false);
    expect(fs.existsSync(path.join(out, 'rooted.txt'))).toBe(false);
  });
});
