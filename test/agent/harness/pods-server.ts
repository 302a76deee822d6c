/**
 * A pods-only Kubernetes API over real HTTP on loopback: `GET /api/v1/pods` with the
 * `spec.nodeName` field selector, `limit` and `continue` pagination, bearer-token auth, and
 * switchable failure modes for one page (500, a hang, a bad body, a cut-off answer).
 */
import * as fs from 'fs';
import * as http from 'http';
import type { AddressInfo } from 'net';
import * as os from 'os';
import * as path from 'path';

export type Failure = 'http-500' | 'hang' | 'not-json' | 'not-a-pod-list' | 'cut-off' | 'bad-item';

export interface PodsServer {
  readonly url: string;
  /** A kubeconfig file pointing at this server (token auth). */
  readonly kubeconfig: string;
  /**
   * The same server, its token from an exec credential plugin (what only the full Kubernetes
   * client serves): a shell script that also appends a line to `execRuns` each time it runs.
   */
  readonly execKubeconfig: string;
  readonly execRuns: string;
  /** Every request's path and query, in order. */
  readonly requests: string[];
  pods: Array<Record<string, unknown>>;
  /** Fail the given page (1-based) with the given failure; undefined: serve normally. */
  failure?: { page: number; kind: Failure };
  /** Answer as a server that does not support field selectors would: every pod. */
  ignoreFieldSelector?: boolean;
  close(): Promise<void>;
}

const TOKEN = 'agent-test-token';

export async function startPodsServer(pods: Array<Record<string, unknown>> = []): Promise<PodsServer> {
  const hanging = new Set<http.ServerResponse>();
  const state: PodsServer = {
    url: '', kubeconfig: '', execKubeconfig: '', execRuns: '', requests: [], pods,
    close: async () => undefined,
  };
  const server = http.createServer((req, res) => {
    state.requests.push(req.url ?? '');
    const url = new URL(req.url ?? '/', 'http://localhost');
    const send = (status: number, body: unknown): void => {
      res.writeHead(status, { 'Content-Type': 'application/json' });
      res.end(typeof body === 'string' ? body : JSON.stringify(body));
    };
    if (req.headers.authorization !== `Bearer ${TOKEN}`) return send(401, { kind: 'Status', code: 401, message: 'Unauthorized' });
    if (req.method !== 'GET' || url.pathname !== '/api/v1/pods') return send(404, { kind: 'Status', code: 404, message: 'not found' });
    const selector = url.searchParams.get('fieldSelector') ?? '';
    const m = /^spec\.nodeName=(.*)$/.exec(selector);
    if (selector && !m) return send(400, { kind: 'Status', code: 400, message: `unsupported field selector ${selector}` });
    const matching = state.pods.filter((p) => !m || state.ignoreFieldSelector || (p.spec as { nodeName?: string })?.nodeName === m[1]);
    const limit = Number(url.searchParams.get('limit') ?? '0') || matching.length || 1;
    const token = url.searchParams.get('continue');
    const offset = token ? Number(Buffer.from(token, 'base64url').toString()) : 0;
    const page = Math.floor(offset / limit) + 1;
    const items = matching.slice(offset, offset + limit);
    const next = offset + limit < matching.length ? Buffer.from(String(offset + limit)).toString('base64url') : undefined;
    const body = { kind: 'PodList', apiVersion: 'v1', metadata: { resourceVersion: '1', ...(next ? { continue: next } : {}) }, items };
    const failure = state.failure?.page === page ? state.failure.kind : undefined;
    switch (failure) {
      case 'http-500': return send(500, { kind: 'Status', code: 500, message: 'etcdserver: request timed out' });
      case 'hang': hanging.add(res); return undefined;
      case 'not-json': return send(200, '{"kind":"PodList","items":[');
      case 'not-a-pod-list': return send(200, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure' });
      case 'bad-item': return send(200, { ...body, items: [...items, { metadata: {} }] });
      case 'cut-off': {
        const text = JSON.stringify(body);
        res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': String(text.length + 100) });
        res.write(text.slice(0, Math.floor(text.length / 2)));
        setTimeout(() => res.destroy(), 20);
        return undefined;
      }
      default: return send(200, body);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'uyuni-pods-api-'));
  /** A kubeconfig of this server: its cluster's extra lines, its user's lines. */
  const writeKubeconfig = (name: string, cluster: string[], user: string[]): string => {
    const file = path.join(dir, name);
    fs.writeFileSync(file, [
      'apiVersion: v1', 'kind: Config', 'current-context: test',
      'clusters:', `- name: test`, '  cluster:', `    server: http://127.0.0.1:${port}`, ...cluster,
      'users:', '- name: test', '  user:', ...user,
      'contexts:', '- name: test', '  context:', '    cluster: test', '    user: test',
    ].join('\n'));
    return file;
  };
  const kubeconfig = writeKubeconfig('kubeconfig', [], [`    token: ${TOKEN}`]);
  const execRuns = path.join(dir, 'exec-runs');
  const plugin = path.join(dir, 'credential-plugin.sh');
  fs.writeFileSync(plugin, `#!/bin/sh\necho run >> '${execRuns}'\nprintf '%s' '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"${TOKEN}"}}'\n`, { mode: 0o755 });
  // The full client takes plain HTTP only with the TLS check off (it says so otherwise).
  const execKubeconfig = writeKubeconfig('kubeconfig-exec', ['    insecure-skip-tls-verify: true'],
    ['    exec:', '      apiVersion: client.authentication.k8s.io/v1', `      command: ${plugin}`, '      interactiveMode: Never']);
  Object.assign(state, {
    url: `http://127.0.0.1:${port}`,
    kubeconfig,
    execKubeconfig,
    execRuns,
    close: async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      fs.rmSync(dir, { recursive: true, force: true });
    },
  });
  return state;
}
