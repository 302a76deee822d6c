/**
 * Changes kube-apiserver refuses as immutable (422 Invalid), against the real server: `plan`
 * shows a re-create among the destructive changes and `run` deletes, waits until gone and
 * creates again, instead of failing mid-run at the apply; a claim's changed class is refused
 * before any write (re-creating a claim loses its data). What the server answered (v1.34.4):
 * - Deployment selector: `Deployment.apps "x" is invalid: spec.selector: Invalid value: {...}: field is immutable`
 * - PVC storageClassName: `PersistentVolumeClaim "x" is invalid: spec: Forbidden: spec is immutable
 *   after creation except resources.requests and volumeAttributesClassName for bound claims` and a
 *   diff of the Go struct (`- "StorageClassName": "standard"`) in the same message
 * - Service clusterIP: `Service "x" is invalid: spec.clusterIPs[0]: Invalid value: ["None"]: may not change once set`;
 *   a change of its type (LoadBalancer → ClusterIP → ExternalName) is accepted
 * - Job template: `Job.batch "x" is invalid: spec.template: Invalid value: ...: field is immutable`
 */
import { execFile } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { promisify } from 'util';
import { cli } from '../runtime/e2e/harness';
import { job, namespace, writePlan } from '../runtime/plans';
import { plane, runOwn, until, writes as writesOf } from './helpers';
import { auditSize, ROOT } from './plane/plane';

const p = plane();
const writes = (mark: number, ns: string) => writesOf(p, mark, ns);
const DIST = path.join(ROOT, 'dist', 'install');
const json = async (args: string[]) => {
  const r = await p.kubectl([...args, '-o', 'json']);
  if (r.code !== 0) throw new Error(r.err);
  return JSON.parse(r.out);
};

/** An object as `kubectl create` takes it again: what the server set on it removed. */
function recreatable(o: any): any {
  const { uid: _u, resourceVersion: _r, creationTimestamp: _c, generation: _g, managedFields: _m, ...metadata } = o.metadata;
  const { status: _s, ...rest } = o;
  return { ...rest, metadata };
}

describe('a change kube-apiserver refuses as immutable', () => {
  const ns = p.namespace('immutable');
  const opts = { kubeconfig: p.kubeconfig, namespace: ns };
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'uyuni-immutable-'));

  beforeAll(async () => {
    const first = await cli('run', DIST, { ...opts, yes: true });
    expect({ code: first.code, err: first.err }).toEqual({ code: 0, err: expect.any(String) });
  });

  afterAll(async () => {
    await p.kubectl(['delete', 'namespace', ns, '--wait=false']);
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('a Deployment whose selector differs (an older version\'s): plan shows a destructive re-create, run deletes, waits and creates it', async () => {
    // the Deployment as an older version would have made it: one more selector label
    const live = recreatable(await json(['-n', ns, 'get', 'deployment', 'uyuni']));
    live.spec.selector.matchLabels.legacy = 'v1';
    live.spec.template.metadata.labels.legacy = 'v1';
    expect((await p.kubectl(['-n', ns, 'delete', 'deployment', 'uyuni', '--wait=true'])).code).toBe(0);
    const created = await p.kubectl(['create', '-f', '-'], JSON.stringify(live));
    expect({ code: created.code, err: created.err }).toEqual({ code: 0, err: '' });
    const before = (await json(['-n', ns, 'get', 'deployment', 'uyuni'])).metadata.uid;

    const plan = await cli('plan', DIST, { ...opts, detailedExitcode: true });
    expect(plan.code).toBe(2);
    expect(plan.out).toMatch(/recreate\s+Deployment\/uyuni \([^)]*\)\s+\(the server keeps a changed field once set \(spec\.selector: Invalid value: \{"matchLabels":\{[^}]*\}\}: field is immutable\): deleted and created again\)/);
    expect(plan.out).toMatch(/destructive: objects deleted and created again[^\n]*\n\s+recreate\s+Deployment\/uyuni \([^)]*\)\s+\[server\]/);
    expect(plan.out).not.toMatch(/run would (stop|refuse)/);

    // without --yes, not on a terminal: the re-create is asked about, so nothing is written
    const mark0 = auditSize(p.dir);
    const declined = await cli('run', DIST, opts);
    expect(declined.code).toBe(2);
    expect(declined.out).toMatch(/destructive changes \(1\):\n\s+recreate\s+Deployment\/uyuni \([^)]*\)\s+\[server\]\s+the server keeps a changed field once set/);
    expect(writes(mark0, ns).filter((w) => !runOwn(w))).toEqual([]);

    const mark = auditSize(p.dir);
    const run = await cli('run', DIST, { ...opts, yes: true });
    expect({ code: run.code, err: run.err }).toEqual({ code: 0, err: expect.any(String) });
    const sent = writes(mark, ns).filter((w) => / deployments\//.test(w));
    expect(sent).toEqual(['delete deployments/uyuni 200', 'patch deployments/uyuni 201']);
    const after = await json(['-n', ns, 'get', 'deployment', 'uyuni']);
    expect(after.metadata.uid).not.toBe(before);
    expect(after.spec.selector.matchLabels.legacy).toBeUndefined();
    await until('uyuni available again', async () => (await json(['-n', ns, 'get', 'deployment', 'uyuni'])).status.availableReplicas === 1);
    expect((await cli('plan', DIST, { ...opts, detailedExitcode: true })).code).toBe(0);
  });

  it('a claim whose storageClassName changed: refused by plan and by run before any write, naming the field', async () => {
    const out = path.join(tmp, 'fast');
    await promisify(execFile)(process.execPath, [path.join(ROOT, 'scripts', 'dev.js'), 'synth', '-c', path.join(ROOT, 'uyuni.yaml'), '--set', 'volumes.storageClass=fast', '-o', out]);
    const plan = await cli('plan', path.join(out, 'install'), { ...opts, detailedExitcode: true });
    expect(plan.code).toBe(1);
    expect(plan.out).toMatch(/run would refuse before any write:\n\s+- PersistentVolumeClaim\/var-cobbler \([^)]*\): spec\.storageClassName: "standard" → "fast" cannot change on an existing claim \(spec: Forbidden: spec is immutable after creation except resources\.requests and volumeAttributesClassName for bound claims\); re-creating it would lose its data/);

    const mark = auditSize(p.dir);
    const run = await cli('run', path.join(out, 'install'), { ...opts, yes: true });
    expect(run.code).toBe(1);
    expect(run.err).toMatch(/refused before any write[\s\S]*spec\.storageClassName: "standard" → "fast"/);
    expect(run.err).not.toMatch(/\n\s+at /);
    expect(writes(mark, ns).filter((w) => !/ leases\//.test(w))).toEqual([]);
    const claims = (await json(['-n', ns, 'get', 'pvc'])).items;
    expect(claims.every((c: any) => c.spec.storageClassName === 'standard')).toBe(true);
  });
});

