/**
 * Issue 28, output: a run says what it changed, not every object it touched. A no-op re-run
 * collapses its unchanged objects into a count per step and ends with a closing summary, as
 * terraform's `Apply complete! Resources: …`; `-v` lists them; events record each one.
 */
import * as fs from 'fs';
import * as path from 'path';
import { startSimulator, Simulator } from '../../sim';
import { cli, tmpDir } from './harness';
import { deployment, namespace, NS, writePlan } from '../plans';

let sim: Simulator;
afterEach(async () => {
  await sim?.stop();
});

const events = (runDir: string) => fs.readFileSync(path.join(runDir, 'events.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
const config = (data: Record<string, string>) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'tuning', namespace: NS }, data });

function plan(data: Record<string, string>, replicas = 1, dir?: string): string {
  return writePlan([
    { name: 'namespace', objects: [namespace()] },
    { name: 'server', objects: [config(data), deployment('web', replicas), { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'other', namespace: NS }, data: { a: '1' } }] },
  ], { dir });
}

describe('run output', () => {
  it('a no-op re-run prints no line per unchanged object: a count per step and the closing summary', async () => {
    sim = await startSimulator();
    const dir = plan({ max_clients: '150' });
    const first = await cli('run', dir, { kubeconfig: sim.kubeconfigPath });
    expect(first.code).toBe(0);
    expect(first.out).toContain(`  ConfigMap/tuning (${NS}): created\n`);
    expect(first.out).toMatch(/\nRun complete in [\d.]+m?s: 4 created, 0 updated, 0 deleted, 0 stopped, 0 Jobs run, 0 unchanged\.\n$/);

    const runDir = tmpDir();
    const again = await cli('run', dir, { kubeconfig: sim.kubeconfigPath, runDir });
    expect(again.code).toBe(0);
    expect(again.out).not.toMatch(/: unchanged$/m);
    expect(again.out).not.toContain('applied');
    expect(again.out).toMatch(/\[1\/2\] namespace: done in [\d.]+m?s \(1 object unchanged\)\n/);
    expect(again.out).toMatch(/\[2\/2\] server: done in [\d.]+m?s \(3 objects unchanged\)\n/);
    expect(again.out).toMatch(/\nRun complete in [\d.]+m?s: 0 created, 0 updated, 0 deleted, 0 stopped, 0 Jobs run, 4 unchanged\.\n$/);
    // the record keeps every object, and the counts
    const ev = events(runDir);
    expect(ev.filter((e) => e.type === 'apply').map((e) => e.result)).toEqual(['unchanged', 'unchanged', 'unchanged', 'unchanged']);
    expect(ev[ev.length - 1]).toMatchObject({ type: 'run-done', status: 'done', resources: { created: 0, updated: 0, unchanged: 4, jobsRun: 0 } });

    const verbose = await cli('run', dir, { kubeconfig: sim.kubeconfigPath, verbose: true });
    expect(verbose.out).toContain(`  ConfigMap/tuning (${NS}): unchanged\n`);
  });

  it('names what changed: an edited ConfigMap updated, a scaled Deployment updated, the rest counted', async () => {
    sim = await startSimulator();
    const dir = plan({ max_clients: '150' });
    expect((await cli('run', dir, { kubeconfig: sim.kubeconfigPath })).code).toBe(0);
    plan({ max_clients: '300' }, 2, dir);
    const r = await cli('run', dir, { kubeconfig: sim.kubeconfigPath });
    expect(r.code).toBe(0);
    expect(r.out).toContain(`  ConfigMap/tuning (${NS}): updated\n`);
    expect(r.out).toContain(`  Deployment/web (${NS}): updated\n`);
    expect(r.out).not.toContain('ConfigMap/other');
    expect(r.out).toMatch(/\[2\/2\] server: done in [\d.]+m?s \(1 object unchanged\)\n/);
    expect(r.out).toMatch(/Run complete in [\d.]+m?s: 0 created, 2 updated, 0 deleted, 0 stopped, 0 Jobs run, 2 unchanged\.\n$/);
  });
});
