import { spawn, spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { PUBLISH_LOCK, processStart, PublishBusy } from '../src/publish-lock';
import { JOURNAL, withPublishLock } from '../src/synth';
import { SYNTH_APP } from './helpers/entry';
import { defaultConfigWith, tempDir, tree } from './helpers/synth';

/**
 * Synth publishes the plans of a configuration as one unit: killed (SIGKILL, through the test hook
 * UYUNI_CDK_CRASH_AFTER_RENAME) after any rename of its publish, no plan is lost, and the next
 * synth completes the publish and leaves no leftover behind.
 */

jest.setTimeout(60_000);

const PLANS = ['agent', 'install', 'node-services'];


const trees = (dist: string) => Object.fromEntries(PLANS.map((p) => [p, tree(path.join(dist, p))]));

function synth(cwd: string, config: string, env: Record<string, string> = {}) {
  return spawnSync(process.execPath, SYNTH_APP, {
    cwd, encoding: 'utf8',
    env: { ...process.env, CDK8S_OUTDIR: '', UYUNI_CONFIG: config, UYUNI_DIST: path.join(cwd, 'dist'), ...env },
  });
}

/** A project directory: new.yaml (the default config), old.yaml (another image tag and package dir), bad.yaml. */
function project(): string {
  const cwd = tempDir();
  fs.writeFileSync(path.join(cwd, 'new.yaml'), defaultConfigWith());
  fs.writeFileSync(path.join(cwd, 'old.yaml'), defaultConfigWith({ images: { tag: '2026.07' }, nodeServices: { packageDir: '/opt/stackable/old-packages' } }));
  fs.writeFileSync(path.join(cwd, 'bad.yaml'), defaultConfigWith({ images: { pullPolicy: 'Sometimes' } }));
  return cwd;
}

/** What is beside dist/ and in it that is ours and should be gone after a synth: staging, journal, leftovers. */
function leftovers(cwd: string): string[] {
  return [
    ...fs.readdirSync(cwd).filter((n) => n.startsWith('.uyuni-cdk-synth-')),
    ...fs.readdirSync(path.join(cwd, 'dist')).filter((n) => n.startsWith('.')),
  ];
}

describe('a synth killed during its publish', () => {
  const base = project();
  const oldRun = synth(base, 'old.yaml');
  const OLD = trees(path.join(base, 'dist'));
  const fresh = project();
  const newRun = synth(fresh, 'new.yaml');
  const NEW = trees(path.join(fresh, 'dist'));

  it('has an old and a new generation that differ in every plan', () => {
    expect([oldRun.status, newRun.status]).toEqual([0, 0]);
    for (const plan of PLANS) {
      expect(Object.keys(NEW[plan]).length).toBeGreaterThan(0);
      expect({ plan, same: OLD[plan] }).not.toEqual({ plan, same: NEW[plan] });
    }
  });

  // 3 renames staging → .<plan>.new-<id>, then 2 per plan: <plan> → .<plan>.old-<id>, .<plan>.new-<id> → <plan>.
  const RENAMES = 3 + 2 * 3;

  it('makes as many renames as the crashes below cover', () => {
    const cwd = project();
    fs.cpSync(path.join(base, 'dist'), path.join(cwd, 'dist'), { recursive: true });
    const r = synth(cwd, 'new.yaml', { UYUNI_CDK_CRASH_AFTER_RENAME: String(RENAMES + 1) });
    expect(r.status).toBe(0);
    expect(trees(path.join(cwd, 'dist'))).toEqual(NEW);
  });

  it.each(Array.from({ length: RENAMES }, (_, i) => i + 1))('after rename %i: no plan is lost, and the next synth completes the publish', (n) => {
    const cwd = project();
    const dist = path.join(cwd, 'dist');
    fs.cpSync(path.join(base, 'dist'), dist, { recursive: true });
    const crash = synth(cwd, 'new.yaml', { UYUNI_CDK_CRASH_AFTER_RENAME: String(n) });
    expect(crash.signal).toBe('SIGKILL');

    // Right after the crash: per plan the old directory or the new one, whole, at <plan>; only in the
    // window between the two renames of a plan is its old one at the journal's .<plan>.old-<id>.
    const journal = fs.existsSync(path.join(dist, JOURNAL)) ? JSON.parse(fs.readFileSync(path.join(dist, JOURNAL), 'utf8')) : undefined;
    expect(journal !== undefined).toBe(n > 3);
    for (const plan of PLANS) {
      const at = path.join(dist, plan);
      if (fs.existsSync(at)) {
        expect([OLD[plan], NEW[plan]]).toContainEqual(tree(at));
      } else {
        const move = journal.moves.find((m: { plan: string }) => m.plan === plan);
        expect(tree(path.join(dist, move.outgoing))).toEqual(OLD[plan]);
        expect(tree(path.join(dist, move.incoming))).toEqual(NEW[plan]);
      }
    }

    // The recovery pass alone (a synth that refuses its configuration): the whole old set when the
    // crash came before the journal, else the whole new one; nothing of ours left over.
    const refused = synth(cwd, 'bad.yaml');
    expect(refused.status).toBe(2);
    expect(trees(dist)).toEqual(n > 3 ? NEW : OLD);
    expect(leftovers(cwd)).toEqual([]);
    expect(fs.readdirSync(dist).sort()).toEqual(PLANS);

    const again = synth(cwd, 'new.yaml');
    expect(again.status).toBe(0);
    expect(trees(dist)).toEqual(NEW);
    expect(leftovers(cwd)).toEqual([]);
  });
});

describe('the recovery pass', () => {
  it('removes the staging directories of dead synths and every leftover in dist/ (the lock proves nobody publishes there), and keeps running synths\' staging and others', () => {
    const cwd = project();
    const dist = path.join(cwd, 'dist');
    fs.mkdirSync(path.join(dist, 'install'), { recursive: true });
    const dead = '999999999'; // above any pid_max: no such process
    const live = String(process.pid);
    for (const name of [`.uyuni-cdk-synth-${dead}-abc`, `.uyuni-cdk-synth-${live}-abc`, '.not-ours']) {
      fs.mkdirSync(path.join(cwd, name));
    }
    for (const name of [`.install.old-${dead}-1`, `.install.new-${dead}-1`, `.install.new-${live}-1`, `${JOURNAL}.${dead}-1`, '.keep']) {
      fs.mkdirSync(path.join(dist, name));
    }
    const r = synth(cwd, 'bad.yaml');
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(`removed staging directory .uyuni-cdk-synth-${dead}-abc`);
    expect(fs.readdirSync(cwd).filter((n) => n.startsWith('.')).sort()).toEqual(['.not-ours', `.uyuni-cdk-synth-${live}-abc`]);
    // `.install.new-<live pid>-1`: named after a running process, but no synth publishes while we hold the lock
    expect(fs.readdirSync(dist).sort()).toEqual(['.keep', 'install']);
  });

  it('refuses to publish while a running synth holds the journal', () => {
    const cwd = project();
    const dist = path.join(cwd, 'dist');
    fs.mkdirSync(dist);
    fs.writeFileSync(path.join(dist, JOURNAL), JSON.stringify({ pid: process.pid, id: `${process.pid}-1`, moves: [] }));
    const r = synth(cwd, 'new.yaml');
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('another synth is publishing into');
    expect(fs.readdirSync(dist)).toEqual([JOURNAL]);
    expect(fs.readdirSync(cwd).filter((n) => n.startsWith('.uyuni-cdk-synth-'))).toEqual([]);
  });
});

describe('a pid alone proves nothing', () => {
  // This jest worker runs, under a pid a dead synth could have had: its start time tells them apart.
  const reused = { pid: process.pid, start: '1' };

  it('completes the publish of a crashed synth whose pid another process has taken since', () => {
    const cwd = project();
    const dist = path.join(cwd, 'dist');
    expect(synth(cwd, 'old.yaml').status).toBe(0);
    const OLD = trees(dist);
    // the crashed publish: install renamed aside, its new generation staged, the journal in place
    const fresh = project();
    expect(synth(fresh, 'new.yaml').status).toBe(0);
    const id = `${reused.pid}-1`;
    fs.renameSync(path.join(dist, 'install'), path.join(dist, `.install.old-${id}`));
    fs.cpSync(path.join(fresh, 'dist', 'install'), path.join(dist, `.install.new-${id}`), { recursive: true });
    fs.writeFileSync(path.join(dist, JOURNAL), JSON.stringify({ ...reused, id, moves: [{ plan: 'install', incoming: `.install.new-${id}`, outgoing: `.install.old-${id}` }] }));

    const r = synth(cwd, 'bad.yaml');
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('completed the interrupted publish of install/');
    expect(tree(path.join(dist, 'install'))).toEqual(tree(path.join(fresh, 'dist', 'install')));
    expect(tree(path.join(dist, 'agent'))).toEqual(OLD.agent);
    expect(leftovers(cwd)).toEqual([]);
  });

  it('takes over the lock of a dead synth whose pid runs again, and of one that died before filling it', () => {
    for (const content of [JSON.stringify({ ...reused, host: require('os').hostname(), since: '2026-01-01T00:00:00Z' }), '']) {
      const cwd = project();
      const dist = path.join(cwd, 'dist');
      fs.mkdirSync(dist);
      fs.writeFileSync(path.join(dist, PUBLISH_LOCK), content);
      const old = new Date(Date.now() - 60_000);
      fs.utimesSync(path.join(dist, PUBLISH_LOCK), old, old);
      const r = synth(cwd, 'new.yaml');
      expect({ content, status: r.status, stderr: r.stderr }).toMatchObject({ status: 0, stderr: expect.not.stringContaining('waiting') });
      expect(leftovers(cwd)).toEqual([]);
    }
  });
});

describe('concurrent synths', () => {
  const run = (cwd: string, config: string, env: Record<string, string> = {}) => new Promise<{ status: number | null; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, [...SYNTH_APP], {
      cwd, env: { ...process.env, CDK8S_OUTDIR: '', UYUNI_CONFIG: config, UYUNI_DIST: path.join(cwd, 'dist'), ...env },
    });
    let stderr = '';
    child.stderr.on('data', (d) => { stderr += d; });
    child.on('close', (status) => resolve({ status, stderr }));
  });

  it('wait for the live holder of the lock, then publish', async () => {
    const cwd = project();
    const dist = path.join(cwd, 'dist');
    fs.mkdirSync(dist);
    const holder = spawn('sleep', ['30']);
    try {
      const start = processStart(holder.pid!);
      expect(start).toBeDefined();
      fs.writeFileSync(path.join(dist, PUBLISH_LOCK), JSON.stringify({ pid: holder.pid, start, host: require('os').hostname(), since: new Date().toISOString() }));
      const waiting = run(cwd, 'new.yaml');
      // the synth waits as long as the holder holds: the plans appear only after the release
      await new Promise((r) => setTimeout(r, 1500));
      expect(fs.existsSync(path.join(dist, 'install'))).toBe(false);
      fs.rmSync(path.join(dist, PUBLISH_LOCK));
      const r = await waiting;
      expect(r.status).toBe(0);
      expect(r.stderr).toContain(`waiting for the synth publishing into`);
      expect(r.stderr).toContain(`pid ${holder.pid}`);
      expect(fs.readdirSync(dist).sort()).toEqual(PLANS);
    } finally {
      holder.kill('SIGKILL');
    }
  });

  it('never publish a mixed plan, and every one exits 0 (the cdk8s CLI\'s shared output directory as staging)', async () => {
    const cwd = project();
    const dist = path.join(cwd, 'dist');
    // what the cdk8s CLI passes: its (shared) configured output directory
    fs.writeFileSync(path.join(cwd, 'cdk8s.yaml'), 'language: typescript\napp: node bin/synth.js\noutput: .cdk8s.out\n');
    const fqdns = ['a.example.org', 'b.example.org', 'c.example.org'];
    for (const f of fqdns) fs.writeFileSync(path.join(cwd, `${f}.yaml`), defaultConfigWith({ fqdn: f }));
    for (let round = 0; round < 8; round++) {
      const results = await Promise.all(fqdns.map((f) => run(cwd, `${f}.yaml`, { CDK8S_OUTDIR: '.cdk8s.out' })));
      expect(results.map((r) => [r.status, r.stderr.includes('synth failed')])).toEqual(fqdns.map(() => [0, false]));
      // every file of the plan names one fqdn and the same one
      const named = new Set<string>();
      for (const file of fs.readdirSync(path.join(dist, 'install'))) {
        const text = fs.readFileSync(path.join(dist, 'install', file), 'utf8');
        for (const f of fqdns) if (text.includes(f)) named.add(f);
      }
      expect({ round, named: [...named] }).toEqual({ round, named: [expect.any(String)] });
      expect(leftovers(cwd)).toEqual([]);
    }
  });
});

