/**
 * Pruning with the plan's ApplySet, against the simulator: what the configuration dropped is
 * listed by `plan` as `delete` and removed by `run` after its last step; claims stay unless
 * --purge-volumes; --no-prune keeps everything. And field diffs of `plan` on a changed image tag.
 */
import * as fs from 'fs';
import * as path from 'path';
import { applySetOf } from '../../../src/runtime/core/applyset';
import { APPLYSET } from '../../../src/plan/types';
import { defaultConfigWith, synthYaml } from '../../helpers/synth';
import { startSimulator, Simulator } from '../../sim';
import { changes, cli } from './harness';
import { deployment, namespace, NS, pvc, service, writePlan } from '../plans';

let sim: Simulator;
afterEach(async () => {
  await sim?.stop();
});

const installWith = (changes: Record<string, unknown>) => synthYaml(defaultConfigWith(changes)).install.dir;
const summary = (out: string) => out.split('\n').find((l) => l.startsWith('Plan: '));
const deleteLines = (out: string) => out.split('\n').filter((l) => /^\s+delete\s/.test(l)).map((l) => l.trim().replace(/\s+/g, ' '));

describe('the hub scenario', () => {
  it('synth with hubApi.replicas 1, run, synth with 0: plan lists the hub objects as delete, run removes them, the claims stay', async () => {
    sim = await startSimulator();
    const withHub = installWith({ hubApi: { replicas: 1 } });
    const withoutHub = installWith({ hubApi: { replicas: 0 } });
    expect((await cli('run', withHub, { kubeconfig: sim.kubeconfigPath })).code).toBe(0);
    const set = applySetOf(JSON.parse(fs.readFileSync(path.join(withHub, 'uyuni.plan'), 'utf8')));
    expect(sim.get('apps/v1', 'Deployment', 'uyuni-hub-xmlrpc', 'uyuni').metadata.labels[APPLYSET.partOf]).toBe(set.id);
    const claims = sim.list('v1', 'PersistentVolumeClaim', 'uyuni').map((c: any) => c.metadata.name).sort();
    expect(claims.length).toBeGreaterThan(20);

    const plan = await cli('plan', withoutHub, { kubeconfig: sim.kubeconfigPath });
    if (process.env.UYUNI_CDK_CAPTURE) fs.writeFileSync(process.env.UYUNI_CDK_CAPTURE, plan.out);
    expect(plan.code).toBe(0);
    expect(deleteLines(plan.out).map((l) => l.replace(/ \(no longer in the plan; applied by install-\d{8}T\d{6}\.\d{3}Z\)$/, ''))).toEqual([
      'delete Deployment/uyuni-hub-xmlrpc (uyuni)', 'delete Ingress/hubapi-ingress-ssl (uyuni)', 'delete Service/hub-xmlrpc (uyuni)',
    ]);
    // The redirect Ingress loses its hub route: the one update, shown as its field diff.
    expect(plan.out).toMatch(/update\s+Ingress\/uyuni-ingress-ssl-redirect \(uyuni\)\n\s+--- live\n\s+\+\+\+ planned\n[^]*-\s+name: hub-xmlrpc\n/);
    expect(summary(plan.out)).toMatch(/^Plan: 0 to create, 1 to update, 3 to delete, 0 to stop, \d+ unchanged\.$/);

    // Without a terminal and without --yes: the deletes are listed, nothing is written.
    const mark = sim.requests.length;
    const refused = await cli('run', withoutHub, { kubeconfig: sim.kubeconfigPath });
    expect(refused.code).toBe(2);
    expect(refused.out).toMatch(/destructive changes \(3\):\n\s+delete\s+Deployment\/uyuni-hub-xmlrpc \(uyuni\)\s+\[\(run\)\]\s+pruned: /);
    expect(refused.out).toContain('refused: no terminal to ask on and no --yes');
    expect(refused.err).toContain('3 destructive changes and no terminal to ask on: nothing was done');
    expect(changes(sim.requests.slice(mark))).toEqual([]);
    expect(sim.get('apps/v1', 'Deployment', 'uyuni-hub-xmlrpc', 'uyuni')).toBeDefined();

    const run = await cli('run', withoutHub, { kubeconfig: sim.kubeconfigPath, yes: true });
    if (process.env.UYUNI_CDK_CAPTURE) fs.writeFileSync(`${process.env.UYUNI_CDK_CAPTURE}.run`, run.out);
    expect(run.code).toBe(0);
    expect(run.out).toMatch(/prune \(propagationPolicy Background\) Deployment\/uyuni-hub-xmlrpc \(uyuni\): deleted/);
    expect(sim.get('apps/v1', 'Deployment', 'uyuni-hub-xmlrpc', 'uyuni')).toBeUndefined();
    expect(sim.get('v1', 'Service', 'hub-xmlrpc', 'uyuni')).toBeUndefined();
    expect(sim.get('networking.k8s.io/v1', 'Ingress', 'hubapi-ingress-ssl', 'uyuni')).toBeUndefined();
    expect(sim.list('v1', 'PersistentVolumeClaim', 'uyuni').map((c: any) => c.metadata.name).sort()).toEqual(claims);
    expect(sim.get('apps/v1', 'Deployment', 'uyuni', 'uyuni')).toBeDefined();

    const after = await cli('plan', withoutHub, { kubeconfig: sim.kubeconfigPath, detailedExitcode: true });
    if (process.env.UYUNI_CDK_CAPTURE) fs.writeFileSync(`${process.env.UYUNI_CDK_CAPTURE}.after`, after.out);
    expect(deleteLines(after.out)).toEqual([]);
    expect(summary(after.out)).toMatch(/^Plan: 0 to create, 0 to update, 0 to delete, 0 to stop, \d+ unchanged\.$/);
    expect(after.code).toBe(0);
  });
});

