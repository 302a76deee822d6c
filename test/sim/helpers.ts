// Shared by the simulator's own tests: a real client-node configured from the simulator's
// kubeconfig, and a way to wait for the cluster to reach a state.
import * as k8s from '@kubernetes/client-node';
import { execFile } from 'child_process';
import { Simulator } from './index';

export function clients(sim: Simulator) {
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(sim.kubeconfigPath);
  return {
    kc,
    objects: k8s.KubernetesObjectApi.makeApiClient(kc),
    core: kc.makeApiClient(k8s.CoreV1Api),
    batch: kc.makeApiClient(k8s.BatchV1Api),
    apps: kc.makeApiClient(k8s.AppsV1Api),
    custom: kc.makeApiClient(k8s.CustomObjectsApi),
  };
}

/** Polls `fn` (real time) until it returns something truthy. */
export async function until<T>(fn: () => T | undefined | false | Promise<T | undefined | false>, what: string, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** The ApiException a client-node call rejected with. */
export async function apiError(p: Promise<unknown>): Promise<{ code: number; body: any; headers: Record<string, string> }> {
  try {
    await p;
  } catch (e: any) {
    if (typeof e?.code !== 'number') throw e;
    return { code: e.code, body: typeof e.body === 'string' ? JSON.parse(e.body) : e.body, headers: e.headers };
  }
  throw new Error('expected the call to fail');
}

export const job = (name: string, ns = 'default', image = 'registry.example/tool:1') => ({
  apiVersion: 'batch/v1',
  kind: 'Job',
  metadata: { name, namespace: ns },
  spec: { backoffLimit: 0, template: { spec: { restartPolicy: 'Never', containers: [{ name: 'main', image }] } } },
});

/** Every state a watch delivers for `path` (so assertions do not depend on polling fast enough). */
export async function record(kc: k8s.KubeConfig, path: string): Promise<{ states: any[]; stop: () => void }> {
  const states: any[] = [];
  const ctl = await new k8s.Watch(kc).watch(path, {}, (type, o) => states.push({ type, ...o }), () => {});
  return { states, stop: () => ctl.abort() };
}

/** Debian's kubectl: an independent client of the simulator. */
export const KUBECTL = '/usr/bin/kubectl';

/** Runs kubectl against the simulator, asynchronously (the simulator serves from this same process). */
export function kubectl(sim: Simulator, cacheDir: string, args: string[], timeoutMs = 30_000): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(KUBECTL, ['--kubeconfig', sim.kubeconfigPath, '--cache-dir', cacheDir, ...args], { env: { PATH: process.env.PATH ?? '', HOME: cacheDir }, timeout: timeoutMs }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
    });
  });
}
