/**
 * The agent's Kubernetes API client: JSON requests to paths of the API server, on the shared
 * Kubernetes layer (src/kube: the bounded transport, credentials resolved at every request, one
 * ApiError). What is the agent's own: its kubeconfig rules (one file, plain HTTP allowed, the only
 * context when none is current) and the words of its errors (`PATCH /api/v1/…: HTTP 500: …`).
 */
import * as fs from 'fs';
import type { KubeConfig } from '@kubernetes/client-node';
import { KubeClient } from '../kube/connection';
import { ApiError, KubeconfigError, RequestTimeout } from '../kube/errors';
import { loadKubeConfig } from '../kube/kubeconfig';
import { defaultLimits } from '../kube/transport';

export { ApiError };

/** The request never got a complete answer (refused, reset, timed out, cut off). */
export class ApiUnreachable extends Error {}

/** A kubeconfig the agent cannot use: its pods cannot be listed, so nothing is touched. */
export class KubeconfigUnusable extends Error {}

export interface ApiClient {
  readonly server: URL;
  /** The shared layer's connection (watches, lists). */
  readonly kube: KubeClient;
  request<T = unknown>(method: string, path: string, options?: { body?: unknown; contentType?: string; timeoutMs?: number; query?: Record<string, string | number | boolean | undefined> }): Promise<T>;
  close(): void;
}

/** The agent's kubeconfig: exactly this file, read once; its credentials are resolved at every request. */
export function agentKubeConfig(kubeconfig: string): KubeConfig {
  try {
    fs.accessSync(kubeconfig, fs.constants.R_OK);
  } catch (e) {
    throw new KubeconfigUnusable(`cannot read the kubeconfig ${kubeconfig}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  try {
    return loadKubeConfig({ kubeconfig, allowPlainHttp: true, soleContext: true });
  } catch (e) {
    if (!(e instanceof KubeconfigError)) throw e;
    throw new KubeconfigUnusable(`cannot use the kubeconfig ${kubeconfig}: ${e.message.replace(`${kubeconfig}: `, '').replace(/^not a usable kubeconfig: /, '')}`);
  }
}

/** The words of a failed request: `GET /api/v1/nodes/n: HTTP 404: nodes "n" not found`. */
export function agentError(method: string, path: string, e: unknown): Error {
  const what = `${method.toUpperCase()} ${path.startsWith('/') ? path : `/${path}`}`;
  if (e instanceof ApiError) return e.worded(`${what}: HTTP ${e.status}: ${e.message}`);
  if (e instanceof RequestTimeout && !e.deadlinePassed) return new ApiUnreachable(`${what}: no complete answer within ${e.ms} ms`);
  const message = (e as Error).message ?? String(e);
  return new ApiUnreachable(message.startsWith(what) ? message : `${what}: ${message}`);
}

/** A client of the API server of `kubeconfig`; each request's timeout `defaultTimeoutMs` unless it says otherwise. */
export async function apiClient(kubeconfig: string, defaultTimeoutMs: number): Promise<ApiClient> {
  const kube = new KubeClient(agentKubeConfig(kubeconfig), { ...defaultLimits(), requestTimeoutMs: defaultTimeoutMs });
  return {
    server: new URL(kube.server),
    kube,
    async request<T>(method: string, path: string, options: { body?: unknown; contentType?: string; timeoutMs?: number; query?: Record<string, string | number | boolean | undefined> } = {}): Promise<T> {
      try {
        return await kube.request<T>(method, path, options);
      } catch (e) {
        throw agentError(method, path.split('?')[0], e);
      }
    },
    close: () => undefined, // each request's connection closes with it
  };
}
