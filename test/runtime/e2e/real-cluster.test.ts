/**
 * Opt-in: the same verbs against a real cluster, when `UYUNI_CDK_REAL_CLUSTER=1` and KUBECONFIG
 * names one (kind, k3s, ...). Works in a namespace of its own and removes it at the end.
 *   UYUNI_CDK_REAL_CLUSTER=1 KUBECONFIG=~/.kube/config npx jest test/runtime/e2e/real-cluster
 */
import { randomBytes } from 'crypto';
import { cli } from './harness';
import { writePlan } from '../plans';

const enabled = process.env.UYUNI_CDK_REAL_CLUSTER === '1' && Boolean(process.env.KUBECONFIG);

(enabled ? describe : describe.skip)('against a real cluster', () => {
  jest.setTimeout(300_000);
  const ns = `uyuni-cdk-e2e-${randomBytes(3).toString('hex')}`;
  const inspect = {
    apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'inspect', namespace: ns },
    spec: { backoffLimit: 0, template: { spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'busybox:1.36', command: ['sh', '-c', 'echo inspecting; echo pg_version=16'] }] } } },
  };
  const plan = () => writePlan([
    { name: 'namespace', objects: [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }] },
    { name: 'inspect', objects: [inspect], factsFrom: { apiVersion: 'batch/v1', kind: 'Job', name: 'inspect', namespace: ns }, timeoutSeconds: 240 },
    {
      name: 'config', objects: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cfg', namespace: ns }, data: { a: 'b' } }],
      gates: [{ type: 'compare-versions', left: { value: '17' }, op: '>=', right: { fact: 'pg_version' }, message: 'no downgrade' }],
      waits: [{ object: { apiVersion: 'v1', kind: 'ConfigMap', name: 'cfg', namespace: ns }, for: 'exists' }],
    },
  ], { name: 'e2e' });
  const kubeconfig = (process.env.KUBECONFIG ?? '').split(':')[0];
  let dir: string;

  beforeAll(() => {
    dir = plan();
  });

  afterAll(async () => {
    await cli('destroy', dir, { kubeconfig, namespace: ns, yes: true, purgeVolumes: true });
  });

  it('runs, resumes without re-running, shows status, and destroys', async () => {
    const first = await cli('run', dir, { kubeconfig });
    expect(first.out).toContain('facts: pg_version=16');
    expect(first.code).toBe(0);
    const again = await cli('run', dir, { kubeconfig });
    expect(again.code).toBe(0);
    expect(again.out).toContain('inspect: skipped');
    const status = await cli('status', dir, { kubeconfig, output: 'json' });
    expect(JSON.parse(status.out).steps.map((s: any) => s.state)).toEqual(['done', 'done', 'done']);
    const dry = await cli('destroy', dir, { kubeconfig });
    expect(dry.out).toMatch(/would delete\s+Job\/inspect/);
  });
});
