import { safeComponent } from '../../../src/runtime/apply/step-logs';

describe('run log file names (src/runtime/apply/step-logs.ts)', () => {
  it.each([
    ['setup-x7k2p', 'setup-x7k2p'],
    ['../../etc', '_._.._etc'],
    ['..', '_.'],
    ['a/b', 'a_b'],
    ['', '_'],
    ['x\u0000y', 'x_y'],
  ])('%j becomes %j: never a separator, never a leading dot', (name, safe) => {
    expect(safeComponent(name)).toBe(safe);
    expect(safeComponent(name)).not.toMatch(/\/|^\./);
  });
});
