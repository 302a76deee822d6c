/**
 * Bookkeeping-only changes are not updates (issue 38, item 7): after a migration, the documented
 * next step (the install plan of the same configuration) changes only our bookkeeping labels
 * (`uyuni-cdk.io/plan: migrate` → `install`, …) on 45 objects. `plan` counts them apart
 * (`45 to relabel`), `--detailed-exitcode` reports no drift for them unless `--bookkeeping-drift`,
 * and `run` still writes them, saying `relabelled`.
 */
import * as fs from 'fs';
import * as path from 'path';
import { Simulator } from '../../sim';
import { cli, tmpDir } from './harness';
import { finishedMigration, synthExample } from './migration';

let sim: Simulator;
afterEach(async () => {
  await sim?.stop();
});

it('after a migration, the install plan of the same configuration: 45 to relabel, not drift; run writes them as relabelled', async () => {
  sim = await finishedMigration({ handMade: true });
  const install = synthExample('migration.yaml', (c) => { delete c.migration; }).install;
  const label = () => sim.get('v1', 'PersistentVolumeClaim', 'var-cobbler', 'uyuni').metadata.labels['uyuni-cdk.io/plan'];
  expect(label()).toBe('migrate');

  const p = await cli('plan', install, { kubeconfig: sim.kubeconfigPath, detailedExitcode: true });
  expect(p.out).toContain('Plan: 0 to create, 0 to update, 0 to delete, 0 to stop, 45 to relabel (bookkeeping labels only), 0 unchanged.');
  expect(p.out).not.toMatch(/^ {2}update /m);
  expect(p.out).toContain('  relabel  26 objects  (1 bookkeeping label)');
  expect(p.code).toBe(0);
  expect((await cli('plan', install, { kubeconfig: sim.kubeconfigPath, detailedExitcode: true, bookkeepingDrift: true })).code).toBe(2);
  const json = JSON.parse((await cli('plan', install, { kubeconfig: sim.kubeconfigPath, output: 'json' })).out);
  expect(json.summary).toMatchObject({ update: 0, relabel: 45 });

  const runDir = tmpDir();
  const r = await cli('run', install, { kubeconfig: sim.kubeconfigPath, runDir, yes: true });
  expect(r.err).toBe('');
  expect(r.code).toBe(0);
  expect(r.out).toContain('PersistentVolumeClaim/var-cobbler (uyuni): relabelled');
  expect(r.out).toMatch(/Run complete in [\d.]+s: 0 created, 0 updated, 45 relabelled, 0 deleted/);
  const events = fs.readFileSync(path.join(runDir, 'events.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  expect(events.filter((e) => e.type === 'apply' && e.result === 'relabelled')).toHaveLength(45);
  expect(label()).toBe('install');
  const after = await cli('plan', install, { kubeconfig: sim.kubeconfigPath, detailedExitcode: true, bookkeepingDrift: true });
  expect(after.out).toContain('Plan: 0 to create, 0 to update, 0 to delete, 0 to stop, 45 unchanged.');
  expect(after.code).toBe(0);
}, 120000);
