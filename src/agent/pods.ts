/**
 * The pods bound to one node, read completely or not at all (spec §4.1: the reference went on with
 * an empty list after an error and stopped every service on the node).
 *
 * `GET /api/v1/pods?fieldSelector=spec.nodeName=<node>&limit=N`, following `continue` tokens to the
 * last page. Any error, timeout, non-200 answer or malformed page rejects with a PodListError;
 * the caller then removes nothing.
 *
 * The kubeconfig is read with @kubernetes/client-node's own parser (config_types). Certificate,
 * token and basic auth are applied here; for exec and auth-provider users the full client's
 * KubeConfig supplies the request options. Loading the full client costs ~35 MB of RSS and 0.2 s,
 * so it is only loaded for those users (in the agent's bundle it is a file of its own,
 * scripts/build.js).
 */
import * as fs from 'fs';
import * as https from 'https';
import * as path from 'path';
import { parse as parseYaml } from 'yaml';
import { newClusters, newContexts, newUsers } from '@kubernetes/client-node/dist/config_types.js';
import { DEFAULT_API_TIMEOUT_SECONDS } from '../systemd/defaults';
import type { PodLike } from '../systemd/pod';
import { exchange } from './http-exchange';

export class PodListError extends Error {}

export interface PodListOptions {
  /** Path of the kubeconfig file. */
  readonly kubeconfig: string;
  readonly node: string;
  /** Upper bound for each page's request, from connect to the last byte. @default DEFAULT_API_TIMEOUT_SECONDS (30 s) */
  readonly timeoutMs?: number;
  /** `limit` per page. @default 500 */
  readonly pageSize?: number;
}

export interface ApiConnection {
  readonly server: URL;
  readonly request: https.RequestOptions;
}

const MAX_PAGES = 10_000;

function readMaybe(file: string | undefined, base: string): Buffer | undefined {
  return file ? fs.readFileSync(path.resolve(base, file)) : undefined;
}

/** Request options for the kubeconfig's current context. */
export async function apiConnection(kubeconfig: string): Promise<ApiConnection> {
  let raw: string;
  try {
    raw = fs.readFileSync(kubeconfig, 'utf8');
  } catch (e) {
    throw new PodListError(`cannot read the kubeconfig ${kubeconfig}: ${(e as Error).message}`);
  }
  try {
    const doc = parseYaml(raw) ?? {};
    const opts = { onInvalidEntry: 'throw' as const };
    const contexts = newContexts(doc.contexts, opts);
    const current = contexts.find((c) => c.name === doc['current-context']) ?? (contexts.length === 1 ? contexts[0] : undefined);
    if (!current) throw new Error(`no current-context (contexts: ${contexts.map((c) => c.name).join(', ') || 'none'})`);
    const cluster = newClusters(doc.clusters, opts).find((c) => c.name === current.cluster);
    if (!cluster) throw new Error(`context ${current.name} names the cluster ${current.cluster}, which is not defined`);
    const user = newUsers(doc.users, opts).find((u) => u.name === current.user);
    const base = path.dirname(kubeconfig);
    const server = new URL(cluster.server);

    if (user?.exec || user?.authProvider) {
      const { KubeConfig } = await import('@kubernetes/client-node');
      const kc = new KubeConfig();
      kc.loadFromFile(kubeconfig);
      const request: https.RequestOptions = {};
      await kc.applyToHTTPSOptions(request);
      delete request.agent;
      return { server, request };
    }

    const headers: Record<string, string> = {};
    if (user?.token) headers.Authorization = `Bearer ${user.token}`;
    if (user?.username) headers.Authorization = `Basic ${Buffer.from(`${user.username}:${user.password ?? ''}`).toString('base64')}`;
    if (user?.impersonateUser) headers['Impersonate-User'] = user.impersonateUser;
    return {
      server,
      request: {
        headers,
        ca: cluster.caData ? Buffer.from(cluster.caData, 'base64') : readMaybe(cluster.caFile, base),
        cert: user?.certData ? Buffer.from(user.certData, 'base64') : readMaybe(user?.certFile, base),
        key: user?.keyData ? Buffer.from(user.keyData, 'base64') : readMaybe(user?.keyFile, base),
        rejectUnauthorized: !cluster.skipTLSVerify,
        servername: cluster.tlsServerName,
      },
    };
  } catch (e) {
    if (e instanceof PodListError) throw e;
    throw new PodListError(`cannot use the kubeconfig ${kubeconfig}: ${(e as Error).message}`);
  }
}

