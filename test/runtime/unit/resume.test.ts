import { decideJob } from '../../../src/runtime/decide/job-decision';

const job = (hash: string, conditions: any[] = []) => ({
  metadata: { name: 'uyuni-setup', annotations: { 'uyuni-cdk.io/spec-hash': hash } },
  status: { conditions },
});
const complete = [{ type: 'SuccessCriteriaMet', status: 'True' }, { type: 'Complete', status: 'True' }];
const failed = [{ type: 'FailureTarget', status: 'True' }, { type: 'Failed', status: 'True' }];

describe('resume decisions for a step Job', () => {
  it('creates a Job that is not there', () => {
    expect(decideJob(undefined, 'h1', false, 'setup').action).toBe('create');
  });

  it('skips a Complete Job with the same spec hash', () => {
    expect(decideJob(job('h1', complete), 'h1', false, 'setup').action).toBe('skip');
  });

  it('attaches to a running Job with the same spec hash', () => {
    expect(decideJob(job('h1'), 'h1', false, 'setup').action).toBe('attach');
  });

  it('stops on a Job that failed before, pointing at --rerun', () => {
    const d = decideJob(job('h1', failed), 'h1', false, 'setup');
    expect(d).toMatchObject({ action: 'refuse', failed: true });
    expect((d as any).why).toContain('--rerun setup');
  });

  it('refuses a changed Job without --rerun, re-creates it with', () => {
    const d = decideJob(job('h0', complete), 'h1', false, 'setup');
    expect(d).toMatchObject({ action: 'refuse', failed: false });
    expect((d as any).why).toContain('immutable');
    expect(decideJob(job('h0', complete), 'h1', true, 'setup').action).toBe('recreate');
  });

  it('re-creates a changed Complete Job that belongs to a finished run, and only that', () => {
    const old = { ...job('h0', complete), metadata: { ...job('h0').metadata, uid: 'u-1', labels: { 'uyuni-cdk.io/run': 'migrate-1' } } };
    const finished = new Set(['u-1']);
    const d = decideJob(old, 'h1', false, 'db-upgrade', finished);
    expect(d).toMatchObject({ action: 'recreate' });
    expect((d as any).why).toContain('from a run that finished (migrate-1)');
    // Same spec: still skipped. Not finished (another uid) or still running: still refused.
    expect(decideJob(old, 'h0', false, 'db-upgrade', finished).action).toBe('skip');
    expect(decideJob(old, 'h1', false, 'db-upgrade', new Set(['u-2'])).action).toBe('refuse');
    const running = { ...old, status: { conditions: [] } };
    expect(decideJob(running, 'h1', false, 'db-upgrade', finished).action).toBe('refuse');
  });
});
