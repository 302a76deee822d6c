/**
 * The verbs on a real cluster: the local control plane by default (test/cluster/plane, where the
 * fake kubelet's scenario prints the inspect Job's lines), or a cluster of your own (kind, k3s,
 * ...) with `UYUNI_CDK_REAL_CLUSTER=1` and KUBECONFIG naming it: there busybox really runs and
 * prints them. Portable: nothing here but the scenario depends on the local plane. Works in a
 * namespace of its own and removes it at the end.
 *   npm run test:cluster -- test/cluster/real-cluster
 *   UYUNI_CDK_REAL_CLUSTER=1 KUBECONFIG=~/.kube/config npx jest -c jest.cluster.config.js test/cluster/real-cluster
 * (with UYUNI_CDK_REAL_CLUSTER=1 the global setup starts no plane, so run this file alone)
 */
import { randomBytes } from 'crypto';
import { cli } from '../runtime/e2e/harness';
import { NS, writePlan } from '../runtime/plans';
import { plane } from './helpers';

const own = process.env.UYUNI_CDK_REAL_CLUSTER === '1';
if (own && !process.env.KUBECONFIG) throw new Error('UYUNI_CDK_REAL_CLUSTER=1 needs KUBECONFIG naming the cluster to test against');

describe(own ? `against the cluster of KUBECONFIG (${process.env.KUBECONFIG})` : 'against the local control plane', () => {
  const ns = `uyuni-cdk-e2e-${randomBytes(3).toString('hex')}`;
  const local = own ? undefined : plane();
  // the plan's objects name its namespace (NS); `namespace: ns` moves them into one of the test's own
  const inspect = {
    apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'inspect', namespace: NS },
    spec: { backoffLimit: 0, template: { spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'busybox:1.36', command: ['sh', '-c', 'echo inspecting; echo pg_version=16'] }] } } },
  };
  const plan = () => writePlan([
    { name: 'namespace', objects: [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } }] },
    { name: 'inspect', objects: [inspect], factsFrom: { apiVersion: 'batch/v1', kind: 'Job', name: 'inspect', namespace: NS }, timeoutSeconds: 240 },
    {
      name: 'config', objects: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cfg', namespace: NS }, data: { a: 'b' } }],
      gates: [{ type: 'compare-versions', left: { value: '17' }, op: '>=', right: { fact: 'pg_version' }, message: 'no downgrade' }],
      waits: [{ object: { apiVersion: 'v1', kind: 'ConfigMap', name: 'cfg', namespace: NS }, for: 'exists' }],
    },
  ], { name: 'e2e' });
  const kubeconfig = local ? local.kubeconfig : (process.env.KUBECONFIG ?? '').split(':')[0];
  let dir: string;

  beforeAll(() => {
    dir = plan();
    // the fake kubelet runs no image: its scenario prints what busybox would
    local?.scenario({ jobs: { inspect: { logs: ['inspecting', 'pg_version=16'] } } }, ns);
  });

  afterAll(async () => {
    await cli('destroy', dir, { kubeconfig, namespace: ns, yes: true, purgeVolumes: true });
  });

  it('runs, resumes without re-running, shows status, and destroys', async () => {
    const first = await cli('run', dir, { kubeconfig, namespace: ns });
    expect(first.err).toBe('');
    expect(first.out).toContain('facts: pg_version=16');
    expect(first.code).toBe(0);
    const again = await cli('run', dir, { kubeconfig, namespace: ns });
    expect(again.code).toBe(0);
    expect(again.out).toContain('inspect: skipped');
    const status = await cli('status', dir, { kubeconfig, namespace: ns, output: 'json' });
    expect(JSON.parse(status.out).steps.map((s: any) => s.state)).toEqual(['done', 'done', 'done']);
    const dry = await cli('destroy', dir, { kubeconfig, namespace: ns });
    expect(dry.out).toMatch(/would delete\s+Job\/inspect/);
  });
});
