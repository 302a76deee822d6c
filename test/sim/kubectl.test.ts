// Debian's kubectl (an independent client we did not write) against the simulator: server-side
// apply of a directory of manifests, then get/wait/logs, so the simulator's discovery, OpenAPI,
// apply, watch and log endpoints are checked by a client that is not client-node.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { kubectl, KUBECTL } from './helpers';
import { Simulator, startSimulator } from './index';

const MANIFESTS: Record<string, string> = {
  '00-namespace.yaml': `apiVersion: v1
kind: Namespace
metadata:
  name: uyuni
`,
  '10-service.yaml': `apiVersion: v1
kind: Service
metadata:
  name: db
  namespace: uyuni
  labels: {app.kubernetes.io/part-of: uyuni}
spec:
  selector: {app: db}
  ports:
  - {name: pgsql, port: 5432}
`,
  '20-pvc.yaml': `apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: db-data
  namespace: uyuni
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 10Gi}}
`,
  '30-job.yaml': `apiVersion: batch/v1
kind: Job
metadata:
  name: db-setup
  namespace: uyuni
spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: setup
        image: registry.example/uyuni/server:2025.10
        command: [/bin/sh, -c, "echo setting up"]
`,
  '40-issuer.yaml': `apiVersion: cert-manager.io/v1
kind: Issuer
metadata:
  name: uyuni-issuer
  namespace: uyuni
spec:
  selfSigned: {}
`,
};

