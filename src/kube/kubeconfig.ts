/**
 * Kubeconfig loading, the way kubectl merges files, with client-node's own parser: the first file
 * to define a cluster, user or context by name wins, and so does the first current-context. A
 * user's `token-file` is not read here (client-node would read it once, relative to the working
 * directory): its path is kept, and the connection reads it at every request
 * (src/kube/connection.ts), so a rotated token is used as soon as it is on disk.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { KubeConfig } from '@kubernetes/client-node';
import { parse as parseYaml } from 'yaml';
import { KubeconfigError } from './errors';

export interface KubeconfigOptions {
  /** `--kubeconfig`: exactly this file. @default $KUBECONFIG, then ~/.kube/config */
  readonly kubeconfig?: string;
  /** `--context`. @default the current-context of the (first) kubeconfig */
  readonly context?: string;
  /**
   * A plain-HTTP server without `insecure-skip-tls-verify`: refused with a message that says how
   * (client-node refuses it at the first request), or allowed (the agent, as kubectl does).
   * @default false (refused)
   */
  readonly allowPlainHttp?: boolean;
  /** Without a current-context, use the only context there is. @default false (refused) */
  readonly soleContext?: boolean;
}

/** Per KubeConfig: the token file of each user that names one (absolute paths). */
const tokenFiles = new WeakMap<KubeConfig, Map<string, string>>();

/** The token file of a kubeconfig user, read at every request; undefined when it has none. */
export function tokenFileOf(kc: KubeConfig, user: string): string | undefined {
  return tokenFiles.get(kc)?.get(user);
}

/** Which files kubectl would read: --kubeconfig, else every existing file of $KUBECONFIG, else ~/.kube/config. */
export function kubeconfigFiles(opts: KubeconfigOptions, env = process.env, home = os.homedir()): string[] {
  if (opts.kubeconfig) {
    if (!fs.existsSync(opts.kubeconfig)) throw new KubeconfigError(`--kubeconfig ${opts.kubeconfig}: no such file`);
    return [opts.kubeconfig];
  }
  if (env.KUBECONFIG) {
    const files = env.KUBECONFIG.split(path.delimiter).filter((f) => f && fs.existsSync(f));
    if (files.length === 0) throw new KubeconfigError(`KUBECONFIG=${env.KUBECONFIG}: none of these files exists`);
    return files;
  }
  const dflt = path.join(home, '.kube', 'config');
  if (!fs.existsSync(dflt)) throw new KubeconfigError(`no kubeconfig: pass --kubeconfig, set KUBECONFIG, or create ${dflt}`);
  return [dflt];
}

const typeOf = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'a list' : typeof v === 'object' ? 'a mapping' : `a ${typeof v}`);

/** What makes a document no kubeconfig, said as a user would check it (client-node only says where it tripped). */
function kubeconfigProblem(doc: unknown): string | undefined {
  if (doc === null || doc === undefined) return 'the file is empty';
  if (typeof doc !== 'object' || Array.isArray(doc)) return `it holds ${typeOf(doc)}, not a kubeconfig (a mapping with clusters, users and contexts)`;
  const d = doc as Record<string, unknown>;
  if (d.kind !== undefined && d.kind !== 'Config') return `its kind is ${JSON.stringify(d.kind)}, not Config`;
  if (!['clusters', 'users', 'contexts'].some((k) => k in d)) return 'it has no clusters, users or contexts';
  for (const k of ['clusters', 'users', 'contexts']) {
    if (d[k] !== undefined && d[k] !== null && !Array.isArray(d[k])) return `${k} is ${typeOf(d[k])}, not a list`;
  }
  return undefined;
}

