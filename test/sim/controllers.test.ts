import * as k8s from '@kubernetes/client-node';
import { Simulator, startSimulator } from './index';
import { clients, job, record, until } from './helpers';

const apply = (c: ReturnType<typeof clients>, o: any) => c.objects.patch(o, undefined, undefined, 'uyuni', true, k8s.PatchStrategy.ServerSideApply);
const ready = (o: any, type = 'Ready') => (o?.status?.conditions ?? []).some((x: any) => x.type === type && x.status === 'True');

const deployment = (replicas: number, image = 'nginx:1') => ({
  apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'default' },
  spec: { replicas, selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image }] } } },
});
const pvc = (name: string) => ({
  apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name, namespace: 'default' },
  spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '5Gi' } } },
});

describe('API simulator: Deployment, PVC and cert-manager controllers', () => {
  let sim: Simulator;
  let c: ReturnType<typeof clients>;
  afterEach(() => sim.stop());

  it('rolls a Deployment out: observedGeneration first, then updated = ready = available', async () => {
    sim = await startSimulator();
    c = clients(sim);
    const states = await record(c.kc, '/apis/apps/v1/namespaces/default/deployments');
    const created = await apply(c, deployment(2));
    expect(created.metadata!.generation).toBe(1);
    expect(created.status).toBeUndefined();
    const done = await until(() => {
      const d = sim.get('apps/v1', 'Deployment', 'web', 'default');
      return ready(d, 'Available') && d;
    }, 'Available');
    // on the way there: observed, but not yet available
    const progressing = states.states.find((d) => d.status?.observedGeneration === 1);
    expect(progressing.status.readyReplicas).toBeUndefined(); // zero counts are omitted, as the API does
    expect(progressing.status.updatedReplicas).toBe(2);
    expect(ready(progressing, 'Available')).toBe(false);
    states.stop();
    expect(done.status).toMatchObject({ observedGeneration: 1, replicas: 2, updatedReplicas: 2, readyReplicas: 2, availableReplicas: 2 });
    expect(done.status.conditions.find((x: any) => x.type === 'Progressing')).toMatchObject({ status: 'True', reason: 'NewReplicaSetAvailable' });

    const updated = await apply(c, deployment(2, 'nginx:2'));
    expect(updated.metadata!.generation).toBe(2);
    expect(updated.status!.observedGeneration).toBe(1);
    await until(() => sim.get('apps/v1', 'Deployment', 'web', 'default').status.observedGeneration === 2, 'generation 2 observed');

    await apply(c, deployment(0));
    const scaled = await until(() => {
      const d = sim.get('apps/v1', 'Deployment', 'web', 'default');
      return d.status.observedGeneration === 3 && ready(d, 'Available') && d;
    }, 'scaled to 0');
    expect(scaled.status.replicas).toBeUndefined();
    expect(scaled.status.availableReplicas).toBeUndefined();
  });

  it('leaves a Deployment seeded by put() with an observed status as it is (e.g. a failed rollout)', async () => {
    sim = await startSimulator();
    c = clients(sim);
    const failed = {
      ...deployment(1), metadata: { name: 'web', namespace: 'default', generation: 1 },
      status: { observedGeneration: 1, replicas: 1, unavailableReplicas: 1, conditions: [{ type: 'Progressing', status: 'False', reason: 'ProgressDeadlineExceeded', message: 'ReplicaSet "web-1" has timed out progressing.' }] },
    };
    sim.put(failed);
    await new Promise((r) => setTimeout(r, 150)); // several rollout delays at speed 50
    const d = await c.apps.readNamespacedDeployment({ name: 'web', namespace: 'default' });
    expect(d.status!.conditions).toEqual([expect.objectContaining({ type: 'Progressing', status: 'False', reason: 'ProgressDeadlineExceeded' })]);
  });

  it('binds an Immediate PVC at once, to a PersistentVolume of the default StorageClass', async () => {
    sim = await startSimulator();
    c = clients(sim);
    const created = await apply(c, pvc('data'));
    expect((created as any).spec.storageClassName).toBe('standard');
    const bound = await until(() => {
      const p = sim.get('v1', 'PersistentVolumeClaim', 'data', 'default');
      return p.status.phase === 'Bound' && p;
    }, 'Bound');
    expect(bound.status.capacity).toEqual({ storage: '5Gi' });
    const pv = sim.get('v1', 'PersistentVolume', bound.spec.volumeName);
    expect(pv.spec.claimRef).toMatchObject({ name: 'data', namespace: 'default' });
  });

  it('leaves a WaitForFirstConsumer PVC Pending until a pod that uses it is scheduled', async () => {
    sim = await startSimulator({ volumeBindingMode: 'WaitForFirstConsumer' });
    c = clients(sim);
    expect(sim.get('storage.k8s.io/v1', 'StorageClass', 'standard').volumeBindingMode).toBe('WaitForFirstConsumer');
    await apply(c, pvc('db'));
    // give the binder many times its delay: still Pending
    await new Promise((r) => setTimeout(r, 100));
    expect(sim.get('v1', 'PersistentVolumeClaim', 'db', 'default').status.phase).toBe('Pending');
    const consumer = job('uses-db');
    (consumer.spec.template.spec as any).volumes = [{ name: 'db', persistentVolumeClaim: { claimName: 'db' } }];
    await apply(c, consumer);
    const bound = await until(() => {
      const p = sim.get('v1', 'PersistentVolumeClaim', 'db', 'default');
      return p.status.phase === 'Bound' && p;
    }, 'bound after consumer');
    expect(bound.metadata.annotations['volume.kubernetes.io/selected-node']).toBeTruthy();
  });

  it('keeps a deleted claim Terminating while a finished Job pod refers to it, as kube-controller-manager\'s pvc-protection does', async () => {
    sim = await startSimulator();
    c = clients(sim);
    await apply(c, pvc('data'));
    const consumer = job('uses-data');
    (consumer.spec.template.spec as any).volumes = [{ name: 'data', persistentVolumeClaim: { claimName: 'data' } }];
    await apply(c, consumer);
    await until(() => sim.get('batch/v1', 'Job', 'uses-data', 'default')?.status?.succeeded === 1, 'Job complete');
    await c.core.deleteNamespacedPersistentVolumeClaim({ name: 'data', namespace: 'default' });
    const held = sim.get('v1', 'PersistentVolumeClaim', 'data', 'default');
    expect(held.metadata.deletionTimestamp).toBeTruthy();
    expect(held.metadata.finalizers).toEqual(['kubernetes.io/pvc-protection']);
    // The Job and its Succeeded pod go: then the claim does.
    await c.batch.deleteNamespacedJob({ name: 'uses-data', namespace: 'default', propagationPolicy: 'Background' });
    await until(() => !sim.get('v1', 'PersistentVolumeClaim', 'data', 'default'), 'claim gone');
  });

  it('makes Issuers and Certificates Ready and writes the TLS Secret', async () => {
    sim = await startSimulator();
    c = clients(sim);
    const cert = {
      apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { name: 'uyuni-cert', namespace: 'default' },
      spec: { secretName: 'uyuni-cert', commonName: 'uyuni.example.com', dnsNames: ['uyuni.example.com'], issuerRef: { name: 'uyuni-issuer', kind: 'Issuer' } },
    };
    // the Certificate first: it waits for its Issuer
    await apply(c, cert);
    await until(() => sim.get('cert-manager.io/v1', 'Certificate', 'uyuni-cert', 'default').status?.conditions, 'not ready yet');
    expect(ready(sim.get('cert-manager.io/v1', 'Certificate', 'uyuni-cert', 'default'))).toBe(false);
    await apply(c, { apiVersion: 'cert-manager.io/v1', kind: 'Issuer', metadata: { name: 'uyuni-issuer', namespace: 'default' }, spec: { selfSigned: {} } });
    await until(() => ready(sim.get('cert-manager.io/v1', 'Issuer', 'uyuni-issuer', 'default')), 'Issuer Ready');
    const ok = await until(() => {
      const x = sim.get('cert-manager.io/v1', 'Certificate', 'uyuni-cert', 'default');
      return ready(x) && x;
    }, 'Certificate Ready');
    expect(ok.status.conditions[0]).toMatchObject({ type: 'Ready', status: 'True', reason: 'Ready' });
    const secret = await c.core.readNamespacedSecret({ name: 'uyuni-cert', namespace: 'default' });
    expect(secret.type).toBe('kubernetes.io/tls');
    expect(Object.keys(secret.data!).sort()).toEqual(['ca.crt', 'tls.crt', 'tls.key']);
    expect(Buffer.from(secret.data!['tls.crt'], 'base64').toString()).toContain('BEGIN CERTIFICATE');
    expect(secret.metadata!.annotations!['cert-manager.io/certificate-name']).toBe('uyuni-cert');
  });

  it('keeps a CA ClusterIssuer not Ready until its Secret exists', async () => {
    sim = await startSimulator();
    c = clients(sim);
    await apply(c, { apiVersion: 'cert-manager.io/v1', kind: 'ClusterIssuer', metadata: { name: 'ca' }, spec: { ca: { secretName: 'root-ca' } } });
    const notReady = await until(() => sim.get('cert-manager.io/v1', 'ClusterIssuer', 'ca')?.status?.conditions?.[0], 'condition');
    expect(notReady).toMatchObject({ status: 'False', reason: 'ErrGetKeyPair' });
    await c.core.createNamespacedSecret({ namespace: 'cert-manager', body: { metadata: { name: 'root-ca' }, type: 'kubernetes.io/tls', stringData: { 'tls.crt': 'x', 'tls.key': 'y' } } });
    await until(() => ready(sim.get('cert-manager.io/v1', 'ClusterIssuer', 'ca')), 'ClusterIssuer Ready');
  });
});
