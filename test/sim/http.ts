// The HTTP layer: routes Kubernetes REST paths onto the store, the watch hub, the controllers'
// delete semantics and the pod logs; answers discovery, /version and an OpenAPI stub; applies
// injected faults; records every request.
import type { IncomingMessage, ServerResponse } from 'node:http';
import YAML from 'yaml';
import { admit, podSecurityWarnings } from './admission';
import type { VirtualClock } from './clock';
import type { Controllers } from './controllers';
import { ApiError, alreadyExists, badRequest, noSuchResource, notFound, staleConflict } from './errors';
import type { PodLogs } from './logs';
import { PatchError, jsonPatch, mergePatch, serverSideApply } from './patch';
import { decodeProtobuf } from './protobuf';
import { ResourceType, apiVersionOf, qualifiedName } from './resources';
import { SelectorError, parseFieldSelector, parseLabelSelector } from './selectors';
import { Store, clone } from './store';
import type { WatchHub } from './watch';

export interface RequestRecord {
  method: string;
  path: string;
  query: string;
  status: number;
  at: number;
  /** When it was answered (Date.now()); unset while in flight, and for a watch until it ends. */
  done?: number;
  /** The Authorization header sent, when `authorize` is set. */
  authorization?: string;
}

export interface Fault {
  remaining: number;
  status: number;
  matcher?: string;
  retryAfterSeconds?: number;
}

export interface HttpDeps {
  store: Store;
  clock: VirtualClock;
  hub: WatchHub;
  controllers: Controllers;
  logs: PodLogs;
  faults: Fault[];
  requests: RequestRecord[];
  openapi: boolean;
  /** host:port, for discovery's serverAddressByClientCIDRs. */
  address: () => string;
  /** Whether an Authorization header is accepted (else 401 Unauthorized); unset: everyone is. */
  authorize?: (authorization: string | undefined) => boolean;
  /**
   * What the user may not do, as `verb group/resource` (`patch apps/deployments`, `create /secrets`):
   * a SelfSubjectAccessReview of one answers allowed false, as kube-apiserver's RBAC authorizer
   * answers for a user whose Role lacks that verb. Only the review models it: the request itself
   * is not refused here (failNext(…, 403) does that).
   */
  denied: Set<string>;
  /** A slow API: every request but a watch is answered `ms` late; how many were in flight at once. */
  latency: Latency;
  /** Authorization: what the simulated user may not do (403 Forbidden); empty: everything is allowed. */
  forbidden: Forbidden[];
}

/**
 * A refusal by authorization, as RBAC gives one to a user without the rule (e.g. the built-in
 * `view` ClusterRole has no `secrets`): the verbs (`get`, `list`, `watch`, `create`, `update`,
 * `patch`, `delete`, `deletecollection`) on a resource (plural, `pods/log` for a subresource), in
 * one namespace or all.
 */
export interface Forbidden {
  verbs: readonly string[];
  resource: string;
  namespace?: string;
  /** The user the message names. @default 'sim' */
  user?: string;
}

export interface Latency {
  ms: number;
  inFlight: number;
  maxInFlight: number;
}

const FAULT_TEXT: Record<number, [string, string]> = {
  // 401 and 403 as kube-apiserver words them (the simulator authenticates nobody: these are injected)
  401: ['Unauthorized', 'Unauthorized'],
  403: ['Forbidden', 'forbidden: User "sim" cannot perform this request (simulated RBAC refusal)'],
  404: ['NotFound', 'the server could not find the requested resource'],
  429: ['TooManyRequests', 'Too many requests, please try again later.'],
  500: ['InternalError', 'an error on the server ("simulated fault") has prevented the request from succeeding'],
  502: ['InternalError', 'an error on the server ("bad gateway") has prevented the request from succeeding'],
  503: ['ServiceUnavailable', 'the server is currently unable to handle the request'],
  504: ['Timeout', 'the server was unable to return a response in the time allotted, but may still be processing the request'],
};