describe('a Job whose pod template changed, against kube-apiserver', () => {
  const ns = p.namespace('immutable-job');
  const opts = { kubeconfig: p.kubeconfig, namespace: ns };

  afterAll(async () => {
    await p.kubectl(['delete', 'namespace', ns, '--wait=false']);
  });

  it('the server refuses the change; plan shows the finished Job re-created, run asks, then deletes, waits and creates it', async () => {
    const first = writePlan([{ name: 'namespace', objects: [namespace()] }, { name: 'work', objects: [job('work', 'echo one')] }]);
    const ran = await cli('run', first, { ...opts, yes: true });
    expect({ code: ran.code, err: ran.err }).toEqual({ code: 0, err: expect.any(String) });
    const before = await json(['-n', ns, 'get', 'job', 'work']);
    expect(before.status.succeeded).toBe(1);

    // what the runtime avoids: the server keeps a Job's template
    const patched = await p.kubectl(['-n', ns, 'patch', 'job', 'work', '--type=json', '--dry-run=server',
      '-p', JSON.stringify([{ op: 'replace', path: '/spec/template/spec/containers/0/command', value: ['sh', '-c', 'echo two'] }])]);
    expect(patched.code).not.toBe(0);
    expect(patched.err).toMatch(/Job "work" is invalid: spec\.template: Invalid value: .*: field is immutable/);

    const next = writePlan([{ name: 'namespace', objects: [namespace()] }, { name: 'work', objects: [job('work', 'echo two')] }]);
    const plan = await cli('plan', next, { ...opts, detailedExitcode: true });
    expect(plan.code).toBe(2);
    expect(plan.out).toMatch(/recreate\s+Job\/work \([^)]*\)\s+\(Job work is from a run that finished \([^)]*\) and this plan changed it\)/);
    expect(plan.out).toMatch(/destructive: objects deleted and created again[^\n]*\n\s+recreate-job\s+Job\/work \([^)]*\)\s+\[work\]/);

    const asked = await cli('run', next, opts);
    expect(asked.code).toBe(2);
    expect(asked.out).toMatch(/destructive changes \(1\):\n\s+recreate-job\s+Job\/work/);
    expect((await json(['-n', ns, 'get', 'job', 'work'])).metadata.uid).toBe(before.metadata.uid);

    const run = await cli('run', next, { ...opts, yes: true });
    expect({ code: run.code, err: run.err }).toEqual({ code: 0, err: expect.any(String) });
    const after = await json(['-n', ns, 'get', 'job', 'work']);
    expect(after.metadata.uid).not.toBe(before.metadata.uid);
    expect(after.spec.template.spec.containers[0].command).toEqual(['sh', '-c', 'echo two']);
    expect(after.status.succeeded).toBe(1);
    expect((await cli('plan', next, { ...opts, detailedExitcode: true })).code).toBe(0);
  });
});
