/**
 * A copy's progress (`@progress` lines of a step's Job, src/scripts/data-sync.sh): parsed by
 * src/runtime/apply/step-logs.ts, shown by the Reporter on the live line, as a plain line once an interval
 * and when a claim is done, recorded as rarely.
 */
import { parseProgress } from '../../../src/runtime/apply/step-logs';
import type { RunEvent } from '../../../src/runtime/core/events';
import { copyText, Reporter, size } from '../../../src/runtime/report/reporter';

function reporter(mode: 'tty' | 'plain' | 'json', intervalSeconds = 10) {
  let t = 1_000_000;
  const out: string[] = [];
  const r = new Reporter({ mode, write: (s) => out.push(s), writeErr: () => undefined, intervalSeconds, now: () => t });
  return { r, out, tick: (ms: number) => { t += ms; } };
}

const step = { step: 'data-sync', index: 5, total: 9 };
const copy = (line: string): RunEvent => ({ type: 'copy-progress', step: 'data-sync', pod: 'uyuni-data-sync-x', ...parseProgress(line)! });

describe('@progress lines', () => {
  it('parses a claim\'s progress, with its place among the claims, the time left, and its end', () => {
    expect(parseProgress('@progress claim=3/16 bytes=1234567 percent=45 rate=12.34MB/s eta=0:01:23 path=/var/spacewalk')).toEqual({
      claim: '3/16', path: '/var/spacewalk', bytes: 1234567, percent: 45, rate: '12.34MB/s', eta: '0:01:23', done: false,
    });
    expect(parseProgress('@progress bytes=3000006 percent=100 rate=503.33kB/s done=1 path=/srv/www/distributions/1-centos 7')).toEqual({
      path: '/srv/www/distributions/1-centos 7', bytes: 3000006, percent: 100, rate: '503.33kB/s', done: true,
    });
  });

  it('is no progress line without its fields, or with other words', () => {
    for (const l of ['@progress path=/x', '@progress bytes=1 percent=2 rate=3kB/s', '@progress bytes=x percent=2 rate=1kB/s path=/a',
      'progress bytes=1 percent=2 rate=1kB/s path=/a', '@file >f+++++++++ a/b']) {
      expect([l, parseProgress(l)]).toEqual([l, undefined]);
    }
  });

  it('reads as words: sizes in binary units, the claim, the time left or done', () => {
    expect([size(512), size(1536), size(5 * 1024 ** 3 + 1024 ** 3 / 2), size(3 * 1024 ** 4)]).toEqual(['512 B', '1.5 KiB', '5.5 GiB', '3.0 TiB']);
    expect(copyText(parseProgress('@progress claim=3/16 bytes=1288490189 percent=45 rate=12.34MB/s eta=0:01:23 path=/var/spacewalk')!))
      .toBe('claim 3/16 /var/spacewalk: 1.2 GiB (45%), 12.34MB/s, 0:01:23 left');
    expect(copyText(parseProgress('@progress bytes=10 percent=100 rate=1.00kB/s done=1 path=/etc/tomcat/conf.d')!))
      .toBe('/etc/tomcat/conf.d: 10 B (100%), 1.00kB/s, done');
  });
});

describe('the Reporter and a copy\'s progress', () => {
  const columns = process.stdout.columns;
  const terminalWidth = (n: number) => Object.defineProperty(process.stdout, 'columns', { value: n, configurable: true, writable: true });
  afterEach(() => terminalWidth(columns));

  it('plain: a line once an interval (from the first report) and one when a claim is done, not one a report', () => {
    const { r, out, tick } = reporter('plain', 10);
    r.emit({ type: 'step-start', ...step, description: 'copy' });
    for (let i = 1; i <= 12; i++) {
      tick(2000);
      r.emit(copy(`@progress claim=1/2 bytes=${i * 1024 ** 2} percent=${i * 8} rate=1.00MB/s eta=0:00:${String(24 - i * 2).padStart(2, '0')} path=/var/spacewalk`));
    }
    r.emit(copy('@progress claim=1/2 bytes=13631488 percent=100 rate=1.00MB/s done=1 path=/var/spacewalk'));
    const lines = out.join('').split('\n').filter((l) => l.startsWith('  data-sync: '));
    expect(lines).toEqual([
      '  data-sync: claim 1/2 /var/spacewalk: 6.0 MiB (48%), 1.00MB/s, 0:00:12 left',
      '  data-sync: claim 1/2 /var/spacewalk: 11.0 MiB (88%), 1.00MB/s, 0:00:02 left',
      '  data-sync: claim 1/2 /var/spacewalk: 13.0 MiB (100%), 1.00MB/s, done',
    ]);
    r.close();
  });

  it('json: as rarely, the same events', () => {
    const { r, out, tick } = reporter('json', 10);
    for (let i = 1; i <= 12; i++) {
      tick(2000);
      r.emit(copy(`@progress claim=2/2 bytes=${i} percent=${i} rate=1.00kB/s eta=0:09:00 path=/etc/rhn`));
    }
    const events = out.map((l) => JSON.parse(l));
    expect(events.map((e) => [e.type, e.bytes])).toEqual([['copy-progress', 6], ['copy-progress', 11]]);
    expect(events[0]).toMatchObject({ step: 'data-sync', pod: 'uyuni-data-sync-x', claim: '2/2', path: '/etc/rhn', percent: 6, rate: '1.00kB/s', eta: '0:09:00', done: false });
    r.close();
  });

  it('tty: every report on the live line, in place of the wait; a claim done stays as a line', () => {
    terminalWidth(100);
    const { r, out, tick } = reporter('tty');
    r.emit({ type: 'step-start', ...step, description: 'copy' });
    tick(2000);
    r.emit({ type: 'waiting', ...step, elapsedSeconds: 2, blockers: ['Job/uyuni-data-sync (uyuni) complete: Job running'] });
    expect(out[out.length - 1]).toBe('[5/9] data-sync 2s waiting for Job/uyuni-data-sync (uyuni) complete: Job running');
    tick(1000);
    r.emit(copy('@progress claim=3/16 bytes=1288490189 percent=45 rate=12.34MB/s eta=0:01:23 path=/var/spacewalk'));
    expect(out[out.length - 1]).toBe('[5/9] data-sync 3s claim 3/16 /var/spacewalk: 1.2 GiB (45%), 12.34MB/s, 0:01:23 left');
    // a wait's report keeps the copy on the line
    r.emit({ type: 'waiting', ...step, elapsedSeconds: 3, blockers: ['Job/uyuni-data-sync (uyuni) complete: Job running'] });
    expect(out[out.length - 1]).toContain('claim 3/16 /var/spacewalk');
    r.emit(copy('@progress claim=3/16 bytes=2147483648 percent=100 rate=12.34MB/s done=1 path=/var/spacewalk'));
    expect(out.slice(-2)).toEqual(['  data-sync: claim 3/16 /var/spacewalk: 2.0 GiB (100%), 12.34MB/s, done\n',
      '[5/9] data-sync 3s waiting for Job/uyuni-data-sync (uyuni) complete: Job running']);
    r.close();
  });
});