/** Protobuf varint-length-delimited field (wire type 2). */
const pbField = (field: number, bytes: Buffer): Buffer => {
  const len: number[] = [];
  for (let n = bytes.length; ; n >>= 7) {
    if (n < 0x80) {
      len.push(n);
      break;
    }
    len.push((n & 0x7f) | 0x80);
  }
  return Buffer.concat([Buffer.from([(field << 3) | 2, ...len]), bytes]);
};
/**
 * OpenAPI v2 as kubectl asks for it (gnostic protobuf only): a document with no definitions,
 * `{swagger: "2.0", info: {title, version}}`. `kubectl apply` reads /openapi/v3 first; finding no
 * group-version there, it validates client-side against v2 (a 404 there is a hard error), finds
 * no schema, and leaves each kind to the REST mapping, which reports a missing CRD as on a real
 * cluster. No field is ever checked against a schema.
 */
const OPENAPI_V2_EMPTY = Buffer.concat([
  pbField(1, Buffer.from('2.0')),
  pbField(2, Buffer.concat([pbField(1, Buffer.from('Kubernetes')), pbField(2, Buffer.from('v1.32.4-sim'))])),
]);

const VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];
const DEFAULT_WATCH_TIMEOUT_S = 1800; // the API server's --min-request-timeout

interface Route {
  rt: ResourceType;
  namespace?: string;
  name?: string;
  sub?: string;
  watchPath: boolean;
}

