/**
 * The pods bound to one node, read completely or not at all (spec §4.1: the reference went on with
 * an empty list after an error and stopped every service on the node).
 *
 * `GET /api/v1/pods?fieldSelector=spec.nodeName=<node>&limit=N`, following `continue` tokens to the
 * last page (src/kube/pager.ts). Any error, timeout, non-200 answer or malformed page rejects with
 * a PodListError; the caller then removes nothing. The requests go through the shared Kubernetes
 * layer (src/kube), credentials resolved at each one.
 */
import { ApiPod, keptPod } from './api-pod';
import { agentError, apiClient, ApiClient, ApiError, KubeconfigUnusable } from './api';
import { DEFAULT_API_TIMEOUT_SECONDS } from '../systemd/defaults';
import type { PodLike } from '../systemd/pod';
import { readPages } from '../kube/pager';

export class PodListError extends Error {}

export interface PodListOptions {
  /** Path of the kubeconfig file (read for this list unless `api` is given). */
  readonly kubeconfig: string;
  readonly node: string;
  /** The client to list with (`agent run`'s, so the kubeconfig is read once). @default one of `kubeconfig` */
  readonly api?: ApiClient;
  /** Upper bound for each page's request, from connect to the last byte. @default DEFAULT_API_TIMEOUT_SECONDS (30 s) */
  readonly timeoutMs?: number;
  /** `limit` per page. @default 500 */
  readonly pageSize?: number;
}

/** Field selector values escape `\`, `,` and `=` with a backslash. */
export function selectorValue(value: string): string {
  return value.replace(/[\\,=]/g, (c) => `\\${c}`);
}

/** `spec.nodeName=<node>`, escaped. */
export const nodeSelector = (node: string): string => `spec.nodeName=${selectorValue(node)}`;

/** Every pod bound to `node`, from all pages; rejects with PodListError when that is not certain. */
export async function listNodePods(options: PodListOptions): Promise<PodLike[]> {
  return (await listNodePodList(options)).pods;
}

interface PodListPage {
  readonly kind?: unknown;
  readonly items?: unknown[];
  readonly metadata?: { readonly resourceVersion?: unknown; readonly continue?: unknown };
}

/**
 * The same complete list, with the resourceVersion of its first page: a watch started from it
 * misses nothing (later pages are served as of that version).
 */
export async function listNodePodList(options: PodListOptions): Promise<{ pods: ApiPod[]; resourceVersion: string }> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_API_TIMEOUT_SECONDS * 1000;
  let api = options.api;
  if (!api) {
    try {
      api = await apiClient(options.kubeconfig, timeoutMs);
    } catch (e) {
      if (e instanceof KubeconfigUnusable) throw new PodListError(e.message);
      throw e;
    }
  }
  const client = api;
  const pageSize = options.pageSize ?? 500;
  const pods: ApiPod[] = [];
  let where = '';
  const fetchPage = async (token: string | undefined, page: number): Promise<PodListPage> => {
    where = `listing the pods of node ${options.node} (page ${page}, ${client.server.origin})`;
    try {
      return await client.kube.request<PodListPage>('GET', '/api/v1/pods', {
        query: { fieldSelector: nodeSelector(options.node), limit: pageSize, continue: token }, timeoutMs,
      });
    } catch (e) {
      if (e instanceof ApiError) throw new PodListError(`${where}: HTTP ${e.status}${e.status === 410 ? ' (the list expired between pages)' : ''}: ${e.message}`);
      throw new PodListError(`${where}: ${agentError('GET', '/api/v1/pods', e).message}`);
    }
  };
  const onPage = (list: PodListPage): void => {
    if (list === null || typeof list !== 'object' || !Array.isArray(list.items) || (list.kind !== undefined && list.kind !== 'PodList')) {
      throw new PodListError(`${where}: the answer is not a PodList`);
    }
    for (const [i, item] of list.items.entries()) {
      const pod = item as ApiPod;
      if (!pod || typeof pod !== 'object' || typeof pod.metadata?.name !== 'string' || !pod.spec || typeof pod.spec !== 'object') {
        throw new PodListError(`${where}: items[${i}] is not a pod (no metadata.name or spec)`);
      }
      // A server that ignored the field selector must not make other nodes' pods count here.
      // only what the agent reads is kept (api-pod.ts keptPod): the page is garbage once read
      if (pod.spec.nodeName === options.node) pods.push(keptPod(pod));
    }
  };
  try {
    const resourceVersion = await readPages(fetchPage, onPage);
    return { pods, resourceVersion };
  } catch (e) {
    if (e instanceof PodListError) throw e;
    throw new PodListError(`${where}: ${(e as Error).message}`);
  }
}
