import * as k8s from '@kubernetes/client-node';
import { Simulator, startSimulator } from './index';
import { apiError, clients, job, until } from './helpers';

describe('API simulator: discovery, CRUD, server-side apply', () => {
  let sim: Simulator;
  let c: ReturnType<typeof clients>;
  beforeEach(async () => {
    sim = await startSimulator();
    c = clients(sim);
  });
  afterEach(() => sim.stop());

  it('serves discovery for core, groups and registered CRDs', async () => {
    const api = await c.kc.makeApiClient(k8s.CoreApi).getAPIVersions();
    expect(api.versions).toEqual(['v1']);
    const groups = await c.kc.makeApiClient(k8s.ApisApi).getAPIVersions();
    const names = groups.groups.map((g) => g.name);
    expect(names).toEqual(expect.arrayContaining(['apps', 'batch', 'storage.k8s.io', 'cert-manager.io']));
    const certs = await c.kc.makeApiClient(k8s.CustomObjectsApi).getAPIResources({ group: 'cert-manager.io', version: 'v1' });
    expect(certs.resources.map((r) => r.kind)).toEqual(expect.arrayContaining(['Certificate', 'Issuer', 'ClusterIssuer']));
  });

  it('answers /version as a 1.32 server', async () => {
    const v = await c.kc.makeApiClient(k8s.VersionApi).getCode();
    expect(v).toMatchObject({ major: '1', minor: '32' });
    expect(v.gitVersion).toMatch(/^v1\.32\./);
  });

  it('404s a cert-manager kind when cert-manager is not installed, and serves it once its CRD is applied', async () => {
    await sim.stop();
    sim = await startSimulator({ certManager: false });
    c = clients(sim);
    const issuer = { apiVersion: 'cert-manager.io/v1', kind: 'Issuer', metadata: { name: 'ca', namespace: 'default' }, spec: { selfSigned: {} } };
    const err = await apiError(c.objects.patch<any>(issuer, undefined, undefined, 'test', true, k8s.PatchStrategy.ServerSideApply));
    expect(err.code).toBe(404);
    const raw = await fetch(`${sim.url}/apis/cert-manager.io/v1/namespaces/default/issuers`);
    expect(raw.status).toBe(404);
    expect(((await raw.json()) as any).reason).toBe('NotFound');

    await c.objects.patch<any>({
      apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'issuers.cert-manager.io' },
      spec: { group: 'cert-manager.io', scope: 'Namespaced', names: { kind: 'Issuer', plural: 'issuers', singular: 'issuer', listKind: 'IssuerList' }, versions: [{ name: 'v1', served: true, storage: true, subresources: { status: {} } }] },
    } as any, undefined, undefined, 'test', true, k8s.PatchStrategy.ServerSideApply);
    // a fresh client: KubernetesObjectApi caches discovery per apiVersion
    const applied = await clients(sim).objects.patch<any>(issuer, undefined, undefined, 'test', true, k8s.PatchStrategy.ServerSideApply);
    expect(applied.metadata?.uid).toBeTruthy();
    await until(() => sim.get('cert-manager.io/v1', 'Issuer', 'ca', 'default')?.status?.conditions?.[0]?.status === 'True', 'Issuer Ready');
  });

  it('creates with server-side apply, then updates; resourceVersion moves on every write, generation only on spec changes', async () => {
    const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings', namespace: 'default', labels: { a: '1' } }, data: { x: '1' } };
    const created = await c.objects.patch<any>(cm, undefined, undefined, 'uyuni', undefined, k8s.PatchStrategy.ServerSideApply);
    expect(created.metadata?.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(created.metadata?.creationTimestamp).toBeTruthy();
    expect(created.metadata?.generation).toBe(1);
    const rv1 = Number(created.metadata?.resourceVersion);

    const same = await c.objects.patch<any>(cm, undefined, undefined, 'uyuni', undefined, k8s.PatchStrategy.ServerSideApply);
    expect(same.metadata?.generation).toBe(1);

    const labelled = await c.objects.patch<any>({ ...cm, metadata: { ...cm.metadata, labels: { a: '2' } } }, undefined, undefined, 'uyuni', undefined, k8s.PatchStrategy.ServerSideApply);
    expect(Number(labelled.metadata?.resourceVersion)).toBeGreaterThan(rv1);
    expect(labelled.metadata?.generation).toBe(1); // metadata is not spec

    const changed = await c.objects.patch<any>({ ...cm, data: { x: '2' } }, undefined, undefined, 'uyuni', undefined, k8s.PatchStrategy.ServerSideApply);
    expect(changed.metadata?.generation).toBe(2);
    expect((changed as any).data).toEqual({ x: '2' });
    expect(changed.metadata?.managedFields?.[0]).toMatchObject({ manager: 'uyuni', operation: 'Apply' });

    // fields this manager stops applying are removed
    const dropped = await c.objects.patch<any>({ ...cm, data: { y: '3' } }, undefined, undefined, 'uyuni', undefined, k8s.PatchStrategy.ServerSideApply);
    expect((dropped as any).data).toEqual({ y: '3' });
  });

  it('answers dryRun=All with the result without storing it', async () => {
    const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'dry', namespace: 'default' }, data: { x: '1' } };
    const out = await c.objects.patch<any>(cm, undefined, 'All', 'uyuni', undefined, k8s.PatchStrategy.ServerSideApply);
    expect((out as any).data).toEqual({ x: '1' });
    expect(sim.get('v1', 'ConfigMap', 'dry', 'default')).toBeUndefined();
    await c.objects.patch<any>(cm, undefined, undefined, 'uyuni', undefined, k8s.PatchStrategy.ServerSideApply);
    const rv = sim.get('v1', 'ConfigMap', 'dry', 'default').metadata.resourceVersion;
    const dry = await c.objects.patch<any>({ ...cm, data: { x: '2' } }, undefined, 'All', 'uyuni', undefined, k8s.PatchStrategy.ServerSideApply);
    expect((dry as any).data).toEqual({ x: '2' });
    expect(sim.get('v1', 'ConfigMap', 'dry', 'default')).toMatchObject({ data: { x: '1' }, metadata: { resourceVersion: rv } });
  });

  it('reports a field conflict between two appliers unless forced', async () => {
    const dep = (replicas: number) => ({
      apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'default' },
      spec: { replicas, selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image: 'nginx' }] } } },
    });
    await c.objects.patch<any>(dep(1), undefined, undefined, 'uyuni', false, k8s.PatchStrategy.ServerSideApply);
    const err = await apiError(c.objects.patch<any>(dep(3), undefined, undefined, 'someone-else', false, k8s.PatchStrategy.ServerSideApply));
    expect(err.code).toBe(409);
    expect(err.body).toMatchObject({ kind: 'Status', reason: 'Conflict', code: 409 });
    expect(err.body.message).toContain('conflict with "uyuni"');
    expect(err.body.details.causes).toContainEqual(expect.objectContaining({ reason: 'FieldManagerConflict', field: '.spec.replicas' }));
    const forced = await c.objects.patch<any>(dep(3), undefined, undefined, 'someone-else', true, k8s.PatchStrategy.ServerSideApply);
    expect((forced as any).spec.replicas).toBe(3);
  });

  it('requires a fieldManager for apply', async () => {
    const res = await fetch(`${sim.url}/api/v1/namespaces/default/configmaps/x`, {
      method: 'PATCH', headers: { 'Content-Type': 'application/apply-patch+yaml' }, body: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n',
    });
    expect(res.status).toBe(422);
    expect(((await res.json()) as any).message).toContain('fieldManager: Required value');
  });

  it('a DELETE with a body takes its options from the body and ignores the query\'s, as kube-apiserver does', async () => {
    const put = (name: string) => sim.put({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default' } });
    put('q');
    // the query alone: its options count (an unsupported policy is refused)
    const query = await fetch(`${sim.url}/api/v1/namespaces/default/configmaps/q?propagationPolicy=Bogus`, { method: 'DELETE' });
    expect(query.status).toBe(422);
    expect(sim.get('v1', 'ConfigMap', 'q', 'default')).toBeDefined();
    // with a body: the query is not read
    const withBody = await fetch(`${sim.url}/api/v1/namespaces/default/configmaps/q?propagationPolicy=Bogus`, {
      method: 'DELETE', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ apiVersion: 'v1', kind: 'DeleteOptions', gracePeriodSeconds: 0 }),
    });
    expect(withBody.status).toBe(200);
    expect(sim.get('v1', 'ConfigMap', 'q', 'default')).toBeUndefined();
  });

  it('accepts an apply body in YAML', async () => {
    const res = await fetch(`${sim.url}/api/v1/namespaces/default/configmaps/x?fieldManager=t`, {
      method: 'PATCH', headers: { 'Content-Type': 'application/apply-patch+yaml' }, body: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  k: v\n',
    });
    expect(res.status).toBe(201);
    expect(sim.get('v1', 'ConfigMap', 'x', 'default').data).toEqual({ k: 'v' });
  });

  it('returns NotFound, AlreadyExists and stale-resourceVersion Conflict as Status bodies', async () => {
    const nf = await apiError(c.core.readNamespacedConfigMap({ name: 'nope', namespace: 'default' }));
    expect(nf.code).toBe(404);
    expect(nf.body).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'NotFound', code: 404, message: 'configmaps "nope" not found', details: { name: 'nope', kind: 'configmaps' } });

    await c.batch.createNamespacedJob({ namespace: 'default', body: job('once') as any });
    const dup = await apiError(c.batch.createNamespacedJob({ namespace: 'default', body: job('once') as any }));
    expect(dup.code).toBe(409);
    expect(dup.body).toMatchObject({ reason: 'AlreadyExists', message: 'jobs.batch "once" already exists', details: { group: 'batch', kind: 'jobs' } });

    const cm = await c.core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'v' }, data: { a: '1' } } });
    await c.core.replaceNamespacedConfigMap({ namespace: 'default', name: 'v', body: { ...cm, data: { a: '2' } } });
    const stale = await apiError(c.core.replaceNamespacedConfigMap({ namespace: 'default', name: 'v', body: { ...cm, data: { a: '3' } } }));
    expect(stale.code).toBe(409);
    expect(stale.body.reason).toBe('Conflict');
    expect(stale.body.message).toContain('the object has been modified');
  });

  it('rejects invalid names and objects in missing namespaces', async () => {
    const bad = await apiError(c.core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'Not_Valid' } } }));
    expect(bad.code).toBe(422);
    expect(bad.body.reason).toBe('Invalid');
    expect(bad.body.details.causes[0]).toMatchObject({ reason: 'FieldValueInvalid', field: 'metadata.name' });
    const noNs = await apiError(c.core.createNamespacedConfigMap({ namespace: 'ghost', body: { metadata: { name: 'x' } } }));
    expect(noNs.code).toBe(404);
    expect(noNs.body.message).toBe('namespaces "ghost" not found');
  });

  it('supports merge and JSON patches', async () => {
    await c.core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'p' }, data: { a: '1', b: '2' } } });
    await c.objects.patch<any>({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'p', namespace: 'default' }, data: { a: null, c: '3' } } as any, undefined, undefined, undefined, undefined, k8s.PatchStrategy.MergePatch);
    expect(sim.get('v1', 'ConfigMap', 'p', 'default').data).toEqual({ b: '2', c: '3' });
    const res = await fetch(`${sim.url}/api/v1/namespaces/default/configmaps/p`, {
      method: 'PATCH', headers: { 'Content-Type': 'application/json-patch+json' },
      body: JSON.stringify([{ op: 'replace', path: '/data/b', value: 'two' }, { op: 'add', path: '/metadata/labels', value: { k: 'v' } }]),
    });
    expect(res.status).toBe(200);
    expect(sim.get('v1', 'ConfigMap', 'p', 'default')).toMatchObject({ data: { b: 'two', c: '3' }, metadata: { labels: { k: 'v' } } });
  });

  it('deletes a namespace with its contents; finalizers hold it in Terminating', async () => {
    await c.core.createNamespace({ body: { metadata: { name: 'gone' } } });
    await c.core.createNamespacedConfigMap({ namespace: 'gone', body: { metadata: { name: 'x' } } });
    await c.core.createNamespacedConfigMap({ namespace: 'gone', body: { metadata: { name: 'held', finalizers: ['example.com/hold'] } } });
    const ns = await c.core.deleteNamespace({ name: 'gone' });
    expect((ns as any).status?.phase).toBe('Terminating');
    await until(() => !sim.get('v1', 'ConfigMap', 'x', 'gone') && sim.get('v1', 'ConfigMap', 'held', 'gone')?.metadata.deletionTimestamp, 'contents deleted');
    const refused = await apiError(c.core.createNamespacedConfigMap({ namespace: 'gone', body: { metadata: { name: 'y' } } }));
    expect(refused.code).toBe(403);
    expect(refused.body.reason).toBe('Forbidden');
    expect(sim.get('v1', 'Namespace', 'gone').status.phase).toBe('Terminating');
    await c.core.patchNamespacedConfigMap({ namespace: 'gone', name: 'held', body: [{ op: 'remove', path: '/metadata/finalizers' }] });
    await until(() => !sim.get('v1', 'Namespace', 'gone'), 'namespace gone');
    expect(sim.list('v1', 'ConfigMap', 'gone')).toEqual([]);
    const system = await apiError(c.core.deleteNamespace({ name: 'kube-system' }));
    expect(system.code).toBe(403);
    expect(system.body.message).toBe('namespaces "kube-system" is forbidden: this namespace may not be deleted');
  });

  it('forbids what RBAC would (the view role has no secrets): 403 with the Status body kube-apiserver writes', async () => {
    await c.core.createNamespacedSecret({ namespace: 'default', body: { metadata: { name: 's' }, stringData: { password: 'x' } } });
    sim.setForbidden([{ verbs: ['get', 'list', 'watch'], resource: 'secrets', namespace: 'default', user: 'system:serviceaccount:default:viewer' }]);
    const listed = await fetch(`${sim.url}/api/v1/namespaces/default/secrets`);
    expect(listed.status).toBe(403);
    expect(await listed.json()).toEqual({
      kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', reason: 'Forbidden', code: 403,
      message: 'secrets is forbidden: User "system:serviceaccount:default:viewer" cannot list resource "secrets" in API group "" in the namespace "default"',
      details: { kind: 'secrets' },
    });
    const one = await apiError(c.core.readNamespacedSecret({ namespace: 'default', name: 's' }));
    expect(one.code).toBe(403);
    expect(one.body).toMatchObject({ message: 'secrets "s" is forbidden: User "system:serviceaccount:default:viewer" cannot get resource "secrets" in API group "" in the namespace "default"', details: { name: 's', kind: 'secrets' } });
    // other namespaces, other kinds and other verbs are allowed
    expect((await fetch(`${sim.url}/api/v1/namespaces/kube-system/secrets`)).status).toBe(200);
    expect((await fetch(`${sim.url}/api/v1/namespaces/default/configmaps`)).status).toBe(200);
    sim.setForbidden([{ verbs: ['list'], resource: 'deployments' }]);
    const all = await fetch(`${sim.url}/apis/apps/v1/deployments`);
    expect(((await all.json()) as any).message).toBe('deployments.apps is forbidden: User "sim" cannot list resource "deployments" in API group "apps" at the cluster scope');
    sim.setForbidden([]);
    expect((await fetch(`${sim.url}/api/v1/namespaces/default/secrets`)).status).toBe(200);
  });
});
