/** Stops the plane global-setup started (not one the caller brought), and fails the run if a component had died. */
import * as path from 'path';
import { down, health } from './plane/plane';

export default async function globalTeardown(): Promise<void> {
  const dir = process.env.UYUNI_CDK_PLANE;
  if (!dir || process.env.UYUNI_CDK_PLANE_OWNED !== '1') return;
  const dead = health(dir);
  await down(dir);
  require('fs').rmSync(path.dirname(dir), { recursive: true, force: true });
  if (dead.length) throw new Error(`a control plane component died during the cluster suites:\n${dead.join('\n')}`);
}