describe('Debian kubectl against the simulator', () => {
  let sim: Simulator;
  let dir: string;
  let cache: string;

  beforeAll(() => {
    if (!existsSync(KUBECTL)) throw new Error(`${KUBECTL} is missing: apt-get install kubectl (.ci/run does)`);
  });
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'sim-kubectl-'));
    cache = mkdtempSync(join(tmpdir(), 'sim-kubectl-cache-'));
    for (const [f, text] of Object.entries(MANIFESTS)) writeFileSync(join(dir, f), text);
  });
  afterEach(async () => {
    await sim?.stop();
    rmSync(dir, { recursive: true, force: true });
    rmSync(cache, { recursive: true, force: true });
  });

  it('applies a directory server-side; get, wait and logs see what the controllers did', async () => {
    sim = await startSimulator({ jobs: { 'db-setup': { durationMs: 500, logs: ['creating database', 'database ready'] } } });
    const applied = await kubectl(sim, cache, ['apply', '--server-side', '-f', dir]);
    expect(applied.stderr).toBe('');
    expect(applied.code).toBe(0);
    expect(applied.stdout.trim().split('\n')).toEqual([
      'namespace/uyuni serverside-applied',
      'service/db serverside-applied',
      'persistentvolumeclaim/db-data serverside-applied',
      'job.batch/db-setup serverside-applied',
      'issuer.cert-manager.io/uyuni-issuer serverside-applied',
    ]);
    // kubectl read the OpenAPI stubs, found each kind through discovery and sent apply
    // patches as field manager "kubectl"
    expect(sim.requests.map((r) => r.path)).toEqual(expect.arrayContaining(['/openapi/v3', '/openapi/v2', '/api', '/apis', '/apis/cert-manager.io/v1']));
    const patches = sim.requests.filter((r) => r.method === 'PATCH');
    expect(patches).toHaveLength(5);
    for (const p of patches) expect(new URLSearchParams(p.query).get('fieldManager')).toBe('kubectl');
    expect(sim.get('batch/v1', 'Job', 'db-setup', 'uyuni').metadata.managedFields[0]).toMatchObject({ manager: 'kubectl', operation: 'Apply' });

    const waited = await kubectl(sim, cache, ['wait', '--for=condition=complete', 'job/db-setup', '-n', 'uyuni', '--timeout=20s']);
    expect(waited.stdout.trim()).toBe('job.batch/db-setup condition met');
    const logs = await kubectl(sim, cache, ['logs', '-n', 'uyuni', 'job/db-setup']);
    expect(logs.stdout).toBe('creating database\ndatabase ready\n');
    const ready = await kubectl(sim, cache, ['wait', '--for=condition=Ready', 'issuer/uyuni-issuer', '-n', 'uyuni', '--timeout=20s']);
    expect(ready.code).toBe(0);

    const got = await kubectl(sim, cache, ['get', '-n', 'uyuni', 'services,persistentvolumeclaims,jobs,issuers', '-o', 'json']);
    expect(got.code).toBe(0);
    const list = JSON.parse(got.stdout);
    expect(list.kind).toBe('List');
    const byKind = Object.fromEntries(list.items.map((i: any) => [i.kind, i]));
    expect(Object.keys(byKind).sort()).toEqual(['Issuer', 'Job', 'PersistentVolumeClaim', 'Service']);
    expect(byKind.Service.spec).toMatchObject({ type: 'ClusterIP', ports: [{ name: 'pgsql', port: 5432, protocol: 'TCP', targetPort: 5432 }] });
    expect(byKind.Service.spec.clusterIP).toMatch(/^10\.96\./);
    expect(byKind.PersistentVolumeClaim.status.phase).toBe('Bound');
    expect(byKind.Job.status.conditions.map((c: any) => c.type)).toEqual(['SuccessCriteriaMet', 'Complete']);
    expect(byKind.Job.spec.backoffLimit).toBe(0);
    expect(byKind.Issuer.status.conditions[0]).toMatchObject({ type: 'Ready', status: 'True' });

    // the same apply again changes nothing; a changed Job template is refused as immutable
    const again = await kubectl(sim, cache, ['apply', '--server-side', '-f', dir]);
    expect(again.code).toBe(0);
    expect(sim.get('batch/v1', 'Job', 'db-setup', 'uyuni').metadata.generation).toBe(1);
    writeFileSync(join(dir, '30-job.yaml'), MANIFESTS['30-job.yaml'].replace('server:2025.10', 'server:2026.01'));
    const changed = await kubectl(sim, cache, ['apply', '--server-side', '-f', join(dir, '30-job.yaml')]);
    expect(changed.code).toBe(1);
    // kubectl rewords a 422 from its details: "The Job "x" is invalid: <field>: <message>"
    expect(changed.stderr).toContain('The Job "db-setup" is invalid: spec.template: Invalid value');
    expect(changed.stderr).toContain('field is immutable');

    // kubectl deletes with Background propagation: the Job's pod goes too
    const deleted = await kubectl(sim, cache, ['delete', '-n', 'uyuni', 'job/db-setup']);
    expect(deleted.stdout.trim()).toBe('job.batch "db-setup" deleted');
    const pods = await kubectl(sim, cache, ['get', 'pods', '-n', 'uyuni', '-o', 'json', '--selector', 'job-name=db-setup']);
    expect(JSON.parse(pods.stdout).items.filter((p: any) => !p.metadata.deletionTimestamp)).toEqual([]);
  });

  it('cannot map a cert-manager kind when cert-manager is not installed', async () => {
    sim = await startSimulator({ certManager: false });
    const applied = await kubectl(sim, cache, ['apply', '--server-side', '-f', dir]);
    expect(applied.code).toBe(1);
    expect(applied.stderr).toContain('resource mapping not found for name: "uyuni-issuer" namespace: "uyuni"');
    expect(applied.stderr).toContain('no matches for kind "Issuer" in version "cert-manager.io/v1"');
    // the other objects were applied
    expect(sim.get('v1', 'Service', 'db', 'uyuni')).toBeDefined();
  });

  it('reads the protobuf bodies of kubectl create configmap|secret|namespace, refuses other kinds with 415', async () => {
    sim = await startSimulator();
    for (const args of [
      ['create', 'namespace', 'extra'],
      ['create', 'configmap', 'settings', '-n', 'extra', '--from-literal=a=b', '--from-literal=c=d'],
      ['create', 'secret', 'generic', 'creds', '-n', 'extra', '--from-literal=password=s3cret'],
    ]) {
      const r = await kubectl(sim, cache, args);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
    }
    expect(sim.get('v1', 'Namespace', 'extra').status.phase).toBe('Active');
    expect(sim.get('v1', 'ConfigMap', 'settings', 'extra').data).toEqual({ a: 'b', c: 'd' });
    const secret = sim.get('v1', 'Secret', 'creds', 'extra');
    expect(secret.type).toBe('Opaque');
    expect(Buffer.from(secret.data.password, 'base64').toString()).toBe('s3cret');

    const dep = await kubectl(sim, cache, ['create', 'deployment', 'web', '--image=nginx']);
    expect(dep.code).toBe(1);
    expect(dep.stderr).toContain('the body of the request was in an unknown format');
    expect(sim.requests.filter((r) => r.method === 'POST').map((r) => r.status)).toEqual([201, 201, 201, 415]);
  });
});
