// What the API server does to a write before storing it: defaulting (Job selector and limits,
// a PVC's default StorageClass, a Service's clusterIP, ...) and validation (names, Job template
// immutability, Deployment selectors). Only API writes pass through here; the controllers
// write status straight into the store.
import { randomUUID } from 'node:crypto';
import { Cause, ApiError, immutable, invalid } from './errors';
import { ResourceType } from './resources';
import { Store, deepEqual } from './store';

const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

function nameCauses(rt: ResourceType, name: string | undefined): Cause[] {
  if (!name) return [{ reason: 'FieldValueRequired', field: 'metadata.name', message: 'Required value: name or generateName is required' }];
  if (rt.kind === 'Namespace' || rt.kind === 'Service') {
    if (name.length > 63 || !DNS1123_LABEL.test(name))
      return [{ reason: 'FieldValueInvalid', field: 'metadata.name', message: `Invalid value: "${name}": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')` }];
  } else if (name.length > 253 || !DNS1123_SUBDOMAIN.test(name)) {
    return [{ reason: 'FieldValueInvalid', field: 'metadata.name', message: `Invalid value: "${name}": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')` }];
  }
  return [];
}

let nextClusterIp = 10;

/**
 * Defaults and validates `obj` (a copy the caller owns) for a create (old undefined) or an
 * update. Returns the object to store; throws ApiError 422/403/404.
 */
export function admit(store: Store, rt: ResourceType, obj: any, old: any | undefined): any {
  const md = (obj.metadata ??= {});
  const name = md.name;
  if (!old) {
    const causes = nameCauses(rt, name);
    if (causes.length) throw invalid(rt, name ?? '', causes);
    md.uid = randomUUID();
    if (rt.namespaced) {
      const nsType = store.typeByKind('v1', 'Namespace')!;
      const ns = store.get(nsType, undefined, md.namespace);
      if (!ns) throw new ApiError(404, 'NotFound', `namespaces "${md.namespace}" not found`, { name: md.namespace, kind: 'namespaces' });
      if (ns.metadata.deletionTimestamp)
        throw new ApiError(403, 'Forbidden', `${rt.plural} "${name}" is forbidden: unable to create new content in namespace ${md.namespace} because it is being terminated`, {
          name, group: rt.group || undefined, kind: rt.plural,
          causes: [{ reason: 'NamespaceTerminating', message: `namespace ${md.namespace} is being terminated`, field: 'metadata.namespace' }],
        });
      if (rt.group === '' && rt.kind === 'Pod') admitPodPolicy(store, ns, obj);
    }
    for (const w of store.webhooks.filter((x) => x.kinds.includes(rt.kind))) {
      if (w.action === 'fail')
        throw new ApiError(500, 'InternalError', `Internal error occurred: failed calling webhook "${w.name}": failed to call webhook: Post "https://${w.name}/validate?timeout=10s": dial tcp 10.96.0.99:443: connect: connection refused`);
      throw new ApiError(403, 'Forbidden', `admission webhook "${w.name}" denied the request: ${w.message ?? 'denied'}`);
    }
  }
  const causes: Cause[] = [];
  switch (rt.group + '/' + rt.kind) {
    case '/Namespace':
      md.labels = { ...md.labels, 'kubernetes.io/metadata.name': name };
      obj.spec = { finalizers: ['kubernetes'], ...obj.spec };
      if (!old) obj.status = { phase: 'Active' };
      break;
    case '/Pod':
      obj.spec = { restartPolicy: 'Always', schedulerName: 'default-scheduler', terminationGracePeriodSeconds: 30, dnsPolicy: 'ClusterFirst', serviceAccountName: 'default', ...obj.spec };
      if (!obj.spec.containers?.length) causes.push({ reason: 'FieldValueRequired', field: 'spec.containers', message: 'Required value' });
      if (!old) obj.status = { phase: 'Pending', qosClass: 'BestEffort' };
      break;
    case '/Secret':
      obj.type ||= 'Opaque';
      if (obj.stringData) {
        obj.data = { ...obj.data };
        for (const [k, v] of Object.entries(obj.stringData)) obj.data[k] = Buffer.from(String(v)).toString('base64');
        delete obj.stringData;
      }
      if (old && old.type !== obj.type) causes.push(immutable('type', obj.type));
      break;
    case '/Service': {
      const spec = (obj.spec ??= {});
      spec.type ??= 'ClusterIP';
      spec.sessionAffinity ??= 'None';
      if (old) {
        spec.clusterIP ??= old.spec.clusterIP;
        spec.clusterIPs ??= old.spec.clusterIPs;
        // as kube-apiserver v1.34 answers (test/cluster/immutable.test.ts): the change of clusterIP is
        // reported on clusterIPs; a change of type (LoadBalancer, NodePort, ClusterIP, ExternalName) is accepted
        if (spec.clusterIP !== old.spec.clusterIP) {
          causes.push({ reason: 'FieldValueInvalid', field: 'spec.clusterIPs[0]', message: `Invalid value: ${JSON.stringify([spec.clusterIP])}: may not change once set` });
        }
      } else if (spec.clusterIP !== 'None') {
        spec.clusterIP ??= `10.96.${Math.floor(nextClusterIp / 250)}.${(nextClusterIp++ % 250) + 1}`;
      }
      if (spec.clusterIP) spec.clusterIPs ??= [spec.clusterIP];
      spec.ports = (spec.ports ?? []).map((p: any) => ({ protocol: 'TCP', targetPort: p.port, ...p }));
      break;
    }
    case '/PersistentVolumeClaim': {
      const spec = (obj.spec ??= {});
      if (spec.storageClassName === undefined) {
        const sc = store.list(store.typeByKind('storage.k8s.io/v1', 'StorageClass')!).find((s) => s.metadata.annotations?.['storageclass.kubernetes.io/is-default-class'] === 'true');
        if (sc) spec.storageClassName = sc.metadata.name;
      }
      spec.volumeMode ??= 'Filesystem';
      if (!old) obj.status = { phase: 'Pending' };
      else {
        const strip = (s: any) => ({ ...s, resources: undefined, volumeName: undefined, volumeAttributesClassName: undefined });
        if (!deepEqual(strip(old.spec), strip(spec)))
          causes.push({ reason: 'FieldValueForbidden', field: 'spec', message: 'Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims' });
        spec.volumeName ??= old.spec.volumeName;
      }
      break;
    }
    case 'apps/Deployment': {
      const spec = (obj.spec ??= {});
      spec.replicas ??= 1;
      spec.revisionHistoryLimit ??= 10;
      spec.progressDeadlineSeconds ??= 600;
      spec.strategy ??= { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } };
      const sel = spec.selector?.matchLabels;
      const labels = spec.template?.metadata?.labels ?? {};
      if (!spec.selector) causes.push({ reason: 'FieldValueRequired', field: 'spec.selector', message: 'Required value' });
      else if (sel && !Object.entries(sel).every(([k, v]) => labels[k] === v))
        causes.push({ reason: 'FieldValueInvalid', field: 'spec.template.metadata.labels', message: `Invalid value: ${JSON.stringify(labels)}: \`selector\` does not match template \`labels\`` });
      if (old && !deepEqual(old.spec.selector, spec.selector)) causes.push(immutable('spec.selector', spec.selector));
      break;
    }
    case 'batch/Job':
      admitJob(obj, old, causes);
      break;
  }
  if (causes.length) throw invalid(rt, name, causes);
  return obj;
}

