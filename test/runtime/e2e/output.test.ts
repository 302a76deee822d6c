/**
 * Issue 28, output: a run says what it changed, not every object it touched. A no-op re-run
 * collapses its unchanged objects into a count per step and ends with a closing summary, as
 * terraform's `Apply complete! Resources: …`; `-v` lists them; events record each one.
 */
import * as fs from 'fs';
import * as path from 'path';
import { parse } from 'yaml';
import { Io, planCommand, statusCommand } from '../../../src/runtime/verbs/commands';
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
    expect(ev.filter((e) => e.type === 'apply').map((e) => [e.object, e.result])).toEqual([
      [{ kind: 'Namespace', name: NS }, 'unchanged'],
      [{ kind: 'ConfigMap', name: 'tuning', namespace: NS }, 'unchanged'],
      [{ kind: 'Deployment', name: 'web', namespace: NS }, 'unchanged'],
      [{ kind: 'ConfigMap', name: 'other', namespace: NS }, 'unchanged'],
    ]);
    // the lock and the record name their objects the same way
    expect(ev.find((e) => e.type === 'action' && e.action === 'lock').object).toEqual({ kind: 'Lease', name: 'uyuni-cdk-lock', namespace: NS });
    expect(ev.find((e) => e.type === 'action' && e.action === 'record finished run').object).toEqual({ kind: 'ConfigMap', name: 'uyuni-cdk-history', namespace: NS });
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

/** A verb run on a terminal (isTTY), its output captured. */
async function onTerminal(planDir: string, opts: Record<string, unknown>, verb = planCommand): Promise<string> {
  let out = '';
  const io: Io = { out: (t) => { out += t; }, err: (t) => { out += t; }, isTTY: true };
  await verb(planDir, { kubeconfig: sim.kubeconfigPath, ...opts }, io);
  return out;
}

