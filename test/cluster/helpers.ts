/**
 * What the cluster suites share: the plane global-setup started (UYUNI_CDK_PLANE), its kubectl
 * (built with it, the same minor as the API server), the fake kubelet's scenario, namespaces of
 * their own, and a check after each suite that no component died.
 */
import { randomBytes } from 'crypto';
import { execFile } from 'child_process';
import * as path from 'path';
import { health, PlaneState, readState } from './plane/plane';
import { Scenario, writeScenario } from './plane/scenario';

export interface Plane {
  dir: string;
  state: PlaneState;
  kubeconfig: string;
  /** The plane's own kubectl as the admin; resolves with its output, rejects with its stderr. */
  kubectl(args: string[], input?: string, kubeconfig?: string): Promise<{ code: number; out: string; err: string }>;
  /** What the fake kubelet's pods do in a namespace (or, without one, everywhere else). */
  scenario(s: Scenario, namespace?: string): void;
  /** A fresh name for a namespace of the suite's own. */
  namespace(prefix: string): string;
}

export function plane(): Plane {
  const dir = process.env.UYUNI_CDK_PLANE;
  if (!dir) throw new Error('UYUNI_CDK_PLANE is not set: run the cluster suites with `npm run test:cluster` (jest.cluster.config.js)');
  const state = readState(dir);
  afterAll(() => {
    const dead = health(dir);
    if (dead.length) throw new Error(dead.join('\n'));
  });
  return {
    dir, state, kubeconfig: state.kubeconfig,
    kubectl: (args, input, kubeconfig = state.kubeconfig) => new Promise((resolve) => {
      const child = execFile(path.join(state.bin, 'kubectl'), ['--kubeconfig', kubeconfig, ...args], { maxBuffer: 64 << 20 }, (error, out, err) => {
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, out, err });
      });
      if (input !== undefined) child.stdin!.end(input);
      else child.stdin!.end();
    }),
    scenario: (s, namespace) => writeScenario(dir, s, namespace),
    namespace: (prefix) => `${prefix}-${randomBytes(3).toString('hex')}`,
  };
}

export async function until<T>(what: string, fn: () => Promise<T | undefined | false>, timeoutMs = 60_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs / 1000}s waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}