/**
 * What the simulator checks of level `restricted` in a pod's spec, worded as kube-apiserver does: a
 * subset of it (the real server also checks allowPrivilegeEscalation, dropped capabilities, the
 * seccomp profile, and `baseline`: test/sim/README.md, 8).
 */
function restrictedProblems(spec: any): string[] {
  const problems: string[] = [];
  const containers: any[] = [...(spec?.initContainers ?? []), ...(spec?.containers ?? [])];
  const privileged = containers.filter((c) => c.securityContext?.privileged).map((c) => `"${c.name}"`);
  if (privileged.length) problems.push(`privileged (container${privileged.length > 1 ? 's' : ''} ${privileged.join(', ')} must not set securityContext.privileged=true)`);
  const nonRoot = (c: any) => c.securityContext?.runAsNonRoot ?? spec?.securityContext?.runAsNonRoot;
  const rootless = containers.filter((c) => nonRoot(c) !== true).map((c) => `"${c.name}"`);
  if (rootless.length) problems.push(`runAsNonRoot != true (pod or container${rootless.length > 1 ? 's' : ''} ${rootless.join(', ')} must set securityContext.runAsNonRoot=true)`);
  const root = containers.filter((c) => (c.securityContext?.runAsUser ?? spec?.securityContext?.runAsUser) === 0).map((c) => `"${c.name}"`);
  if (root.length) problems.push(`runAsUser=0 (container${root.length > 1 ? 's' : ''} ${root.join(', ')} must not set runAsUser=0)`);
  return problems;
}

/** Kinds whose pod template PodSecurity admission checks (group/kind). */
const POD_TEMPLATES = new Set(['apps/Deployment', 'apps/ReplicaSet', 'apps/StatefulSet', 'apps/DaemonSet', 'batch/Job']);

