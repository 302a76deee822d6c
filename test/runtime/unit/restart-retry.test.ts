/**
 * A refused connection after the API server had answered is a restart (test/cluster/api-restart.test.ts
 * shows it on kube-apiserver): retried past the usual attempts, said once, and said again when it answers.
 */
import { RetryContext, withRetries } from '../../../src/kube/retry';

function context(reachable: boolean, lastAnswerAt = Date.now()) {
  const said: string[] = [];
  const c: RetryContext = {
    limits: { requestTimeoutMs: 30_000, watchIdleMs: 330_000, maxBodyBytes: 1 << 20, lastAnswerAt },
    backoff: { initialMs: 1, maxMs: 2, attempts: 3 },
    endpoint: { server: 'https://127.0.0.1:6443', cluster: 'c', user: 'u', context: 'x' },
    inStep: true,
    reachable,
    retried: () => undefined,
    apiDown: (code) => said.push(`down ${code}`),
    apiUp: () => said.push('up'),
  };
  return { c, said };
}

const refused = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6443'), { code: 'ECONNREFUSED' });

describe('a restarting API server', () => {
  it('is waited for past the usual attempts, said down then up', async () => {
    const { c, said } = context(true);
    let calls = 0;
    const v = await withRetries(c, 'GET /api/v1/pods', async () => {
      if (++calls <= 10) throw refused();
      return 'answered';
    });
    expect({ v, calls }).toEqual({ v: 'answered', calls: 11 });
    expect(said.filter((x, i) => said.indexOf(x) === i)).toEqual(['down ECONNREFUSED', 'up']);
  });

  it('is given up on once it has not answered for the API silence bound', async () => {
    const { c } = context(true, Date.now() - 301_000);
    let calls = 0;
    await expect(withRetries(c, 'GET /api/v1/pods', async () => { calls++; throw refused(); })).rejects.toThrow(/ECONNREFUSED/);
    expect(calls).toBe(1);
  });

  it('is no restart when it never answered: the usual attempts, nothing said', async () => {
    const { c, said } = context(false);
    let calls = 0;
    await expect(withRetries(c, 'GET /version', async () => { calls++; throw refused(); })).rejects.toThrow(/ECONNREFUSED/);
    expect(calls).toBe(1);
    expect(said).toEqual([]);
  });
});
