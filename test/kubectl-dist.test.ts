// The committed plans through Debian's kubectl (a client we did not write) against the API
// simulator: each step file applies on its own with `kubectl apply --server-side -f <file>`, in
// plan order, and `kubectl get` then sees every object the plan index lists.
import * as fs from 'fs';
import * as path from 'path';
import { readPlan } from '../src/plan/reader';
import { ROOT, tempDir } from './helpers/synth';
import { Simulator, startSimulator } from './sim';
import { kubectl as kubectlIn, KUBECTL } from './sim/helpers';

const kubectl = (sim: Simulator, cache: string, args: string[]) => kubectlIn(sim, cache, args, 60_000);

/** A simulator and a kubectl cache directory for the tests of one describe block, stopped and removed after. */
function cluster(): { sim: Simulator; cache: string } {
  const c = { sim: undefined as unknown as Simulator, cache: tempDir('kubectl-cache-') };
  beforeAll(async () => {
    if (!fs.existsSync(KUBECTL)) throw new Error(`${KUBECTL} is missing: apt-get install kubectl (.ci/run does)`);
    c.sim = await startSimulator();
  });
  afterAll(async () => {
    await c.sim?.stop();
    fs.rmSync(c.cache, { recursive: true, force: true });
  });
  return c;
}

/** The upgrade plan works on a server that exists: its namespace is made first when the plan has none. */
async function ensureNamespace(c: { sim: Simulator; cache: string }, plan: ReturnType<typeof readPlan>): Promise<void> {
  const hasNamespace = plan.steps.some((s) => s.objects.some((o) => o.kind === 'Namespace'));
  if (!hasNamespace && (await kubectl(c.sim, c.cache, ['get', 'namespace', plan.namespace])).code !== 0) {
    expect((await kubectl(c.sim, c.cache, ['create', 'namespace', plan.namespace])).code).toBe(0);
  }
}

describe.each(['install', 'migrate', 'upgrade', 'proxy', 'node-services'])('kubectl apply --server-side of dist/%s', (name) => {
  const c = cluster();

  it('applies every step file on its own, in order, and kubectl get finds every listed object', async () => {
    const { sim, cache } = c;
    const dir = path.join(ROOT, 'dist', name);
    const plan = readPlan(dir);
    await ensureNamespace(c, plan);
    for (const step of plan.steps) {
      const r = await kubectl(sim, cache, ['apply', '--server-side', '--field-manager', 'kubectl-test', '-f', path.join(dir, step.file)]);
      expect({ step: step.name, code: r.code, stderr: r.stderr }).toEqual({ step: step.name, code: 0, stderr: '' });
      expect(r.stdout.trim().split('\n')).toHaveLength(step.objects.length);
    }
    for (const step of plan.steps) {
      for (const o of step.objects) {
        // CRD kinds by their full name: kind.group (cert-manager.io, traefik.io).
        const group = o.apiVersion.includes('/') ? o.apiVersion.split('/')[0] : '';
        const kind = group.includes('.') && !group.endsWith('.k8s.io') ? `${o.kind.toLowerCase()}.${group}` : o.kind.toLowerCase();
        const r = await kubectl(sim, cache, ['get', kind, o.name, ...(o.namespace ? ['-n', o.namespace] : []), '-o', 'json']);
        expect({ object: `${o.kind}/${o.name}`, code: r.code }).toEqual({ object: `${o.kind}/${o.name}`, code: 0 });
        const got = JSON.parse(r.stdout);
        expect(got.metadata.labels['app.kubernetes.io/managed-by']).toBe('uyuni-cdk');
      }
    }
  }, 240_000);
});

// The README's promise: a plan directory applies whole, as it is (uyuni.plan and Kustomization are
// no manifests kubectl reads). kubectl reads the files in name order, so the Namespace comes first.
describe.each(['install', 'migrate', 'upgrade', 'proxy', 'node-services'])('kubectl apply --server-side -f dist/%s/ (the whole directory)', (name) => {
  const c = cluster();

  it('applies every object of the plan in one command, with no error', async () => {
    const { sim, cache } = c;
    const dir = path.join(ROOT, 'dist', name);
    const plan = readPlan(dir);
    await ensureNamespace(c, plan);
    const r = await kubectl(sim, cache, ['apply', '--server-side', '--field-manager', 'kubectl-test', '-f', `${dir}/`]);
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
    const listed = plan.steps.flatMap((s) => s.objects);
    expect(r.stdout.trim().split('\n')).toHaveLength(listed.length);
    for (const o of listed) {
      expect(sim.get(o.apiVersion, o.kind, o.name, o.namespace)).toBeDefined();
    }
  }, 240_000);
});

describe('why the kustomization file is named Kustomization', () => {
  const c = cluster();
  const copy = tempDir('kubectl-dist-copy-');
  afterAll(() => fs.rmSync(copy, { recursive: true, force: true }));

  it('kubectl apply -f of the directory refuses it as kustomization.yaml (kind Kustomization is no API kind)', async () => {
    const { sim, cache } = c;
    fs.cpSync(path.join(ROOT, 'dist', 'install'), copy, { recursive: true });
    fs.renameSync(path.join(copy, 'Kustomization'), path.join(copy, 'kustomization.yaml'));
    const r = await kubectl(sim, cache, ['apply', '--server-side', '--field-manager', 'kubectl-test', '-f', `${copy}/`]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/kustomization\.yaml/);
    expect(r.stderr).toMatch(/Kustomization/);
  });
});