/** Field selector values escape `\`, `,` and `=` with a backslash. */
function selectorValue(value: string): string {
  return value.replace(/[\\,=]/g, (c) => `\\${c}`);
}

/** Every pod bound to `node`, from all pages; rejects with PodListError when that is not certain. */
export async function listNodePods(options: PodListOptions): Promise<PodLike[]> {
  return (await listNodePodList(options)).pods;
}

/**
 * The same complete list, with the resourceVersion of its first page: a watch started from it
 * misses nothing (later pages are served as of that version).
 */
export async function listNodePodList(options: PodListOptions): Promise<{ pods: PodLike[]; resourceVersion: string }> {
  const conn = await apiConnection(options.kubeconfig);
  const timeoutMs = options.timeoutMs ?? DEFAULT_API_TIMEOUT_SECONDS * 1000;
  const pageSize = options.pageSize ?? 500;
  const pods: PodLike[] = [];
  const seenTokens = new Set<string>();
  let token: string | undefined;
  let resourceVersion = '';
  for (let page = 1; ; page++) {
    if (page > MAX_PAGES) throw new PodListError(`the pod list did not end after ${MAX_PAGES} pages`);
    const url = new URL('api/v1/pods', conn.server.href.endsWith('/') ? conn.server : new URL(`${conn.server.href}/`));
    url.searchParams.set('fieldSelector', `spec.nodeName=${selectorValue(options.node)}`);
    url.searchParams.set('limit', String(pageSize));
    if (token) url.searchParams.set('continue', token);
    const where = `listing the pods of node ${options.node} (page ${page}, ${url.origin})`;

    let answer: { status: number; body: string };
    try {
      answer = await exchange(url, { ...conn.request, method: 'GET', headers: { ...conn.request.headers, Accept: 'application/json' } }, undefined, timeoutMs);
    } catch (e) {
      throw new PodListError(`${where}: ${(e as Error).message}`);
    }
    if (answer.status !== 200) {
      let reason = answer.body.slice(0, 200);
      try {
        reason = JSON.parse(answer.body).message ?? reason;
      } catch {
        // not a Status object: show the start of the body
      }
      throw new PodListError(`${where}: HTTP ${answer.status}${answer.status === 410 ? ' (the list expired between pages)' : ''}: ${reason}`);
    }
    let list: { kind?: unknown; items?: unknown; metadata?: { continue?: unknown } };
    try {
      list = JSON.parse(answer.body);
    } catch (e) {
      throw new PodListError(`${where}: the answer is not JSON (${(e as Error).message})`);
    }
    if (list === null || typeof list !== 'object' || !Array.isArray(list.items) || (list.kind !== undefined && list.kind !== 'PodList')) {
      throw new PodListError(`${where}: the answer is not a PodList`);
    }
    for (const [i, item] of (list.items as unknown[]).entries()) {
      const pod = item as PodLike;
      if (!pod || typeof pod !== 'object' || typeof pod.metadata?.name !== 'string' || !pod.spec || typeof pod.spec !== 'object') {
        throw new PodListError(`${where}: items[${i}] is not a pod (no metadata.name or spec)`);
      }
      // A server that ignored the field selector must not make other nodes' pods count here.
      if (pod.spec.nodeName === options.node) pods.push(pod);
    }
    const rv = (list.metadata as { resourceVersion?: unknown } | undefined)?.resourceVersion;
    if (page === 1 && typeof rv === 'string') resourceVersion = rv;
    const next = list.metadata?.continue;
    if (next === undefined || next === null || next === '') return { pods, resourceVersion };
    if (typeof next !== 'string') throw new PodListError(`${where}: metadata.continue is not a string`);
    if (seenTokens.has(next)) throw new PodListError(`${where}: the server repeated the continue token ${JSON.stringify(next)}`);
    seenTokens.add(next);
    token = next;
  }
}
