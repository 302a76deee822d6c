/** The simulator's slow API (setLatency): every request but a watch answered late, and how many were in flight at once. */
import { startSimulator, Simulator } from './index';

let sim: Simulator;
afterEach(async () => {
  await sim?.stop();
});

describe('setLatency', () => {
  it('answers each request that late and counts the most in flight; a watch is neither delayed nor counted', async () => {
    sim = await startSimulator();
    sim.setLatency(200);
    sim.resetInFlight();
    const t0 = Date.now();
    const answers = await Promise.all(Array.from({ length: 5 }, () => fetch(`${sim.url}/api/v1/namespaces/default`)));
    expect(answers.every((a) => a.ok)).toBe(true);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(200);
    expect(sim.maxInFlight).toBe(5);
    sim.resetInFlight();
    await fetch(`${sim.url}/api/v1/namespaces/default`);
    expect(sim.maxInFlight).toBe(1);
    // A watch is a stream, not a request to answer late: not counted either.
    sim.resetInFlight();
    const ac = new AbortController();
    const watch = await fetch(`${sim.url}/api/v1/namespaces?watch=true`, { signal: ac.signal });
    expect(watch.ok).toBe(true);
    expect(sim.maxInFlight).toBe(0);
    ac.abort();
  });
});