describe('withPublishLock', () => {
  it('gives up after its wait with one line naming the holder and the lock file, running nothing', () => {
    const dir = tempDir();
    const holder = spawn('sleep', ['30']);
    try {
      fs.writeFileSync(path.join(dir, PUBLISH_LOCK), JSON.stringify({ pid: holder.pid, start: processStart(holder.pid!), host: require('os').hostname(), since: '2026-12-01T00:00:00Z' }));
      let ran = false;
      const errors = jest.spyOn(console, 'error').mockImplementation(() => {});
      try {
        expect(() => withPublishLock(dir, 'out', () => { ran = true; }, 300)).toThrow(PublishBusy);
        expect(() => withPublishLock(dir, 'out', () => { ran = true; }, 300))
          .toThrow(`another synth is publishing into out/ (pid ${holder.pid} on ${require('os').hostname()}, since 2026-12-01T00:00:00Z) and did not finish within 0s; if no synth runs, remove out/${PUBLISH_LOCK}`);
        expect(errors).toHaveBeenCalledWith(expect.stringContaining(`waiting for the synth publishing into out/ (pid ${holder.pid}`));
      } finally {
        errors.mockRestore();
      }
      expect(ran).toBe(false);
      expect(fs.existsSync(path.join(dir, PUBLISH_LOCK))).toBe(true);
    } finally {
      holder.kill('SIGKILL');
    }
  });
});
