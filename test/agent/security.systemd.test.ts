/**
 * Issue 23, securityContext: a pod that passes PodSecurity `restricted` runs as its uid, without
 * capabilities, and cannot write /usr; one asking runAsNonRoot without a uid never gets a unit.
 * Real `systemd --user` (of root), the API simulator, the agent as its own process.
 */
import * as fs from 'fs';
import * as path from 'path';
import { nodeSuite } from './harness/node-suite';
import { TOLERATIONS } from './harness/tolerations';

jest.setTimeout(120_000);

const NODE = 'secure-node';

/** Where the probe writes what it saw: world-writable, as the pods run as other uids. */
let out: string;

const node = nodeSuite({
  node: NODE, nodeIp: '10.9.8.3',
  scripts: {
    'probe.sh': [
      '#!/bin/sh',
      'usr=writable; touch /usr/uyuni-agent-probe 2>/dev/null || usr=read-only',
      'rm -f /usr/uyuni-agent-probe',
      'echo "uid=$(id -u) gid=$(id -g) $(grep -E \'^Cap(Eff|Bnd|Amb)\' /proc/self/status | tr -s \'\\t\\n\' \' \')usr=$usr" > "$OUT"',
      '',
    ].join('\n'),
  },
  prepare: ({ sd, pkg }) => {
    out = path.join(sd.base, 'out');
    fs.mkdirSync(out, { mode: 0o777 });
    fs.chmodSync(out, 0o777);
    for (const d of [sd.base, pkg, path.join(pkg, 'svc-1.0')]) fs.chmodSync(d, 0o755);
  },
});
const { until, getPod, create, unitFile } = node;

/** A pod that passes PodSecurity `restricted`. */
function restricted(name: string, podSc: Record<string, unknown>): any {
  return {
    apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default' },
    spec: {
      nodeName: NODE, tolerations: TOLERATIONS, restartPolicy: 'Never', securityContext: podSc,
      volumes: [{ name: 'out', hostPath: { path: out } }],
      containers: [{
        name: 'main', image: 'svc:1.0', command: ['probe.sh'], env: [{ name: 'OUT', value: path.join(out, `${name}.txt`) }],
        volumeMounts: [{ name: 'out', mountPath: out }],
        securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] }, readOnlyRootFilesystem: true, seccompProfile: { type: 'RuntimeDefault' } },
      }],
    },
  };
}

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
    expect(fs.existsSync(unitFile('rooted'))).toBe(false);
    expect(fs.existsSync(path.join(out, 'rooted.txt'))).toBe(false);
  });
});
