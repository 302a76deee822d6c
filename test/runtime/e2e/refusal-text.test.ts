/**
 * Refusals are readable (issue 38, item 5): a re-run of a finished migration, its configuration
 * edited, says what finished and what to use now once, then lists the data steps that would run
 * again, each once; `plan` says the same in one bullet. (It was one line of ~3,000 characters:
 * the same paragraph for each of 7 data steps, joined by `; `, and 7 bullets in `plan`.)
 */
import { Simulator } from '../../sim';
import { cli } from './harness';
import { dist, finishedMigration as finishedMigrationOn, synthExample } from './migration';

const count = (text: string, s: string) => text.split(s).length - 1;
const DATA_STEPS = 'stop-server, stop-db, data-sync, inspect, inspect-db, import-secrets, db-upgrade, db-finalize';

let sim: Simulator;
afterEach(async () => {
  await sim?.stop();
});

async function finishedMigration(): Promise<void> {
  sim = await finishedMigrationOn({ handMade: true });
}

describe('the refusal of a finished migration', () => {
  it('with an edited configuration: one sentence, then the steps that would run again, each once; plan says the same in one bullet', async () => {
    await finishedMigration();
    const edited = synthExample('migration.yaml', (c) => { c.images.tag = '2026.09'; }).migrate;

    const r = await cli('run', edited, { kubeconfig: sim.kubeconfigPath, yes: true });
    expect(r.code).toBe(1);
    const said = r.out + r.err;
    expect(count(said, 'finished at ')).toBe(1);
    expect(count(said, 'use the install plan of the same configuration')).toBe(1);
    expect(said).toMatch(/refused before any write: the migration into namespace uyuni finished at \S+ from old-server\.example\.com \(run migrate-\d{8}T\d{6}\.\d{3}Z\): a finished migration never runs again, whatever changed in its configuration; the server is migrated: use the install plan[^\n]*\n {2}steps that would run again \(this plan changed them since\): stop-server, stop-db, data-sync, inspect, inspect-db, import-secrets, db-upgrade, db-finalize \(--rerun STEP repeats one; it asks first\)\n/);
    for (const step of DATA_STEPS.split(', ')) expect([step, count(said, `--rerun ${step}`)]).toEqual([step, 0]);
    for (const line of said.split('\n')) expect(line.length).toBeLessThan(500);

    const p = await cli('plan', edited, { kubeconfig: sim.kubeconfigPath });
    const refusal = p.out.slice(p.out.indexOf('run would refuse before any write:'));
    expect(count(refusal, '\n  - ')).toBe(1);
    expect(count(refusal, 'finished at ')).toBe(1);
    expect(refusal).toContain(`\n    steps that would run again (this plan changed them since): ${DATA_STEPS} (--rerun STEP repeats one; it asks first)\n`);
  }, 120_000);

  it('the committed plan again: the same sentence, then the data steps it did', async () => {
    await finishedMigration();
    const r = await cli('run', dist('migrate'), { kubeconfig: sim.kubeconfigPath, yes: true });
    expect(r.code).toBe(1);
    expect(count(r.err, 'finished at ')).toBe(1);
    expect(r.err).toContain(`\n  data steps it did: ${DATA_STEPS} (--rerun STEP repeats one; it asks first)\n`);
  }, 120_000);
});
