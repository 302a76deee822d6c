/**
 * What the cluster suites share: the plane global-setup started (UYUNI_CDK_PLANE), its kubectl
 * (built with it, the same minor as the API server), the fake kubelet's scenario, namespaces of
 * their own, and a check after each suite that no component died.
 */
import { randomBytes } from 'crypto';
import { execFile } from 'child_process';
import * as path from 'path';
import { cli } from '../runtime/e2e/harness';
import { inspectJobs } from '../runtime/e2e/inspect-facts';
import { auditEvents, health, PlaneState, readState, ROOT } from './plane/plane';
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
  /** An object of namespace `ns` as kubectl gets it (JSON), or undefined when it is not there. */
  get(ns: string, kind: string, name: string): Promise<any>;
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
    async get(ns, kind, name) {
      const r = await this.kubectl(['-n', ns, 'get', kind, name, '-o', 'json']);
      return r.code === 0 ? JSON.parse(r.out) : undefined;
    },
  };
}

/** A committed plan of dist/. */
export const dist = (name: string): string => path.join(ROOT, 'dist', name);

/**
 * dist/install run into `ns` (its inspect Jobs printing their facts), then what a server being
 * upgraded has and an install of this version does not: an install of PostgreSQL 16 (upstream
 * chart, mgradm) has the database on claim var-pgsql and its setup marker on claim root. The real
 * scheduler does not place the inspect Jobs' pods while a claim they mount is missing
 * (Unschedulable: persistentvolumeclaim "root" not found); the simulator runs them anyway.
 */
export async function installedAsPostgres16(p: Plane, ns: string): Promise<void> {
  p.scenario({ jobs: inspectJobs() }, ns);
  const install = await cli('run', dist('install'), { kubeconfig: p.kubeconfig, namespace: ns, yes: true });
  expect({ code: install.code, err: install.err }).toEqual({ code: 0, err: expect.any(String) });
  for (const claim of ['root', 'var-pgsql']) {
    const pvc = { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: claim, namespace: ns },
      spec: { accessModes: ['ReadWriteOnce'], storageClassName: 'standard', resources: { requests: { storage: '1Gi' } } } };
    expect((await p.kubectl(['create', '-f', '-'], JSON.stringify(pvc))).code).toBe(0);
  }
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

const WRITES = ['create', 'update', 'patch', 'delete', 'deletecollection'];

/**
 * The writes the admin (the runtime, kubectl) sent since `mark` to a namespace (or to it as an
 * object), dry runs apart, from the plane's audit log: `verb resource[/subresource]/name code`.
 */
export function writes(p: Plane, mark: number, ns: string): string[] {
  return auditEvents(p.dir, mark)
    .filter((e) => e.user.username === 'kubernetes-admin' && WRITES.includes(e.verb) && !/[?&]dryRun=/.test(e.requestURI))
    .filter((e) => e.objectRef?.namespace === ns || (e.objectRef?.resource === 'namespaces' && e.objectRef?.name === ns))
    .map((e) => `${e.verb} ${e.objectRef?.resource}${e.objectRef?.subresource ? `/${e.objectRef.subresource}` : ''}/${e.objectRef?.name ?? ''}`
      + `${/[?&]fieldManager=uyuni-cdk-records(&|$)/.test(e.requestURI) ? ' (records copy)' : ''} ${e.responseStatus?.code}`);
}

/** A run's own writes: its lock Lease, its records in ConfigMap uyuni-cdk-history and their copy on the Namespace (field manager uyuni-cdk-records). */
export const runOwn = (w: string): boolean => / leases\/uyuni-cdk-lock /.test(w) || / configmaps\/uyuni-cdk-history /.test(w) || / \(records copy\) /.test(w);