describe('plan on a changed images.tag', () => {
  it('prints the field diff of each Deployment: the image lines only', async () => {
    sim = await startSimulator();
    expect((await cli('run', installWith({}), { kubeconfig: sim.kubeconfigPath })).code).toBe(0);
    const next = installWith({ images: { tag: '2026.09' } });
    const plan = await cli('plan', next, { kubeconfig: sim.kubeconfigPath, detailedExitcode: true });
    if (process.env.UYUNI_CDK_CAPTURE) fs.writeFileSync(`${process.env.UYUNI_CDK_CAPTURE}.tag`, plan.out);
    expect(plan.code).toBe(2);
    const json = JSON.parse((await cli('plan', next, { kubeconfig: sim.kubeconfigPath, output: 'json' })).out);
    const updates = json.steps.flatMap((s: any) => s.objects).filter((o: any) => o.action === 'update');
    expect(updates.map((o: any) => o.object)).toEqual(['Deployment/db (uyuni)', 'Deployment/uyuni (uyuni)']);
    for (const u of updates) {
      const changed = u.diff.split('\n').filter((l: string) => /^[-+]/.test(l) && !/^(---|\+\+\+) /.test(l));
      expect(changed.length).toBeGreaterThan(0);
      for (const l of changed) expect(l).toMatch(/^[-+]\s+image: registry\.opensuse\.org\/uyuni\/[a-z0-9-]+:2026\.0[89]$/);
      expect(plan.out).toContain(u.diff.split('\n')[2]);
    }
    expect(summary(plan.out)).toMatch(/^Plan: 0 to create, 2 to update, 0 to delete, 0 to stop, \d+ unchanged\.$/);
  });
});

