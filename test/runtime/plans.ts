/**
 * Fixture plans for the runtime's tests, written the way synth writes them: one manifest per
 * step (`NNNN-<step>.k8s.yaml`) and a uyuni.plan index.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { stringify } from 'yaml';
import { hashSpec, hashText } from '../../src/plan/spec-hash';
import { ANNOTATIONS, LABELS, MANAGED_BY, Plan, PLAN_FORMAT_VERSION, Step, Wait } from '../../src/plan/types';

export const NS = 'uyuni-test';

export interface StepSpec extends Partial<Omit<Step, 'name' | 'file' | 'objects'>> {
  readonly name: string;
  readonly objects: any[];
}

function labels(plan: string, step: string, extra: Record<string, string> = {}): Record<string, string> {
  return { [LABELS.partOf]: 'uyuni', [LABELS.managedBy]: MANAGED_BY, [LABELS.plan]: plan, [LABELS.step]: step, ...extra };
}

/** The default wait of each kind, as synth picks them. */
function defaultWait(o: any): Wait | undefined {
  const object = { apiVersion: o.apiVersion, kind: o.kind, name: o.metadata.name, namespace: o.metadata.namespace };
  const f = ({ Job: 'complete', Deployment: 'rollout', Certificate: 'ready', Issuer: 'ready', PersistentVolumeClaim: 'bound', Namespace: 'exists' } as Record<string, Wait['for']>)[o.kind];
  return f ? { object, for: f } : undefined;
}

/**
 * Writes a plan into `dir` (a new temp dir by default) and returns the dir. `summaries`: each step
 * with the `fileSummary` synth writes (src/plans/plan-app.ts); without, a hand-written plan's index.
 */
export function writePlan(steps: StepSpec[], opts: { name?: string; dir?: string; deadlineSeconds?: number; summaries?: boolean; flow?: Plan['flow'] } = {}): string {
  const name = opts.name ?? 'install';
  const dir = opts.dir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'uyuni-plan-'));
  fs.mkdirSync(dir, { recursive: true });
  const planSteps: Step[] = steps.map((s, i) => {
    const objects = s.objects.map((o) => {
      const c = structuredClone(o);
      c.metadata.labels = { ...labels(name, s.name), ...(c.metadata.labels ?? {}) };
      if (c.kind === 'Job') {
        c.metadata.annotations = { ...(c.metadata.annotations ?? {}), [ANNOTATIONS.specHash]: hashSpec(c.spec) };
      }
      return c;
    });
    const file = `${String(i).padStart(4, '0')}-${s.name}.k8s.yaml`;
    const text = objects.map((o) => stringify(o)).join('---\n');
    fs.writeFileSync(path.join(dir, file), text);
    const jobs = objects.filter((o) => o.kind === 'Job').map((o) => [o.metadata.name, o.metadata.annotations[ANNOTATIONS.specHash]]);
    return {
      name: s.name,
      file,
      description: s.description ?? `the ${s.name} step`,
      objects: objects.map((o) => ({ apiVersion: o.apiVersion, kind: o.kind, name: o.metadata.name, namespace: o.metadata.namespace })),
      waits: s.waits ?? objects.map(defaultWait).filter((w): w is Wait => Boolean(w)),
      timeoutSeconds: s.timeoutSeconds ?? 60,
      requires: s.requires ?? [],
      actions: s.actions ?? [],
      gates: s.gates ?? [],
      ...(s.factsFrom ? { factsFrom: s.factsFrom } : {}),
      ...(opts.summaries ? { fileSummary: { sha256: hashText(text), jobSpecHashes: Object.fromEntries(jobs) } } : {}),
    };
  });
  const plan: Plan = {
    formatVersion: PLAN_FORMAT_VERSION,
    name,
    description: `test plan ${name}`,
    generator: 'test/runtime/plans.ts',
    namespace: NS,
    selector: { [LABELS.partOf]: 'uyuni', [LABELS.managedBy]: MANAGED_BY, [LABELS.plan]: name },
    deadlineSeconds: opts.deadlineSeconds ?? 600,
    steps: planSteps,
    ...(opts.flow ? { flow: opts.flow } : {}),
  };
  fs.writeFileSync(path.join(dir, 'uyuni.plan'), JSON.stringify(plan, null, 2) + '\n');
  return dir;
}

export const namespace = (name = NS) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });

export const pvc = (name: string, storageClassName?: string) => ({
  apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name, namespace: NS },
  spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, ...(storageClassName ? { storageClassName } : {}) },
});

export const job = (name: string, script = 'echo done', opts: { image?: string; volumes?: string[] } = {}) => ({
  apiVersion: 'batch/v1', kind: 'Job', metadata: { name, namespace: NS },
  spec: {
    backoffLimit: 0,
    template: {
      spec: {
        restartPolicy: 'Never',
        containers: [{ name: 'main', image: opts.image ?? 'registry.opensuse.org/uyuni/server:latest', command: ['sh', '-c', script] }],
        ...(opts.volumes ? { volumes: opts.volumes.map((v) => ({ name: v, persistentVolumeClaim: { claimName: v } })) } : {}),
      },
    },
  },
});

export const deployment = (name: string, replicas = 1) => ({
  apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name, namespace: NS },
  spec: {
    replicas,
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'main', image: 'registry.opensuse.org/uyuni/server:latest' }] } },
  },
});

export const certificate = (name: string) => ({
  apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { name, namespace: NS },
  spec: { secretName: `${name}-tls`, dnsNames: ['uyuni.example.com'], issuerRef: { name: 'uyuni-ca', kind: 'Issuer' } },
});

export const service = (name: string) => ({
  apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: NS },
  spec: { selector: { app: name }, ports: [{ name: 'http', port: 80, targetPort: 80 }] },
});

/** The small install-like fixture: Namespace, PVC, Certificate, setup Job, Deployment. */
export function miniInstall(dir?: string): string {
  return writePlan([
    { name: 'namespace', objects: [namespace()] },
    { name: 'volumes', objects: [pvc('var-pgsql'), pvc('var-spacewalk')] },
    { name: 'tls', objects: [certificate('uyuni-cert')] },
    { name: 'setup', objects: [job('uyuni-setup', 'echo setting up', { volumes: ['var-pgsql'] })], timeoutSeconds: 120 },
    { name: 'server', objects: [service('uyuni'), deployment('uyuni')], timeoutSeconds: 120 },
  ], { dir });
}

export const configMap = (name: string, data: Record<string, string>) => ({
  apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: NS }, data,
});
