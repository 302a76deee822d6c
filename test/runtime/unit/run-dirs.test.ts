/**
 * Run directories (src/runtime/core/run-dirs.ts): one per run series with its attempts inside, a
 * series ending with the attempt that finished the plan, retention of the newest N series, and
 * the directories of the layout before series read as series of one attempt.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import {
  attemptsNewestFirst, attemptStatus, compareRunNames, describeRuns, earlierAttempts, listSeries, openAttempt, pruneSeries, SERIES_FILE,
} from '../../../src/runtime/core/run-dirs';
import { timestamp } from '../../../src/runtime/apply/run';

const plan = { name: 'migrate', namespace: 'uyuni' };
const runs = () => fs.mkdtempSync(path.join(os.tmpdir(), 'uyuni-runs-'));

/** An attempt ends as run writes it: its events.jsonl's last line is run-done (none: killed). */
function end(dir: string, status?: string): void {
  const events = [{ type: 'run-start', plan: 'migrate' }, ...(status ? [{ type: 'run-done', status, exitCode: status === 'done' ? 0 : 1 }] : [])];
  fs.writeFileSync(path.join(dir, 'events.jsonl'), events.map((e) => JSON.stringify(e)).join('\n') + '\n');
}

const rel = (root: string, dirs: readonly string[]) => dirs.map((d) => path.relative(root, d));

describe('run series', () => {
  it('a run after a stopped one is its next attempt; the run after the finishing one starts a new series', () => {
    const root = runs();
    const a = openAttempt(root, 'migrate-20261201T100000Z', plan);
    end(a.dir, 'failed');
    const b = openAttempt(root, 'migrate-20261201T110000Z', plan);
    end(b.dir, 'interrupted');
    const c = openAttempt(root, 'migrate-20261201T120000Z', plan);
    end(c.dir); // killed: no run-done
    const d = openAttempt(root, 'migrate-20261201T130000Z', plan);
    end(d.dir, 'done');
    const e = openAttempt(root, 'migrate-20261202T090000Z', plan);
    expect([a.series, b.series, c.series, d.series]).toEqual(Array(4).fill(path.join(root, 'migrate-20261201T100000Z')));
    expect(e.series).toBe(path.join(root, 'migrate-20261202T090000Z'));
    expect(rel(root, [a.dir, d.dir, e.dir])).toEqual([
      'migrate-20261201T100000Z/migrate-20261201T100000Z', 'migrate-20261201T100000Z/migrate-20261201T130000Z', 'migrate-20261202T090000Z/migrate-20261202T090000Z',
    ]);
    expect(JSON.parse(fs.readFileSync(path.join(e.series, SERIES_FILE), 'utf8'))).toEqual({ plan: 'migrate', namespace: 'uyuni', firstRun: 'migrate-20261202T090000Z' });
    expect(listSeries(root).map((s) => [path.basename(s.dir), s.attempts.length, s.legacy])).toEqual([['migrate-20261201T100000Z', 4, false], ['migrate-20261202T090000Z', 1, false]]);
    expect([attemptStatus(a.dir), attemptStatus(b.dir), attemptStatus(c.dir), attemptStatus(d.dir), attemptStatus(e.dir)]).toEqual(['failed', 'interrupted', undefined, 'done', undefined]);
  });

  it('a series is finished by its finishing attempt, also when a later one was refused meanwhile (the lock)', () => {
    const root = runs();
    const running = openAttempt(root, 'migrate-20261201T100000Z', plan);
    const refused = openAttempt(root, 'migrate-20261201T100500Z', plan);
    end(refused.dir, 'failed');
    end(running.dir, 'done');
    expect(refused.series).toBe(running.series);
    expect(openAttempt(root, 'migrate-20261201T120000Z', plan).series).toBe(path.join(root, 'migrate-20261201T120000Z'));
  });

  it('two runs in the same second get two directories', () => {
    const root = runs();
    const a = openAttempt(root, 'migrate-20261201T100000Z', plan);
    const b = openAttempt(root, 'migrate-20261201T100000Z', plan);
    expect(b.series).toBe(a.series);
    expect(b.dir).not.toBe(a.dir);
    expect(fs.existsSync(b.dir)).toBe(true);
  });

  it('a run whose id equals a finished series\' name starts a new series, never joins the finished one', () => {
    const root = runs();
    const a = openAttempt(root, 'migrate-20261201T100000.000Z', plan);
    end(a.dir, 'done');
    // the same id again (the same millisecond, or a clock set back): a series of its own
    const b = openAttempt(root, 'migrate-20261201T100000.000Z', plan);
    expect(b.series).not.toBe(a.series);
    expect(rel(root, [b.series, b.dir])).toEqual(['migrate-20261201T100000.000Z.2', 'migrate-20261201T100000.000Z.2/migrate-20261201T100000.000Z']);
    expect(fs.readdirSync(a.series).sort()).toEqual(['migrate-20261201T100000.000Z', SERIES_FILE]);
    expect(listSeries(root).map((s) => [path.basename(s.dir), s.attempts.length])).toEqual([['migrate-20261201T100000.000Z', 1], ['migrate-20261201T100000.000Z.2', 1]]);
    // and b is the newest: a third run resumes it, not the finished a
    expect(openAttempt(root, 'migrate-20261201T100001.000Z', plan).series).toBe(b.series);
  });

  it('run ids are to the millisecond: two runs within one second have different ids', () => {
    const t = Date.UTC(2026, 11, 2, 14, 27, 11, 0);
    expect(timestamp(new Date(t + 5))).toBe('20261202T142711.005Z');
    expect(timestamp(new Date(t + 5))).not.toBe(timestamp(new Date(t + 900)));
  });

  it('sorts names by time: ids to the second (from before milliseconds) as .000, a .10 after a .9', () => {
    const names = [
      'migrate-20261201T100000.500Z.10', 'migrate-20261201T100001Z', 'migrate-20261201T100000.500Z.9',
      'migrate-20261201T100000.500Z', 'migrate-20261201T100000Z', 'migrate-20261201T100000.001Z',
    ];
    expect([...names].sort(compareRunNames)).toEqual([
      'migrate-20261201T100000Z', 'migrate-20261201T100000.001Z', 'migrate-20261201T100000.500Z',
      'migrate-20261201T100000.500Z.9', 'migrate-20261201T100000.500Z.10', 'migrate-20261201T100001Z',
    ]);
  });

  it('reads the last event of a long events.jsonl without reading it whole', () => {
    const root = runs();
    const a = openAttempt(root, 'migrate-20261201T100000Z', plan);
    const line = JSON.stringify({ type: 'waiting', step: 'data-sync', detail: 'x'.repeat(200) });
    fs.writeFileSync(path.join(a.dir, 'events.jsonl'), `${Array(2000).fill(line).join('\n')}\n${JSON.stringify({ type: 'run-done', status: 'done' })}\n`);
    expect(fs.statSync(path.join(a.dir, 'events.jsonl')).size).toBeGreaterThan(64 * 1024);
    expect(attemptStatus(a.dir)).toBe('done');
  });

  it('lists every attempt newest first, across series and the directories from before series', () => {
    const root = runs();
    const legacy = path.join(root, 'migrate-20261130T080000Z');
    fs.mkdirSync(legacy);
    end(legacy, 'done');
    const a = openAttempt(root, 'migrate-20261201T100000Z', plan);
    end(a.dir, 'failed');
    const b = openAttempt(root, 'migrate-20261201T110000Z', plan);
    end(b.dir, 'done');
    const c = openAttempt(root, 'migrate-20261202T090000Z', plan);
    expect(rel(root, attemptsNewestFirst(root))).toEqual(rel(root, [c.dir, b.dir, a.dir, legacy]));
    // a failure report looks at the others, in every series
    expect(rel(root, earlierAttempts(c.dir))).toEqual(rel(root, [b.dir, a.dir, legacy]));
    expect(describeRuns(root)).toBe([
      'migrate-20261130T080000Z: 1 attempt, finished (a run directory from before series)',
      'migrate-20261201T100000Z: 2 attempts, finished',
      '  migrate-20261201T100000Z: failed',
      '  migrate-20261201T110000Z: done',
      'migrate-20261202T090000Z: 1 attempt, not finished',
      '  migrate-20261202T090000Z: no run-done (killed, or still running)',
      '',
    ].join('\n'));
  });

  it('a --run-dir of the user\'s: the attempts beside it, as before series', () => {
    const root = runs();
    for (const d of ['one', 'two', 'mine']) fs.mkdirSync(path.join(root, d));
    expect(rel(root, earlierAttempts(path.join(root, 'mine')))).toEqual(['two', 'one']);
  });
});

