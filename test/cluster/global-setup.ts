/**
 * Starts the real control plane once for every cluster suite (or uses the one UYUNI_CDK_PLANE
 * names) and hands its folder to the suites as UYUNI_CDK_PLANE.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { up } from './plane/plane';

export default async function globalSetup(): Promise<void> {
  // UYUNI_CDK_PLANE: a plane already up; UYUNI_CDK_REAL_CLUSTER=1: real-cluster.test.ts against KUBECONFIG, no plane
  if (process.env.UYUNI_CDK_PLANE || process.env.UYUNI_CDK_REAL_CLUSTER === '1') return;
  const dir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'uyuni-cdk-plane-')), 'plane');
  const state = await up(dir);
  process.stderr.write(`\ncluster suites: kube-apiserver ${state.version} at ${state.server}\n`);
  process.env.UYUNI_CDK_PLANE = dir;
  process.env.UYUNI_CDK_PLANE_OWNED = '1';
}
