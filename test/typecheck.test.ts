import { spawnSync } from 'child_process';
import * as path from 'path';

// The sources run through swc, which strips types without checking them: this is where they are checked.
it('type-checks the whole project (tsc --noEmit)', () => {
  const root = path.join(__dirname, '..');
  const r = spawnSync(process.execPath, [path.join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '--noEmit', '-p', root], { encoding: 'utf8' });
  expect(r.stdout + r.stderr).toBe('');
  expect(r.status).toBe(0);
}, 120_000);