describe('a dropped Ingress, --no-prune, claims', () => {
  const ingress = (name: string) => ({
    apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name, namespace: NS },
    spec: { rules: [{ host: 'uyuni.example.com', http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'uyuni', port: { number: 80 } } } }] } }] },
  });
  const steps = (withIngress: boolean, claims: string[]) => [
    { name: 'namespace', objects: [namespace()] },
    { name: 'volumes', objects: claims.map((c) => pvc(c)) },
    { name: 'server', objects: [service('uyuni'), deployment('uyuni'), ...(withIngress ? [ingress('uyuni')] : [])] },
  ];

  it('keeps what the plan dropped under --no-prune, deletes it on the next run; a claim only with --purge-volumes', async () => {
    sim = await startSimulator();
    const dir = writePlan(steps(true, ['var-pgsql', 'var-cache']));
    expect((await cli('run', dir, { kubeconfig: sim.kubeconfigPath })).code).toBe(0);
    writePlan(steps(false, ['var-pgsql']), { dir });

    const kept = await cli('run', dir, { kubeconfig: sim.kubeconfigPath, prune: false });
    expect(kept.code).toBe(0);
    expect(kept.out).toContain('prune Ingress/uyuni (uyuni-test): kept (--no-prune)');
    expect(sim.get('networking.k8s.io/v1', 'Ingress', 'uyuni', NS)).toBeDefined();
    // The parent still records Ingresses, so the next run finds the one left behind.
    expect(sim.get('v1', 'ConfigMap', 'uyuni-applyset', NS).metadata.annotations[APPLYSET.containsGroupKinds])
      .toBe('Deployment.apps,Ingress.networking.k8s.io,PersistentVolumeClaim,Service');

    const plan = await cli('plan', dir, { kubeconfig: sim.kubeconfigPath });
    expect(deleteLines(plan.out)).toEqual([expect.stringMatching(/^delete Ingress\/uyuni \(uyuni-test\)/)]);
    expect(plan.out).toMatch(/keep\s+PersistentVolumeClaim\/var-cache \(uyuni-test\)\s+\(a volume: pruned only with --purge-volumes\)/);
    expect(summary(plan.out)).toMatch(/^Plan: 0 to create, 0 to update, 1 to delete, 0 to stop, \d+ unchanged\.$/);

    const pruned = await cli('run', dir, { kubeconfig: sim.kubeconfigPath, yes: true });
    expect(pruned.code).toBe(0);
    expect(sim.get('networking.k8s.io/v1', 'Ingress', 'uyuni', NS)).toBeUndefined();
    expect(sim.get('v1', 'PersistentVolumeClaim', 'var-cache', NS)).toBeDefined();
    expect(sim.get('v1', 'ConfigMap', 'uyuni-applyset', NS).metadata.annotations[APPLYSET.containsGroupKinds])
      .toBe('Deployment.apps,PersistentVolumeClaim,Service');

    const purge = await cli('plan', dir, { kubeconfig: sim.kubeconfigPath, purgeVolumes: true });
    expect(deleteLines(purge.out)).toEqual([expect.stringMatching(/^delete PersistentVolumeClaim\/var-cache/)]);
    expect((await cli('run', dir, { kubeconfig: sim.kubeconfigPath, purgeVolumes: true, yes: true })).code).toBe(0);
    expect(sim.get('v1', 'PersistentVolumeClaim', 'var-cache', NS)).toBeUndefined();
    expect(sim.get('v1', 'PersistentVolumeClaim', 'var-pgsql', NS)).toBeDefined();
  });

  it('never prunes the members of steps a plan does not have, nor the claims another plan made', async () => {
    sim = await startSimulator();
    const full = writePlan(steps(true, ['var-pgsql', 'var-cache']), { name: 'install' });
    expect((await cli('run', full, { kubeconfig: sim.kubeconfigPath })).code).toBe(0);
    // A partial plan of the same server (as migrate-prepare): its own volumes step only.
    const partial = writePlan([steps(false, [])[0], { name: 'volumes', objects: [pvc('var-pgsql')] }], { name: 'prepare' });
    const plan = await cli('plan', partial, { kubeconfig: sim.kubeconfigPath, purgeVolumes: true, output: 'json' });
    expect(JSON.parse(plan.out).prune).toEqual([]);
  });
});
