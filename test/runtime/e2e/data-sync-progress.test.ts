/**
 * The data sync's output on the simulator: its Job prints what data-sync.sh prints (messages,
 * an `@file` line per file rsync sent, `@progress` lines per claim; the script's own output is
 * tested for real in test/data-sync.sshd.test.ts). The terminal and events.jsonl get the
 * messages and the progress, the per-file list only the step's log file.
 */
import * as fs from 'fs';
import * as path from 'path';
import { startSimulator, Simulator } from '../../sim';
import { cli, tmpDir } from './harness';
import { job, namespace, writePlan } from '../plans';

let sim: Simulator | undefined;
afterEach(async () => {
  await sim?.stop();
  sim = undefined;
});

const FILES = Array.from({ length: 40 }, (_, i) => `@file >f+++++++++ packages/${i}/package-${i}.rpm`);
const LOGS = [
  'uyuni-data-sync: copying /var/spacewalk (excluding: /lost+found + 0 package-owned files)',
  ...FILES.slice(0, 20),
  '@progress claim=1/2 bytes=1048576 percent=40 rate=1.00MB/s eta=0:00:02 path=/var/spacewalk',
  ...FILES.slice(20),
  '@progress claim=1/2 bytes=2621440 percent=100 rate=1.00MB/s done=1 path=/var/spacewalk',
  'uyuni-data-sync: copying /etc/rhn (excluding: /lost+found + 0 package-owned files)',
  '@file >f+++++++++ rhn.conf',
  '@progress claim=2/2 bytes=2048 percent=100 rate=2.00kB/s done=1 path=/etc/rhn',
  'uyuni-data-sync: done',
];

const syncPlan = () => writePlan([
  { name: 'namespace', objects: [namespace()] },
  { name: 'data-sync', objects: [job('uyuni-data-sync')] },
]);

const recorded = (runDir: string) => fs.readFileSync(path.join(runDir, 'events.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));

describe('the data sync\'s progress, on the simulator', () => {
  it('plain: the messages and each claim\'s progress on the terminal; every file in the step\'s log only', async () => {
    sim = await startSimulator({ jobs: { 'uyuni-data-sync': { durationMs: 2000, logs: LOGS } } });
    const runDir = tmpDir();
    const r = await cli('run', syncPlan(), { kubeconfig: sim.kubeconfigPath, runDir });
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/ {2}data-sync\/uyuni-data-sync-\w+\/main \| uyuni-data-sync: copying \/var\/spacewalk \(excluding/);
    expect(r.out).toContain('\n  data-sync: claim 1/2 /var/spacewalk: 2.5 MiB (100%), 1.00MB/s, done\n');
    expect(r.out).toContain('\n  data-sync: claim 2/2 /etc/rhn: 2.0 KiB (100%), 2.00kB/s, done\n');
    expect(r.out).not.toMatch(/@file|@progress|package-\d+\.rpm|rhn\.conf/);

    const events = recorded(runDir);
    const text = JSON.stringify(events);
    expect(text).not.toMatch(/@file|package-\d+\.rpm|rhn\.conf/);
    expect(events.filter((e) => e.type === 'copy-progress').map((e) => [e.claim, e.path, e.percent, e.done])).toEqual([
      ['1/2', '/var/spacewalk', 100, true], ['2/2', '/etc/rhn', 100, true],
    ]);
    expect(events.filter((e) => e.type === 'log').map((e) => e.line)).toEqual(LOGS.filter((l) => l.startsWith('uyuni-data-sync: ')));

    const dir = path.join(runDir, 'data-sync');
    const [saved] = fs.readdirSync(dir);
    expect(saved).toMatch(/^uyuni-data-sync-\w+\.main\.log$/);
    expect(fs.readFileSync(path.join(dir, saved), 'utf8')).toBe(`${LOGS.join('\n')}\n`);
  });

  it('json: the progress as copy-progress events, no file', async () => {
    sim = await startSimulator({ jobs: { 'uyuni-data-sync': { durationMs: 2000, logs: LOGS } } });
    const r = await cli('run', syncPlan(), { kubeconfig: sim.kubeconfigPath, output: 'json' });
    expect(r.code).toBe(0);
    const events = r.out.trim().split('\n').map((l) => JSON.parse(l));
    expect(events.filter((e) => e.type === 'copy-progress')).toEqual([
      expect.objectContaining({ step: 'data-sync', claim: '1/2', path: '/var/spacewalk', bytes: 2621440, percent: 100, rate: '1.00MB/s', done: true }),
      expect.objectContaining({ step: 'data-sync', claim: '2/2', path: '/etc/rhn', bytes: 2048, done: true }),
    ]);
    expect(r.out).not.toMatch(/@file|package-\d+\.rpm/);
  });

  it('a failed copy\'s report: its last messages, no file and no progress line', async () => {
    const failing = [...LOGS.slice(0, 25), 'rsync: [receiver] write failed on "/mnt/var/spacewalk/packages/9": No space left on device (28)',
      'uyuni-data-sync: rsync failed (status 11)'];
    sim = await startSimulator({ jobs: { 'uyuni-data-sync': { outcome: 'fail', exitCode: 1, durationMs: 1000, logs: failing } } });
    const r = await cli('run', syncPlan(), { kubeconfig: sim.kubeconfigPath });
    expect(r.code).toBe(1);
    const last = r.out.slice(r.out.indexOf('last '));
    expect(last).toMatch(/^last 3 lines:\n {4}uyuni-data-sync: copying \/var\/spacewalk .*\n {4}rsync: \[receiver\] write failed .*\n {4}uyuni-data-sync: rsync failed \(status 11\)\n/);
    expect(r.out).not.toMatch(/@file|@progress|package-\d+\.rpm/);
  });
});