describe('plan output', () => {
  const many = () => writePlan([
    { name: 'namespace', objects: [namespace()] },
    { name: 'server', objects: [config({ a: '1' }), deployment('web'), deployment('db'), { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'other', namespace: NS }, data: { a: '1' } }] },
  ]);

  it('names the cluster and context, prints durations in words, counts waits and unchanged objects; -v lists them', async () => {
    sim = await startSimulator();
    const dir = many();
    const fresh = await cli('plan', dir, { kubeconfig: sim.kubeconfigPath });
    expect(fresh.out.split('\n')[0]).toMatch(/^plan install \(2 steps, namespace uyuni-test, deadline 10m\) against cluster http:\/\/127\.0\.0\.1:\d+ \(context sim\)$/);
    expect(fresh.out).toContain('\n[1/2] namespace: the namespace step (timeout 1m)\n');
    expect(fresh.out).toContain(`  waits for Namespace/${NS} exists\n`);
    expect(fresh.out).toContain('  waits for 2 objects (2 rollout; -v lists them)\n');
    expect(fresh.out).not.toContain(`waits for Deployment/web (${NS}) rollout`);
    const listed = await cli('plan', dir, { kubeconfig: sim.kubeconfigPath, verbose: true });
    expect(listed.out).toContain(`  waits for Deployment/web (${NS}) rollout\n  waits for Deployment/db (${NS}) rollout\n`);

    expect((await cli('run', dir, { kubeconfig: sim.kubeconfigPath })).code).toBe(0);
    const after = await cli('plan', dir, { kubeconfig: sim.kubeconfigPath });
    expect(after.out).toContain('  unchanged  4 objects\n');
    expect(after.out).not.toContain(`unchanged  ConfigMap/tuning`);
    expect((await cli('plan', dir, { kubeconfig: sim.kubeconfigPath, verbose: true })).out).toContain(`  unchanged  ConfigMap/tuning (${NS})\n`);
  });

  it('leaves the bookkeeping labels out of a diff, counting them', async () => {
    sim = await startSimulator();
    const dir = many();
    expect((await cli('run', dir, { kubeconfig: sim.kubeconfigPath })).code).toBe(0);
    // as after a migration: the live object carries another plan's step label and the user's edit
    const live = sim.get('v1', 'ConfigMap', 'tuning', NS);
    sim.put({ ...live, metadata: { ...live.metadata, labels: { ...live.metadata.labels, 'uyuni-cdk.io/step': 'config' } }, data: { a: '2' } });
    const r = await cli('plan', dir, { kubeconfig: sim.kubeconfigPath });
    expect(r.out).toMatch(/ {2}update {5}ConfigMap\/tuning \(uyuni-test\)\n {6}--- live\n {6}\+\+\+ planned\n[^]*-  a: "2"\n {6}\+  a: "1"\n[^]* {6}\(\+ 1 bookkeeping label\)\n/);
    expect(r.out).not.toContain('uyuni-cdk.io/step');
    // only the label differs: relabelled, counted apart from updates; run agrees and sets it back
    sim.put({ ...sim.get('v1', 'ConfigMap', 'tuning', NS), data: { a: '1' } });
    expect((await cli('plan', dir, { kubeconfig: sim.kubeconfigPath })).out).toMatch(/ {2}relabel {4}1 object {2}\(1 bookkeeping label\)\n[^]*0 to update, 0 to delete, 0 to stop, 1 to relabel \(bookkeeping labels only\)/);
    const ran = await cli('run', dir, { kubeconfig: sim.kubeconfigPath });
    expect(ran.out).toContain(`  ConfigMap/tuning (${NS}): relabelled\n`);
    expect(sim.get('v1', 'ConfigMap', 'tuning', NS).metadata.labels['uyuni-cdk.io/step']).toBe('server');
  });

  it('colours on a terminal only: + green, - red, create green; never with --no-color, NO_COLOR or -o json/yaml', async () => {
    sim = await startSimulator();
    const dir = many();
    expect((await cli('run', dir, { kubeconfig: sim.kubeconfigPath })).code).toBe(0);
    const live = sim.get('v1', 'ConfigMap', 'tuning', NS);
    sim.put({ ...live, data: { a: '2' } });
    sim.put({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'x' } });
    const coloured = await onTerminal(dir, {});
    expect(coloured).toContain('\x1b[33mupdate   \x1b[39m  ConfigMap/tuning');
    expect(coloured).toContain('      \x1b[31m-  a: "2"\x1b[39m\n      \x1b[32m+  a: "1"\x1b[39m\n');
    expect(await onTerminal(dir, { color: false })).not.toContain('\x1b[');
    const saved = process.env.NO_COLOR;
    process.env.NO_COLOR = '1';
    try {
      expect(await onTerminal(dir, {})).not.toContain('\x1b[');
    } finally {
      if (saved === undefined) delete process.env.NO_COLOR;
      else process.env.NO_COLOR = saved;
    }
    expect(await onTerminal(dir, { output: 'json' })).not.toContain('\x1b[');
    const yaml = await onTerminal(dir, { output: 'yaml' });
    expect(yaml).not.toContain('\x1b[');
    const doc = parse(yaml);
    expect(doc).toMatchObject({ plan: 'install', namespace: NS, cluster: { context: 'sim' }, summary: { update: 1 } });
    expect(doc).toEqual(JSON.parse(await onTerminal(dir, { output: 'json' })));
  });
});

describe('status and destroy output', () => {
  it('name the cluster and context in their headers, and answer -o yaml', async () => {
    sim = await startSimulator();
    const dir = plan({ a: '1' });
    const status = await cli('status', dir, { kubeconfig: sim.kubeconfigPath });
    expect(status.out.split('\n')[0]).toMatch(/^plan install, namespace uyuni-test, cluster http:\/\/127\.0\.0\.1:\d+ \(context sim\)$/);
    expect(parse((await cli('status', dir, { kubeconfig: sim.kubeconfigPath, output: 'yaml' })).out)).toMatchObject({ plan: 'install', cluster: { context: 'sim' }, steps: [{ name: 'namespace' }, { name: 'server' }] });
    expect(await onTerminal(dir, {}, statusCommand)).toMatch(/\nnamespace {2}\x1b\[33mnot-applied {3}\x1b\[39m/);
    expect(await onTerminal(dir, { color: false }, statusCommand)).not.toContain('\x1b[');
    const destroy = await cli('destroy', dir, { kubeconfig: sim.kubeconfigPath });
    expect(destroy.out.split('\n')[0]).toMatch(/plan install, namespace uyuni-test, cluster http:\/\/127\.0\.0\.1:\d+ \(context sim\)$/);
    const run = await cli('run', dir, { kubeconfig: sim.kubeconfigPath });
    expect(run.out.split('\n')[0]).toMatch(/, cluster http:\/\/127\.0\.0\.1:\d+ \(context sim\), logs in /);
    expect(await onTerminal(dir, {}, statusCommand)).toMatch(/\nnamespace {2}\x1b\[32mdone {10}\x1b\[39m/);
  });
});
