import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { JOURNAL } from '../src/synth';
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
  it('removes the staging directories and leftovers of dead synths, and keeps those of running ones and others', () => {
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
    expect(fs.readdirSync(dist).sort()).toEqual([`.install.new-${live}-1`, '.keep', 'install']);
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