/** One file, its token files set aside (absolute), or a KubeconfigError saying why it is unusable. */
function loadOne(file: string): { kc: KubeConfig; tokenFiles: Map<string, string> } {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    throw new KubeconfigError(`${file}: cannot read the kubeconfig (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (e) {
    throw new KubeconfigError(`${file}: not a usable kubeconfig: not valid YAML (${(e as Error).message.split('\n')[0]})`);
  }
  const problem = kubeconfigProblem(doc);
  if (problem) throw new KubeconfigError(`${file}: not a usable kubeconfig: ${problem}`);
  const files = new Map<string, string>();
  for (const u of ((doc as { users?: unknown }).users ?? []) as Array<{ name?: unknown; user?: Record<string, unknown> } | null>) {
    const tf = u?.user?.['token-file'];
    if (typeof tf !== 'string' || typeof u?.name !== 'string') continue;
    delete u.user!['token-file'];
    if (!u.user!.token) files.set(u.name, path.resolve(path.dirname(file), tf));
  }
  const kc = new KubeConfig();
  try {
    kc.loadFromString(JSON.stringify(doc)); // JSON is YAML: the document as checked, without its token files
    kc.makePathsAbsolute(path.dirname(file));
  } catch (e) {
    throw new KubeconfigError(`${file}: not a usable kubeconfig: ${(e as Error).message}`);
  }
  return { kc, tokenFiles: files };
}

/** Why the merged kubeconfig cannot name a server to talk to, or undefined. */
function currentProblem(kc: KubeConfig, allowPlainHttp: boolean): string | undefined {
  const have = kc.contexts.map((c) => c.name).join(', ') || 'none';
  if (!kc.currentContext) return `no current-context: pass --context (contexts: ${have})`;
  const ctx = kc.getContextObject(kc.currentContext);
  if (!ctx) return `current-context "${kc.currentContext}" is not among its contexts (${have}): pass --context`;
  const cluster = kc.getCluster(ctx.cluster);
  if (!cluster) return `context "${ctx.name}" names cluster "${ctx.cluster}", which it does not define`;
  // client-node refuses plain HTTP at the first request; say so before
  if (cluster.server.startsWith('http://') && !cluster.skipTLSVerify && !allowPlainHttp) {
    return `cluster "${cluster.name}" has the plain-HTTP server ${cluster.server}: set insecure-skip-tls-verify: true for it (the Kubernetes client refuses http:// otherwise)`;
  }
  return undefined;
}

/** Loads and merges the kubeconfig files kubectl would read, or throws KubeconfigError. */
export function loadKubeConfig(opts: KubeconfigOptions, env = process.env, home = os.homedir()): KubeConfig {
  const files = kubeconfigFiles(opts, env, home);
  const kc = new KubeConfig();
  const tokens = new Map<string, string>();
  for (const [i, file] of files.entries()) {
    const { kc: one, tokenFiles: oneTokens } = loadOne(file);
    for (const [user, f] of oneTokens) if (!tokens.has(user) && !kc.users.some((x) => x.name === user)) tokens.set(user, f);
    if (i === 0) {
      kc.loadFromOptions({ clusters: one.clusters, users: one.users, contexts: one.contexts, currentContext: one.currentContext });
      continue;
    }
    if (!kc.currentContext && one.currentContext) kc.setCurrentContext(one.currentContext);
    for (const c of one.clusters) if (!kc.clusters.some((x) => x.name === c.name)) kc.addCluster(c);
    for (const u of one.users) if (!kc.users.some((x) => x.name === u.name)) kc.addUser(u);
    for (const c of one.contexts) if (!kc.contexts.some((x) => x.name === c.name)) kc.addContext(c);
  }
  if (opts.context) {
    if (!kc.contexts.some((c) => c.name === opts.context)) {
      throw new KubeconfigError(`--context ${opts.context}: no such context in ${files.join(', ')} (have: ${kc.contexts.map((c) => c.name).join(', ') || 'none'})`);
    }
    kc.setCurrentContext(opts.context);
  }
  if (!kc.currentContext && opts.soleContext && kc.contexts.length === 1) kc.setCurrentContext(kc.contexts[0].name);
  const problem = currentProblem(kc, opts.allowPlainHttp ?? false);
  if (problem) throw new KubeconfigError(`${files.join(', ')}: ${problem}`);
  if (opts.allowPlainHttp) {
    // client-node takes http:// only with the TLS check off; over plain HTTP there is no TLS to check
    const cluster = kc.getCurrentCluster()!;
    if (cluster.server.startsWith('http://') && !cluster.skipTLSVerify) {
      kc.clusters = kc.clusters.map((c) => (c === cluster ? { ...c, skipTLSVerify: true } : c));
    }
  }
  tokenFiles.set(kc, tokens);
  return kc;
}
