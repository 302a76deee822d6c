import { decideJob } from '../../../src/runtime/resume';

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
});