/**
 * kube-apiserver's PodSecurity admission on a workload: accepted (a dry run too), with a
 * `Warning` header for each level its pod template breaks; a namespace's `enforce` label alone is
 * enough (seen on v1.34.4: test/cluster/pod-security.test.ts). The simulator's level: `restricted`.
 */
export function podSecurityWarnings(store: Store, rt: ResourceType, obj: any): string[] {
  if (!POD_TEMPLATES.has(`${rt.group}/${rt.kind}`)) return [];
  const ns = store.get(store.typeByKind('v1', 'Namespace')!, undefined, obj?.metadata?.namespace);
  if (ns?.metadata?.labels?.['pod-security.kubernetes.io/enforce'] !== 'restricted') return [];
  const problems = restrictedProblems(obj?.spec?.template?.spec);
  return problems.length ? [`would violate PodSecurity "restricted:latest": ${problems.join(', ')}`] : [];
}

const forbiddenPod = (name: string, why: string) => new ApiError(403, 'Forbidden', `pods "${name}" is forbidden: ${why}`, { name, kind: 'pods' });

/**
 * What the API server's built-in admission refuses of a new pod: a ResourceQuota's `pods` count
 * (`exceeded quota: q, requested: pods=1, used: pods=1, limited: pods=1`) and the PodSecurity
 * level `restricted` of a namespace labelled `pod-security.kubernetes.io/enforce=restricted`.
 */
function admitPodPolicy(store: Store, ns: any, pod: any): void {
  // admission sees a generated name's prefix, as the API server words it: pods "web-7c5b4f-" is forbidden
  const name = pod.metadata.generateName ?? pod.metadata.name;
  const namespace = pod.metadata.namespace;
  if (ns.metadata.labels?.['pod-security.kubernetes.io/enforce'] === 'restricted') {
    const problems = restrictedProblems(pod.spec);
    if (problems.length) throw forbiddenPod(name, `violates PodSecurity "restricted:latest": ${problems.join(', ')}`);
  }
  const quotaT = store.typeByKind('v1', 'ResourceQuota');
  const podT = store.typeByKind('v1', 'Pod')!;
  for (const q of quotaT ? store.list(quotaT, namespace) : []) {
    const hard = q.spec?.hard?.pods;
    if (hard === undefined) continue;
    const used = store.list(podT, namespace).filter((p) => p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed').length;
    if (used + 1 > Number(hard))
      throw forbiddenPod(name, `exceeded quota: ${q.metadata.name}, requested: pods=1, used: pods=${used}, limited: pods=${hard}`);
  }
}

/** Job defaulting as the batch/v1 strategy does it, and the fields that cannot change. */
function admitJob(obj: any, old: any | undefined, causes: Cause[]): void {
  const spec = (obj.spec ??= {});
  const template = (spec.template ??= {});
  if (!old) {
    const uid = obj.metadata.uid;
    if (!spec.manualSelector) {
      spec.selector = { matchLabels: { 'batch.kubernetes.io/controller-uid': uid } };
      template.metadata = {
        ...template.metadata,
        labels: {
          ...template.metadata?.labels,
          'batch.kubernetes.io/controller-uid': uid,
          'batch.kubernetes.io/job-name': obj.metadata.name,
          'controller-uid': uid,
          'job-name': obj.metadata.name,
        },
      };
    }
    const rp = template.spec?.restartPolicy;
    if (rp !== 'Never' && rp !== 'OnFailure')
      causes.push(rp === undefined
        ? { reason: 'FieldValueRequired', field: 'spec.template.spec.restartPolicy', message: 'Required value: valid values: "OnFailure", "Never"' }
        : { reason: 'FieldValueNotSupported', field: 'spec.template.spec.restartPolicy', message: `Unsupported value: "${rp}": supported values: "OnFailure", "Never"` });
    if (!template.spec?.containers?.length) causes.push({ reason: 'FieldValueRequired', field: 'spec.template.spec.containers', message: 'Required value' });
  }
  spec.backoffLimit ??= 6;
  spec.completions ??= 1;
  spec.parallelism ??= 1;
  spec.completionMode ??= 'NonIndexed';
  spec.suspend ??= false;
  spec.podReplacementPolicy ??= 'TerminatingOrFailed';
  if (old) {
    // Fields set at creation that an apply leaves out stay as they were.
    spec.selector ??= old.spec.selector;
    if (!deepEqual(old.spec.template, spec.template)) causes.push(immutable('spec.template', spec.template));
    if (!deepEqual(old.spec.selector, spec.selector)) causes.push(immutable('spec.selector', spec.selector));
    if (old.spec.completions !== spec.completions) causes.push(immutable('spec.completions', spec.completions));
    if (old.spec.completionMode !== spec.completionMode) causes.push(immutable('spec.completionMode', spec.completionMode));
  }
}
