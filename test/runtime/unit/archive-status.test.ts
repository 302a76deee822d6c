import { parseArchiveLine } from '../../../src/runtime/verbs/archive-status';
import { renderArchiveStatus } from '../../../src/runtime/report/status-view';

/** The lines src/scripts/db-archive-status.sh prints (their shape is checked against PostgreSQL 15 in test/db-archiving.postgres.test.ts). */
describe('the archive-status line status reads', () => {
  const now = new Date('2026-12-03T12:00:00Z');

  it('gives the newest archived segment with its age at the reading, the failures and the claim\'s use', () => {
    const a = parseArchiveLine('archive-status checked=2026-12-03T11:59:30Z last_wal=000000010000000000000003 last_time=2026-12-03T11:55:00Z failed_count=2 last_failed_wal=000000010000000000000002 size_kib=52428800 used_kib=49152', now);
    expect(a).toEqual({
      checked: '2026-12-03T11:59:30Z', lastArchivedWal: '000000010000000000000003', lastArchivedTime: '2026-12-03T11:55:00Z', ageSeconds: 300,
      failedCount: 2, lastFailedWal: '000000010000000000000002', usedBytes: 49152 * 1024, sizeBytes: 52428800 * 1024,
    });
    expect(renderArchiveStatus({ pod: 'db-1', ...a! })).toEqual([
      'archiving (var-pgsql-walbackup, pod db-1, checked 2026-12-03T11:59:30Z)',
      '  newest archived WAL  000000010000000000000003 at 2026-12-03T11:55:00Z (5 min ago)',
      '  failed attempts      2 (last: 000000010000000000000002)',
      '  archive claim        48.0 MiB used of 50.0 GiB (0%)',
    ]);
  });

  it('says none was archived yet when pg_stat_archiver holds none', () => {
    const a = parseArchiveLine('archive-status checked=2026-12-03T11:59:30Z last_wal= last_time= failed_count=0 last_failed_wal= size_kib=100 used_kib=50', now);
    expect(a).toEqual({ checked: '2026-12-03T11:59:30Z', failedCount: 0, usedBytes: 50 * 1024, sizeBytes: 100 * 1024 });
    expect(renderArchiveStatus(a!)[1]).toBe('  newest archived WAL  none yet');
  });

  it('keeps the whole message of a database that does not answer, spaces and all', () => {
    const a = parseArchiveLine('archive-status checked=2026-12-03T11:59:30Z size_kib=100 used_kib=50 error=psql: error: connection to server at "127.0.0.1", port 5432 failed: Connection refused ', now);
    expect(a).toEqual({ checked: '2026-12-03T11:59:30Z', usedBytes: 50 * 1024, sizeBytes: 100 * 1024, error: 'psql: error: connection to server at "127.0.0.1", port 5432 failed: Connection refused' });
    expect(renderArchiveStatus(a!)[1]).toBe('  not known: psql: error: connection to server at "127.0.0.1", port 5432 failed: Connection refused');
  });

  it('takes no other line for a report', () => {
    expect(parseArchiveLine('LOG:  database system is ready', now)).toBeUndefined();
    expect(parseArchiveLine('', now)).toBeUndefined();
  });
});
