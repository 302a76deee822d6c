/**
 * db.archiving's install against kube-apiserver (its Deployment, ReplicaSet and PV controllers,
 * the fake kubelet running the pods): the WAL claim is made, bound and mounted in the db pod
 * beside the data claim, with the init container that writes the archiving settings.
 */
import * as fs from 'fs';
import { cli } from '../runtime/e2e/harness';
import { defaultConfigWith, synthYaml } from '../helpers/synth';
import { plane } from './helpers';

const p = plane();
describe('an install with db.archiving against kube-apiserver', () => {
  const ns = p.namespace('archiving');
  const synthesized = synthYaml(defaultConfigWith({ db: { archiving: { enabled: true, size: '5Gi' } } }));

  afterAll(async () => {
    await p.kubectl(['delete', 'namespace', ns, '--wait=false']);
    fs.rmSync(synthesized.root, { recursive: true, force: true });
  });

  it('runs to an available database with claim var-pgsql-walbackup bound and mounted at /var/lib/pgsql/backup', async () => {
    const run = await cli('run', synthesized.install.dir, { kubeconfig: p.kubeconfig, namespace: ns, yes: true });
    expect({ code: run.code, err: run.err }).toEqual({ code: 0, err: expect.any(String) });
    const claim = JSON.parse((await p.kubectl(['-n', ns, 'get', 'pvc', 'var-pgsql-walbackup', '-o', 'json'])).out);
    expect(claim.spec.resources.requests.storage).toBe('5Gi');
    expect(claim.status.phase).toBe('Bound');
    const db = JSON.parse((await p.kubectl(['-n', ns, 'get', 'deployment', 'db', '-o', 'json'])).out);
    expect(db.status.availableReplicas).toBe(1);
    const spec = db.spec.template.spec;
    expect(spec.initContainers.map((c: any) => c.name)).toEqual(['data-dir', 'pods-cidr', 'archiving']);
    expect(spec.containers[0].volumeMounts).toContainEqual({ name: 'var-pgsql-walbackup', mountPath: '/var/lib/pgsql/backup' });
    const pods = JSON.parse((await p.kubectl(['-n', ns, 'get', 'pods', '-l', 'app.kubernetes.io/component=db', '-o', 'json'])).out).items;
    expect(pods.map((x: any) => x.spec.volumes.find((v: any) => v.name === 'var-pgsql-walbackup')?.persistentVolumeClaim.claimName)).toEqual(['var-pgsql-walbackup']);
  });
});