describe('retention', () => {
  /** `n` finished series, a day apart. */
  function finishedSeries(root: string, n: number): string[] {
    return Array.from({ length: n }, (_, i) => {
      const a = openAttempt(root, `migrate-202611${String(10 + i).padStart(2, '0')}T100000Z`, plan);
      end(a.dir, 'done');
      return a.series;
    });
  }

  it('keeps the newest N series, oldest removed first, attempts and all', () => {
    const root = runs();
    const all = finishedSeries(root, 5);
    const removed = pruneSeries(root, 3, all[4]);
    expect(removed).toEqual(all.slice(0, 2));
    expect(listSeries(root).map((s) => s.dir)).toEqual(all.slice(2));
  });

  it('never removes the current series, even when it is the oldest', () => {
    const root = runs();
    const all = finishedSeries(root, 4);
    expect(pruneSeries(root, 1, all[0])).toEqual(all.slice(1));
    expect(listSeries(root).map((s) => s.dir)).toEqual([all[0]]);
  });

  it('counts the directories from before series, and touches nothing that is not a run', () => {
    const root = runs();
    const legacy = path.join(root, 'migrate-20261101T100000Z');
    fs.mkdirSync(legacy);
    end(legacy, 'failed');
    const stranger = path.join(root, 'notes');
    fs.mkdirSync(stranger);
    fs.writeFileSync(path.join(stranger, 'todo.txt'), 'mine\n');
    const all = finishedSeries(root, 2);
    expect(pruneSeries(root, 2, all[1])).toEqual([legacy]);
    expect(fs.existsSync(path.join(stranger, 'todo.txt'))).toBe(true);
    expect(pruneSeries(root, 2, all[1])).toEqual([]);
  });

  it('keeps the newest by time also among series of one id (.2 ... .11)', () => {
    const root = runs();
    const all = Array.from({ length: 11 }, () => {
      const a = openAttempt(root, 'migrate-20261201T100000.000Z', plan);
      end(a.dir, 'done');
      return a.series;
    });
    expect(new Set(all).size).toBe(11);
    expect(pruneSeries(root, 2, all[10])).toEqual(all.slice(0, 9));
    expect(listSeries(root).map((s) => path.basename(s.dir))).toEqual(['migrate-20261201T100000.000Z.10', 'migrate-20261201T100000.000Z.11']);
  });

  it('removes nothing while there are N or fewer', () => {
    const root = runs();
    const all = finishedSeries(root, 3);
    expect(pruneSeries(root, 3, all[2])).toEqual([]);
    expect(pruneSeries(root, 20, all[2])).toEqual([]);
    expect(listSeries(root)).toHaveLength(3);
  });
});
