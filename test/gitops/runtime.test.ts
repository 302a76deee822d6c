// The runtime on a GitOps-ready plan (sync waves on every object, the credentials step): a run,
// then `plan` says nothing changes (the annotations are part of what was applied, the Job's spec
// hash is that of its spec) and a second run creates no Job.
import { defaultConfigWith, synthYaml } from '../helpers/synth';
import { cli } from '../runtime/e2e/harness';
import { Simulator, startSimulator } from '../sim';

let sim: Simulator;
afterEach(async () => {
  await sim?.stop();
});

const actions = (out: string): Record<string, string> => {
  const r: Record<string, string> = {};
  for (const s of JSON.parse(out).steps) for (const o of s.objects) r[o.object.split(' ')[0]] = o.action;
  return r;
};

describe('uyuni-cdk run and plan on install with gitops.credentials: job', () => {
  it('runs it, then plans every object unchanged (Jobs skip-complete), and a second run creates nothing', async () => {
    const { install } = synthYaml(defaultConfigWith({ gitops: { credentials: 'job' } }));
    sim = await startSimulator({ clockSpeed: 2000, deployments: { uyuni: {}, db: {} } });
    const kubeconfig = sim.kubeconfigPath;
    const first = await cli('run', install.dir, { kubeconfig });
    expect({ code: first.code, err: first.err }).toEqual({ code: 0, err: '' });
    expect(sim.get('batch/v1', 'Job', 'uyuni-credentials', 'uyuni')?.metadata?.annotations).toMatchObject({ 'argocd.argoproj.io/sync-wave': '1' });
    expect(sim.get('apps/v1', 'Deployment', 'uyuni', 'uyuni')?.metadata?.annotations).toMatchObject({ 'argocd.argoproj.io/sync-wave': String(install.plan.steps.length - 1) });

    const planned = await cli('plan', install.dir, { kubeconfig, output: 'json' });
    expect(planned.code).toBe(0);
    const got = actions(planned.out);
    const objects = install.plan.steps.flatMap((s) => s.objects).map((o) => `${o.kind}/${o.name}`);
    expect(Object.keys(got).sort()).toEqual([...objects].sort());
    // Nothing to create or update; the objects of a step whose Job is done may show as skipped with it.
    const changing = Object.entries(got).filter(([, a]) => !['unchanged', 'skip-complete', 'skip'].includes(a));
    expect(changing).toEqual([]);
    expect(got['Job/uyuni-credentials']).toBe('skip-complete');
    expect(got['Deployment/uyuni']).toBe('unchanged');

    const writes = sim.requests.length;
    const second = await cli('run', install.dir, { kubeconfig });
    expect(second.code).toBe(0);
    expect(sim.requests.slice(writes).filter((q) => q.method === 'POST' && q.path.endsWith('/jobs'))).toEqual([]);
  }, 120_000);
});