export function createHandler(d: HttpDeps) {
  const { store, clock } = d;

  function json(res: ServerResponse, rec: RequestRecord, status: number, body: unknown, headers: Record<string, string | string[]> = {}): void {
    rec.status = status;
    rec.done = Date.now();
    const text = JSON.stringify(body);
    res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text), ...headers });
    res.end(text);
  }

  /** A write's answer, with admission's warnings as kube-apiserver sends them (`Warning: 299 - "…"`, one header each). */
  function written(res: ServerResponse, rec: RequestRecord, r: Route, status: number, body: any): void {
    const warnings = podSecurityWarnings(store, r.rt, body).map((w: string) => `299 - "${w.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`);
    json(res, rec, status, body, warnings.length ? { Warning: warnings } : {});
  }

  /** kube-apiserver's answer to a SelfSubjectAccessReview: the review with its status, nothing stored. */
  function accessReview(body: any): unknown {
    const a = body?.spec?.resourceAttributes ?? {};
    // One authorizer decides both, as kube-apiserver's RBAC does: what `forbidden` refuses a
    // request, the review says is not allowed.
    const allowed = !d.denied.has(`${a.verb} ${a.group ?? ''}/${a.resource}`)
      && !d.forbidden.some((f) => f.resource === a.resource && f.verbs.includes(a.verb) && (f.namespace === undefined || f.namespace === a.namespace));
    return { ...body, metadata: { creationTimestamp: null }, status: allowed ? { allowed: true, reason: 'RBAC: allowed' } : { allowed: false } };
  }

  function groups(): Map<string, string[]> {
    const m = new Map<string, string[]>();
    for (const rt of store.types()) {
      if (!rt.group) continue;
      const vs = m.get(rt.group) ?? [];
      if (!vs.includes(rt.version)) vs.push(rt.version);
      m.set(rt.group, vs);
    }
    return m;
  }

  function resourceList(group: string, version: string): any {
    const types = store.types().filter((t) => t.group === group && t.version === version);
    if (!types.length) throw noSuchResource();
    return {
      kind: 'APIResourceList', apiVersion: 'v1', groupVersion: group ? `${group}/${version}` : version,
      resources: types.flatMap((t) => [
        { name: t.plural, singularName: t.singular, namespaced: t.namespaced, kind: t.kind, verbs: t.verbs ?? VERBS, ...(t.shortNames?.length ? { shortNames: t.shortNames } : {}) },
        ...(t.subresources ?? []).map((s) => ({ name: `${t.plural}/${s}`, singularName: '', namespaced: t.namespaced, kind: s === 'log' ? 'Pod' : t.kind, verbs: s === 'log' ? ['get'] : ['get', 'patch', 'update'] })),
      ]),
    };
  }

  /** Discovery, /version, OpenAPI; undefined when the path is a resource path. */
  function meta(segs: string[]): any | undefined {
    const p = segs.join('/');
    if (p === 'version') return { major: '1', minor: '32', gitVersion: 'v1.32.4-sim', gitCommit: '0000000000000000000000000000000000000000', gitTreeState: 'clean', buildDate: '2025-04-22T00:00:00Z', goVersion: 'go1.23.8', compiler: 'gc', platform: 'linux/amd64' };
    if (p === 'api') return { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: d.address() }] };
    if (p === 'api/v1') return resourceList('', 'v1');
    const group = (name: string, versions: string[]) => ({
      name, versions: versions.map((v) => ({ groupVersion: `${name}/${v}`, version: v })), preferredVersion: { groupVersion: `${name}/${versions[0]}`, version: versions[0] },
    });
    if (p === 'apis') return { kind: 'APIGroupList', apiVersion: 'v1', groups: [...groups()].map(([n, vs]) => group(n, vs)) };
    if (segs[0] === 'apis' && segs.length === 2) {
      const vs = groups().get(segs[1]);
      if (!vs) throw noSuchResource();
      return { kind: 'APIGroup', apiVersion: 'v1', ...group(segs[1], vs) };
    }
    if (segs[0] === 'apis' && segs.length === 3) return resourceList(segs[1], segs[2]);
    if (p === 'healthz' || p === 'readyz' || p === 'livez') return 'ok';
    if (d.openapi && p === 'openapi/v3') return { paths: {} }; // no group-version documents: kubectl falls back to v2
    if (d.openapi && p === 'openapi/v2') return OPENAPI_V2_EMPTY;
    return undefined;
  }

  function route(segs: string[]): Route {
    let group: string;
    let version: string;
    let rest: string[];
    if (segs[0] === 'api') [group, version, rest] = ['', segs[1], segs.slice(2)];
    else if (segs[0] === 'apis') [group, version, rest] = [segs[1], segs[2], segs.slice(3)];
    else throw noSuchResource();
    const watchPath = rest[0] === 'watch';
    if (watchPath) rest = rest.slice(1);
    const nsType = rest[0] === 'namespaces' && rest.length >= 3 ? store.typeByResource(group, version, rest[2]) : undefined;
    let r: Omit<Route, 'rt'> & { plural: string };
    if (nsType?.namespaced) r = { namespace: rest[1], plural: rest[2], name: rest[3], sub: rest[4], watchPath };
    else r = { plural: rest[0], name: rest[1], sub: rest[2], watchPath };
    const rt = store.typeByResource(group, version, r.plural);
    if (!rt || rest.length > (r.namespace ? 5 : 3)) throw noSuchResource();
    if (!rt.namespaced && r.namespace) throw noSuchResource();
    if (r.sub && !(rt.subresources ?? []).includes(r.sub)) throw noSuchResource();
    return { rt, namespace: r.namespace, name: r.name, sub: r.sub, watchPath };
  }

  function parseBody(raw: Buffer, contentType: string): any {
    if (!raw.length) return undefined;
    const type = contentType.split(';')[0].trim();
    if (type === 'application/vnd.kubernetes.protobuf') {
      try {
        return decodeProtobuf(raw);
      } catch (e) {
        throw new ApiError(415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: application/json, application/yaml (${(e as Error).message})`);
      }
    }
    if (type.includes('protobuf') || type.includes('cbor'))
      throw new ApiError(415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/apply-patch+yaml, application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json`);
    const text = raw.toString('utf8');
    try {
      return type === 'application/apply-patch+yaml' || type === 'application/yaml' ? YAML.parse(text) : JSON.parse(text);
    } catch (e) {
      throw badRequest(`error decoding request body: ${(e as Error).message}`);
    }
  }

  const dryRunOf = (q: URLSearchParams) => {
    const v = q.getAll('dryRun');
    if (v.some((x) => x !== 'All')) throw badRequest(`dryRun: Unsupported value: "${v.find((x) => x !== 'All')}": supported values: "All"`);
    return v.length > 0;
  };

  function checkKind(rt: ResourceType, body: any, requireBoth: boolean): void {
    if (typeof body !== 'object' || body === null || Array.isArray(body)) throw badRequest('the request body must be an object');
    if ((requireBoth && !body.apiVersion) || (body.apiVersion && body.apiVersion !== apiVersionOf(rt)))
      throw badRequest(`the API version in the data (${body.apiVersion ?? ''}) does not match the expected API version (${apiVersionOf(rt)})`);
    if ((requireBoth && !body.kind) || (body.kind && body.kind !== rt.kind)) throw badRequest(`the kind in the data (${body.kind ?? ''}) does not match the expected kind (${rt.kind})`);
  }

  /** Writes an admitted object (or only computes it for dryRun) and runs the finalizer check. */
  function commit(rt: ResourceType, next: any, dryRun: boolean): any {
    // A pod condition's lastProbeTime is a metav1.Time, not a pointer: kube-apiserver answers
    // `lastProbeTime: null` on every condition that has none (seen on v1.34 after the node
    // agent's pods/status merge patch, which sends none). The agent must take null for absent.
    if (rt.group === '' && rt.kind === 'Pod' && Array.isArray(next.status?.conditions)) {
      next.status.conditions = next.status.conditions.map((c: any) => (c && typeof c === 'object' && c.lastProbeTime === undefined ? { ...c, lastProbeTime: null } : c));
    }
    if (dryRun) return next;
    const stored = store.update(rt, next);
    d.controllers.finalizersChanged(rt, stored);
    return stored;
  }

  function create(r: Route, body: any, q: URLSearchParams, dryRun: boolean): any {
    checkKind(r.rt, body, false);
    const obj = clone(body);
    const md = (obj.metadata ??= {});
    if (r.rt.namespaced) {
      if (md.namespace && md.namespace !== r.namespace) throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
      md.namespace = r.namespace;
    }
    if (!md.name && md.generateName) md.name = md.generateName + Math.random().toString(36).slice(2, 7);
    for (const k of ['resourceVersion', 'uid', 'creationTimestamp', 'deletionTimestamp', 'generation', 'managedFields']) delete md[k];
    if ((r.rt.subresources ?? []).includes('status')) delete obj.status;
    if (md.name && store.get(r.rt, r.namespace, md.name)) throw alreadyExists(r.rt, md.name);
    const admitted = admit(store, r.rt, obj, undefined);
    const manager = q.get('fieldManager');
    if (manager) md.managedFields = [{ manager, operation: 'Update', apiVersion: apiVersionOf(r.rt), time: clock.timestamp(), fieldsType: 'FieldsV1', fieldsV1: {} }];
    return dryRun ? admitted : store.create(r.rt, admitted);
  }

  /** Carries the server-owned parts of `existing` into `next` (an update of the main resource). */
  function keepServerFields(r: Route, existing: any, next: any): any {
    next.apiVersion = existing.apiVersion;
    next.kind = existing.kind;
    next.metadata = { ...next.metadata, name: existing.metadata.name, namespace: existing.metadata.namespace, uid: existing.metadata.uid, creationTimestamp: existing.metadata.creationTimestamp, deletionTimestamp: existing.metadata.deletionTimestamp, generation: existing.metadata.generation };
    if (!r.rt.namespaced) delete next.metadata.namespace;
    if (r.sub === 'status') return { ...existing, status: next.status, metadata: { ...existing.metadata, resourceVersion: next.metadata.resourceVersion } };
    if ((r.rt.subresources ?? []).includes('status')) next.status = existing.status;
    return next;
  }

  function checkResourceVersion(r: Route, existing: any, next: any): void {
    const rv = next?.metadata?.resourceVersion;
    if (rv && rv !== existing.metadata.resourceVersion) throw staleConflict(r.rt, existing.metadata.name);
  }

  function replace(r: Route, body: any, dryRun: boolean): any {
    checkKind(r.rt, body, false);
    const existing = store.get(r.rt, r.namespace, r.name!);
    if (!existing) throw notFound(r.rt, r.name!);
    if (body.metadata?.name && body.metadata.name !== r.name) throw badRequest(`the name of the object (${body.metadata.name}) does not match the name on the URL (${r.name})`);
    checkResourceVersion(r, existing, body);
    let next = keepServerFields(r, existing, clone(body));
    next.metadata.managedFields ??= existing.metadata.managedFields;
    if (r.sub !== 'status') next = admit(store, r.rt, next, existing);
    return commit(r.rt, next, dryRun);
  }

  /**
   * An Update (PUT or a non-apply patch) with a fieldManager leaves that manager's entry in
   * managedFields with the time, as the API server does (the fields it owns are not tracked here).
   */
  function updateManager(next: any, existing: any, manager: string | null, sub: string | undefined): void {
    if (!manager) return;
    const entries = (next.metadata.managedFields ?? existing.metadata.managedFields ?? []).filter((f: any) => !(f.manager === manager && f.operation === 'Update' && (f.subresource ?? '') === (sub ?? '')));
    next.metadata.managedFields = [...entries, { manager, operation: 'Update', apiVersion: next.apiVersion, time: new Date().toISOString().replace(/\.\d+Z$/, 'Z'), fieldsType: 'FieldsV1', fieldsV1: {}, ...(sub ? { subresource: sub } : {}) }];
  }

  function patch(r: Route, body: any, contentType: string, q: URLSearchParams, dryRun: boolean): { status: number; body: any } {
    const type = contentType.split(';')[0].trim();
    const existing = store.get(r.rt, r.namespace, r.name!);
    if (type === 'application/apply-patch+yaml') {
      const manager = q.get('fieldManager');
      if (!manager) throw new ApiError(422, 'Invalid', 'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch', { group: 'meta.k8s.io', kind: 'PatchOptions', causes: [{ reason: 'FieldValueRequired', message: 'Required value: is required for apply patch', field: 'fieldManager' }] });
      checkKind(r.rt, body, true);
      if (body.metadata?.name && body.metadata.name !== r.name) throw badRequest(`the name of the object (${body.metadata.name}) does not match the name on the URL (${r.name})`);
      if (r.rt.namespaced && body.metadata?.namespace && body.metadata.namespace !== r.namespace) throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
      if (existing) checkResourceVersion(r, existing, body);
      const force = q.get('force') === 'true';
      const applied = r.sub === 'status' ? { apiVersion: body.apiVersion, kind: body.kind, metadata: {}, status: body.status } : body;
      if (r.sub === 'status') {
        if (!existing) throw notFound(r.rt, r.name!);
        return { status: 200, body: commit(r.rt, { ...existing, status: mergePatch(existing.status, applied.status) }, dryRun) };
      }
      let merged: any;
      try {
        merged = serverSideApply(existing, applied, manager, force, apiVersionOf(r.rt), clock.timestamp());
      } catch (e) {
        if (e instanceof PatchError && e.conflicts)
          throw new ApiError(409, 'Conflict', e.message, { name: r.name, group: r.rt.group || undefined, kind: r.rt.plural, causes: e.conflicts.map((c) => ({ reason: 'FieldManagerConflict', message: `conflict with "${c.manager}"`, field: c.field })) });
        throw e;
      }
      if (!existing) {
        merged.metadata = { ...merged.metadata, name: r.name, ...(r.rt.namespaced ? { namespace: r.namespace } : {}) };
        const managedFields = merged.metadata.managedFields;
        const created = create(r, merged, new URLSearchParams(), true);
        created.metadata.managedFields = managedFields;
        return { status: 201, body: dryRun ? created : store.create(r.rt, created) };
      }
      const next = admit(store, r.rt, keepServerFields(r, existing, merged), existing);
      return { status: 200, body: commit(r.rt, next, dryRun) };
    }
    if (!existing) throw notFound(r.rt, r.name!);
    let patched: any;
    try {
      if (type === 'application/merge-patch+json' || type === 'application/strategic-merge-patch+json') patched = mergePatch(existing, body);
      else if (type === 'application/json-patch+json') patched = jsonPatch(existing, body);
      else throw new ApiError(415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, application/strategic-merge-patch+json`);
    } catch (e) {
      if (e instanceof PatchError) throw new ApiError(e.code, e.code === 400 ? 'BadRequest' : 'Invalid', e.message);
      throw e;
    }
    checkResourceVersion(r, existing, patched);
    let next = keepServerFields(r, existing, patched);
    updateManager(next, existing, q.get('fieldManager'), r.sub);
    if (r.sub !== 'status') next = admit(store, r.rt, next, existing);
    return { status: 200, body: commit(r.rt, next, dryRun) };
  }

  /** The request's label and field selectors; a malformed one is a 400. */
  function selectors(r: Route, q: URLSearchParams) {
    try {
      return { labelMatch: parseLabelSelector(q.get('labelSelector')), fieldMatch: parseFieldSelector(q.get('fieldSelector'), r.rt) };
    } catch (e) {
      if (e instanceof SelectorError) throw badRequest(e.message);
      throw e;
    }
  }

  function list(r: Route, q: URLSearchParams): any {
    const { labelMatch, fieldMatch } = selectors(r, q);
    const key = (o: any) => `${o.metadata.namespace ?? ''}/${o.metadata.name}`;
    const match = (o: any) => labelMatch(o.metadata.labels) && fieldMatch(o);
    let items = store.list(r.rt, r.namespace).filter(match);
    let listRv = store.resourceVersion;
    const cont = q.get('continue');
    if (cont) {
      let token: { rv: number; start: string };
      try {
        token = JSON.parse(Buffer.from(cont, 'base64url').toString());
      } catch {
        throw badRequest('continue key is not valid: illegal base64 data');
      }
      // later pages show the list as it was at the first page's resourceVersion
      const snapshot = store.listAt(r.rt, r.namespace, token.rv);
      if (!snapshot)
        throw new ApiError(410, 'Expired', 'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.');
      listRv = token.rv;
      items = snapshot.filter((o) => match(o) && key(o) > token.start);
    }
    const limit = Number(q.get('limit') ?? 0);
    const metadata: any = { resourceVersion: String(listRv) };
    if (limit > 0 && items.length > limit) {
      metadata.remainingItemCount = items.length - limit;
      items = items.slice(0, limit);
      metadata.continue = Buffer.from(JSON.stringify({ rv: listRv, start: key(items[items.length - 1]) })).toString('base64url');
    }
    return { kind: `${r.rt.kind}List`, apiVersion: apiVersionOf(r.rt), metadata, items };
  }

  function watch(r: Route, q: URLSearchParams, res: ServerResponse, rec: RequestRecord): void {
    const { labelMatch, fieldMatch } = selectors(r, q);
    rec.status = 200;
    d.hub.serve(res, {
      rt: r.rt, namespace: r.namespace, name: r.name, labelMatch, fieldMatch,
      resourceVersion: q.get('resourceVersion') ?? undefined,
      bookmarks: q.get('allowWatchBookmarks') === 'true',
      initialEvents: q.get('sendInitialEvents') === 'true',
      timeoutSeconds: Number(q.get('timeoutSeconds')) || DEFAULT_WATCH_TIMEOUT_S, // 0 or none: the server's own timeout
    });
  }

  function podLog(r: Route, q: URLSearchParams, req: IncomingMessage, res: ServerResponse, rec: RequestRecord): void {
    const pod = store.get(r.rt, r.namespace, r.name!);
    if (!pod) throw notFound(r.rt, r.name!);
    const names: string[] = (pod.spec.containers ?? []).map((c: any) => c.name);
    const container = q.get('container') || (names.length === 1 ? names[0] : undefined);
    if (!container) throw badRequest(`a container name must be specified for pod ${r.name}, choose one of: [${names.join(' ')}]`);
    if (!names.includes(container)) throw badRequest(`container ${container} is not valid for pod ${r.name}`);
    const ns = r.namespace!;
    // Only a Deployment's containers restart here (Job pods fail instead).
    const previous = q.get('previous') === 'true' ? d.logs.previous(ns, r.name!, container) : undefined;
    if (q.get('previous') === 'true' && !previous) throw badRequest(`previous terminated container "${container}" in pod "${r.name}" not found`);
    const head = () => {
      rec.status = 200;
      res.writeHead(200, { 'Content-Type': 'text/plain', 'Cache-Control': 'no-cache, private' });
    };
    if (!pod.spec.nodeName) {
      head();
      res.end();
      return;
    }
    const cs = (pod.status?.containerStatuses ?? []).find((c: any) => c.name === container);
    const waiting = !cs ? { reason: 'ContainerCreating' } : cs.state?.waiting;
    if (waiting && !previous) {
      const why = waiting.reason === 'ErrImagePull' || waiting.reason === 'ImagePullBackOff' ? 'trying and failing to pull image' : waiting.reason;
      throw badRequest(`container "${container}" in pod "${r.name}" is waiting to start: ${why}`);
    }
    const timestamps = q.get('timestamps') === 'true';
    const fmt = (l: { at: number; text: string }) => (timestamps ? `${new Date(l.at).toISOString()} ` : '') + l.text + '\n';
    let lines = previous ?? d.logs.lines(ns, r.name!, container);
    const since = Number(q.get('sinceSeconds') ?? 0);
    if (since > 0) lines = lines.filter((l) => l.at >= Date.now() - since * 1000);
    const tail = q.get('tailLines');
    if (tail !== null && Number(tail) >= 0) lines = lines.slice(Math.max(0, lines.length - Number(tail)));
    const limitBytes = Number(q.get('limitBytes') ?? 0);
    head();
    const initial = lines.map(fmt).join('');
    if (q.get('follow') !== 'true' || !cs.state?.running || previous) {
      res.end(limitBytes > 0 ? initial.slice(0, limitBytes) : initial);
      return;
    }
    res.write(initial);
    const stop = d.logs.follow(ns, r.name!, container, (l) => res.write(fmt(l)), () => res.end());
    req.on('close', stop);
    res.on('close', stop);
  }

  /** The request's verb as the API server's authorizer names it. */
  function verbOf(r: Route, method: string, q: URLSearchParams): string {
    const item = r.name !== undefined;
    switch (method) {
      case 'GET': return r.watchPath || q.get('watch') === 'true' || q.get('watch') === '1' ? 'watch' : item ? 'get' : 'list';
      case 'POST': return 'create';
      case 'PUT': return 'update';
      case 'PATCH': return 'patch';
      case 'DELETE': return item ? 'delete' : 'deletecollection';
      default: return method.toLowerCase();
    }
  }

  /**
   * 403 Forbidden for what `forbidden` denies, with the Status body kube-apiserver writes
   * (k8s.io/apiserver endpoints/handlers/responsewriters forbiddenMessage + NewForbidden):
   * `secrets is forbidden: User "u" cannot list resource "secrets" in API group "" in the namespace "ns"`
   * for a list, `secrets "x" is forbidden: …` for one object; details name the group resource.
   */
  function authorize(r: Route, method: string, q: URLSearchParams): void {
    const verb = verbOf(r, method, q);
    const resource = r.sub ? `${r.rt.plural}/${r.sub}` : r.rt.plural;
    const rule = d.forbidden.find((f) => f.resource === resource && f.verbs.includes(verb) && (f.namespace === undefined || f.namespace === r.namespace));
    if (!rule) return;
    const where = r.namespace ? `in the namespace "${r.namespace}"` : 'at the cluster scope';
    const why = `User "${rule.user ?? 'sim'}" cannot ${verb} resource "${resource}" in API group "${r.rt.group}" ${where}`;
    const what = r.name !== undefined ? `${qualifiedName(r.rt)} "${r.name}"` : qualifiedName(r.rt);
    throw new ApiError(403, 'Forbidden', `${what} is forbidden: ${why}`, { ...(r.name !== undefined ? { name: r.name } : {}), group: r.rt.group || undefined, kind: r.rt.plural });
  }

  async function serve(req: IncomingMessage, res: ServerResponse, rec: RequestRecord, raw: Buffer): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://sim');
    const q = url.searchParams;
    const segs = url.pathname.split('/').filter(Boolean).map(decodeURIComponent);
    const method = req.method ?? 'GET';

    const m = meta(segs);
    if (m !== undefined) {
      if (method !== 'GET') throw new ApiError(405, 'MethodNotAllowed', `the server does not allow this method on the requested resource`);
      if (m === OPENAPI_V2_EMPTY) {
        rec.status = 200;
        res.writeHead(200, { 'Content-Type': 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf', 'Content-Length': m.length });
        res.end(m);
      } else if (typeof m === 'string') {
        rec.status = 200;
        res.writeHead(200, { 'Content-Type': 'text/plain' });
        res.end(m);
      } else json(res, rec, 200, m);
      return;
    }
    const r = route(segs);
    authorize(r, method, q);
    const body = parseBody(raw, req.headers['content-type'] ?? 'application/json');
    const dryRun = dryRunOf(q);
    const fv = q.get('fieldValidation');
    if (fv && !['Ignore', 'Warn', 'Strict'].includes(fv)) throw badRequest(`fieldValidation: Unsupported value: "${fv}": supported values: "Ignore", "Strict", "Warn"`);
    const item = r.name !== undefined;
    if (r.rt.namespaced && r.namespace === undefined && method !== 'GET') throw noSuchResource();
    if (r.sub === 'log') {
      if (method !== 'GET') throw new ApiError(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource');
      return podLog(r, q, req, res, rec);
    }
    switch (method) {
      case 'GET':
        if (!item && (r.watchPath || q.get('watch') === 'true' || q.get('watch') === '1')) return watch(r, q, res, rec);
        if (item && r.watchPath) return watch(r, q, res, rec);
        if (!item) return json(res, rec, 200, list(r, q));
        {
          const o = store.get(r.rt, r.namespace, r.name!);
          if (!o) throw notFound(r.rt, r.name!);
          return json(res, rec, 200, o);
        }
      case 'POST':
        if (r.rt.kind === 'SelfSubjectAccessReview') return json(res, rec, 201, accessReview(body));
        if (item) throw new ApiError(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource');
        if (body === undefined) throw badRequest('the request body must not be empty');
        return written(res, rec, r, 201, create(r, body, q, dryRun));
      case 'PUT':
        if (!item || body === undefined) throw new ApiError(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource');
        return written(res, rec, r, 200, replace(r, body, dryRun));
      case 'PATCH': {
        if (!item || body === undefined) throw badRequest('a patch needs an object name and a body');
        const out = patch(r, body, req.headers['content-type'] ?? '', q, dryRun);
        return written(res, rec, r, out.status, out.body);
      }
      case 'DELETE': {
        // As kube-apiserver: a request with a body takes its DeleteOptions from the body alone and
        // ignores the query's (the handler decodes one or the other; found on the real server, CLUSTER.md (1))
        const opts = body !== undefined
          ? { propagationPolicy: body?.propagationPolicy, gracePeriodSeconds: num(body?.gracePeriodSeconds) }
          : { propagationPolicy: q.get('propagationPolicy') ?? undefined, gracePeriodSeconds: num(q.get('gracePeriodSeconds')) };
        if (!item) {
          const victims = list(r, q).items;
          if (!dryRun) for (const v of victims) d.controllers.delete(r.rt, v.metadata.namespace, v.metadata.name, opts);
          return json(res, rec, 200, { kind: `${r.rt.kind}List`, apiVersion: apiVersionOf(r.rt), metadata: { resourceVersion: String(store.resourceVersion) }, items: victims });
        }
        if (dryRun) {
          const o = store.get(r.rt, r.namespace, r.name!);
          if (!o) throw notFound(r.rt, r.name!);
          return json(res, rec, 200, o);
        }
        const gone = d.controllers.delete(r.rt, r.namespace, r.name!, opts);
        if (gone.metadata.deletionTimestamp || r.rt.kind === 'Pod') return json(res, rec, 200, gone);
        return json(res, rec, 200, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details: { name: r.name, group: r.rt.group || undefined, kind: r.rt.plural, uid: gone.metadata.uid } });
      }
      default:
        throw new ApiError(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource');
    }
  }

  return async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://sim');
    const rec: RequestRecord = { method: req.method ?? 'GET', path: url.pathname, query: url.search.slice(1), status: 0, at: Date.now() };
    d.requests.push(rec);
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks);

    if (d.authorize) {
      rec.authorization = req.headers.authorization;
      if (!d.authorize(req.headers.authorization)) return json(res, rec, 401, new ApiError(401, 'Unauthorized', 'Unauthorized').status());
    }
    const line = `${rec.method} ${rec.path}${rec.query ? '?' + rec.query : ''}`;
    const fault = d.faults.find((f) => f.remaining > 0 && (!f.matcher || line.includes(f.matcher)));
    if (fault) {
      fault.remaining--;
      const [reason, message] = FAULT_TEXT[fault.status] ?? ['InternalError', `simulated fault ${fault.status}`];
      const err = new ApiError(fault.status, reason, message, fault.retryAfterSeconds !== undefined ? { retryAfterSeconds: fault.retryAfterSeconds } : undefined);
      return json(res, rec, fault.status, err.status(), fault.retryAfterSeconds !== undefined ? { 'Retry-After': String(fault.retryAfterSeconds) } : {});
    }
    const slow = !/(^|&)watch=(true|1)(&|$)/.test(rec.query);
    if (slow) d.latency.maxInFlight = Math.max(d.latency.maxInFlight, ++d.latency.inFlight);
    try {
      if (slow && d.latency.ms > 0) await new Promise((r) => setTimeout(r, d.latency.ms));
      await serve(req, res, rec, raw);
    } catch (e) {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      const err = e instanceof ApiError ? e : new ApiError(500, 'InternalError', `an error on the server ("${(e as Error).message}") has prevented the request from succeeding`);
      json(res, rec, err.code, err.status());
    } finally {
      if (slow) d.latency.inFlight--;
      rec.done = Date.now();
    }
  };
}

const num = (v: unknown) => (v === undefined || v === null || v === '' ? undefined : Number(v));
