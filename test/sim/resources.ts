// The kinds the simulator serves: the built-in ones the runtime and kubectl touch, and the ones a
// CustomResourceDefinition registers (cert-manager's, when enabled). Discovery, routing and the
// error messages all derive from this one table.
export interface ResourceType {
  readonly group: string; // '' for the core group
  readonly version: string;
  readonly plural: string;
  readonly singular: string;
  readonly kind: string;
  readonly namespaced: boolean;
  readonly shortNames?: string[];
  /** Subresources served: 'status', 'log'. */
  readonly subresources?: string[];
  /** The verbs discovery lists. @default all of them */
  readonly verbs?: string[];
}

export const apiVersionOf = (rt: ResourceType): string => (rt.group ? `${rt.group}/${rt.version}` : rt.version);
/** Storage key of a kind: group and plural (one served version per kind here). */
export const typeKey = (rt: ResourceType): string => `${rt.group}/${rt.plural}`;
/** How the API server names a resource in messages: `jobs.batch`, `pods`. */
export const qualifiedName = (rt: ResourceType): string => (rt.group ? `${rt.plural}.${rt.group}` : rt.plural);
/** How it names a kind in Invalid messages: `Job.batch`, `Pod`. */
export const qualifiedKind = (rt: ResourceType): string => (rt.group ? `${rt.kind}.${rt.group}` : rt.kind);

const t = (group: string, version: string, kind: string, plural: string, namespaced: boolean, extra: Partial<ResourceType> = {}): ResourceType => ({
  group, version, kind, plural, singular: kind.toLowerCase(), namespaced, ...extra,
});

export const BUILTIN_TYPES: ResourceType[] = [
  t('', 'v1', 'Namespace', 'namespaces', false, { shortNames: ['ns'], subresources: ['status'] }),
  t('', 'v1', 'Pod', 'pods', true, { shortNames: ['po'], subresources: ['status', 'log'] }),
  t('', 'v1', 'Service', 'services', true, { shortNames: ['svc'], subresources: ['status'] }),
  t('', 'v1', 'ConfigMap', 'configmaps', true, { shortNames: ['cm'] }),
  t('', 'v1', 'Secret', 'secrets', true),
  t('', 'v1', 'ServiceAccount', 'serviceaccounts', true, { shortNames: ['sa'] }),
  t('', 'v1', 'PersistentVolumeClaim', 'persistentvolumeclaims', true, { shortNames: ['pvc'], subresources: ['status'] }),
  t('', 'v1', 'PersistentVolume', 'persistentvolumes', false, { shortNames: ['pv'], subresources: ['status'] }),
  t('', 'v1', 'Node', 'nodes', false, { shortNames: ['no'], subresources: ['status'] }),
  t('', 'v1', 'Event', 'events', true, { shortNames: ['ev'] }),
  t('', 'v1', 'ResourceQuota', 'resourcequotas', true, { shortNames: ['quota'], subresources: ['status'] }),
  t('', 'v1', 'Endpoints', 'endpoints', true, { shortNames: ['ep'], singular: 'endpoints' }),
  t('apps', 'v1', 'Deployment', 'deployments', true, { shortNames: ['deploy'], subresources: ['status'] }),
  t('apps', 'v1', 'StatefulSet', 'statefulsets', true, { shortNames: ['sts'], subresources: ['status'] }),
  t('apps', 'v1', 'DaemonSet', 'daemonsets', true, { shortNames: ['ds'], subresources: ['status'] }),
  t('apps', 'v1', 'ReplicaSet', 'replicasets', true, { shortNames: ['rs'], subresources: ['status'] }),
  t('batch', 'v1', 'Job', 'jobs', true, { subresources: ['status'] }),
  t('batch', 'v1', 'CronJob', 'cronjobs', true, { shortNames: ['cj'], subresources: ['status'] }),
  t('networking.k8s.io', 'v1', 'Ingress', 'ingresses', true, { shortNames: ['ing'], subresources: ['status'] }),
  t('networking.k8s.io', 'v1', 'NetworkPolicy', 'networkpolicies', true, { shortNames: ['netpol'] }),
  t('storage.k8s.io', 'v1', 'StorageClass', 'storageclasses', false, { shortNames: ['sc'] }),
  t('coordination.k8s.io', 'v1', 'Lease', 'leases', true),
  t('rbac.authorization.k8s.io', 'v1', 'Role', 'roles', true),
  t('rbac.authorization.k8s.io', 'v1', 'RoleBinding', 'rolebindings', true),
  t('rbac.authorization.k8s.io', 'v1', 'ClusterRole', 'clusterroles', false),
  t('rbac.authorization.k8s.io', 'v1', 'ClusterRoleBinding', 'clusterrolebindings', false),
  // kube-apiserver's access review: create only, answered and never stored (test/sim/http.ts)
  t('authorization.k8s.io', 'v1', 'SelfSubjectAccessReview', 'selfsubjectaccessreviews', false, { verbs: ['create'] }),
  t('apiextensions.k8s.io', 'v1', 'CustomResourceDefinition', 'customresourcedefinitions', false, { shortNames: ['crd', 'crds'], subresources: ['status'] }),
];

/** The kinds a CRD object serves (one per served version). */
export function typesFromCrd(crd: any): ResourceType[] {
  const spec = crd?.spec ?? {};
  const names = spec.names ?? {};
  if (!spec.group || !names.plural || !names.kind) return [];
  return (spec.versions ?? [])
    .filter((v: any) => v.served !== false)
    .map((v: any) => ({
      group: spec.group,
      version: v.name,
      plural: names.plural,
      singular: names.singular ?? names.kind.toLowerCase(),
      kind: names.kind,
      namespaced: spec.scope !== 'Cluster',
      shortNames: names.shortNames,
      subresources: v.subresources?.status ? ['status'] : [],
    }));
}

function crd(group: string, kind: string, plural: string, scope: 'Namespaced' | 'Cluster', shortNames: string[], app = 'cert-manager', version = 'v1'): any {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${group}`, labels: { app, 'app.kubernetes.io/name': app } },
    spec: {
      group,
      names: { kind, listKind: `${kind}List`, plural, singular: kind.toLowerCase(), shortNames, categories: [app] },
      scope,
      versions: [{ name: version, served: true, storage: true, subresources: { status: {} }, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }],
    },
  };
}

/** cert-manager's CRDs, as its release manifest registers them (schemas left open). */
export const CERT_MANAGER_CRDS = [
  crd('cert-manager.io', 'Certificate', 'certificates', 'Namespaced', ['cert', 'certs']),
  crd('cert-manager.io', 'CertificateRequest', 'certificaterequests', 'Namespaced', ['cr', 'crs']),
  crd('cert-manager.io', 'Issuer', 'issuers', 'Namespaced', []),
  crd('cert-manager.io', 'ClusterIssuer', 'clusterissuers', 'Cluster', []),
];

/** The Traefik CRDs the server's exposure uses (as the Traefik chart registers them; schemas left open). */
export const TRAEFIK_CRDS = [
  crd('traefik.io', 'Middleware', 'middlewares', 'Namespaced', [], 'traefik', 'v1alpha1'),
  crd('traefik.io', 'IngressRouteTCP', 'ingressroutetcps', 'Namespaced', [], 'traefik', 'v1alpha1'),
];
