import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { KubeConfig } from '@kubernetes/client-node';
import { parse as parseYaml } from 'yaml';
import { BadInput } from './errors';

export interface KubeconfigOptions {
  /** `--kubeconfig`: exactly this file. @default $KUBECONFIG, then ~/.kube/config */
  readonly kubeconfig?: string;
  /** `--context`. @default the current-context of the (first) kubeconfig */
  readonly context?: string;
}

/** Which files kubectl would read: --kubeconfig, else every existing file of $KUBECONFIG, else ~/.kube/config. */
export function kubeconfigFiles(opts: KubeconfigOptions, env = process.env, home = os.homedir()): string[] {
  if (opts.kubeconfig) {
    if (!fs.existsSync(opts.kubeconfig)) throw new BadInput(`--kubeconfig ${opts.kubeconfig}: no such file`);
    return [opts.kubeconfig];
  }
  if (env.KUBECONFIG) {
    const files = env.KUBECONFIG.split(path.delimiter).filter((f) => f && fs.existsSync(f));
    if (files.length === 0) throw new BadInput(`KUBECONFIG=${env.KUBECONFIG}: none of these files exists`);
    return files;
  }
  const dflt = path.join(home, '.kube', 'config');
  if (!fs.existsSync(dflt)) throw new BadInput(`no kubeconfig: pass --kubeconfig, set KUBECONFIG, or create ${dflt}`);
  return [dflt];
}

const typeOf = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'a list' : typeof v === 'object' ? 'a mapping' : `a ${typeof v}`);

/** What makes a file no kubeconfig, said as a user would check it (client-node only says where it tripped). */
function kubeconfigProblem(text: string): string | undefined {
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (e) {
    return `not valid YAML (${(e as Error).message.split('\n')[0]})`;
  }
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

function loadOne(file: string): KubeConfig {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    throw new BadInput(`${file}: cannot read the kubeconfig (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  const problem = kubeconfigProblem(text);
  if (problem) throw new BadInput(`${file}: not a usable kubeconfig: ${problem}`);
  const kc = new KubeConfig();
  try {
    kc.loadFromString(text);
    kc.makePathsAbsolute(path.dirname(file));
  } catch (e) {
    throw new BadInput(`${file}: not a usable kubeconfig: ${(e as Error).message}`);
  }
  return kc;
}

/** Why the merged kubeconfig cannot name a server to talk to, or undefined. */
function currentProblem(kc: KubeConfig): string | undefined {
  const have = kc.contexts.map((c) => c.name).join(', ') || 'none';
  if (!kc.currentContext) return `no current-context: pass --context (contexts: ${have})`;
  const ctx = kc.getContextObject(kc.currentContext);
  if (!ctx) return `current-context "${kc.currentContext}" is not among its contexts (${have}): pass --context`;
  const cluster = kc.getCluster(ctx.cluster);
  if (!cluster) return `context "${ctx.name}" names cluster "${ctx.cluster}", which it does not define`;
  // client-node refuses plain HTTP at the first request; say so before
  if (cluster.server.startsWith('http://') && !cluster.skipTLSVerify) {
    return `cluster "${cluster.name}" has the plain-HTTP server ${cluster.server}: set insecure-skip-tls-verify: true for it (the Kubernetes client refuses http:// otherwise)`;
  }
  return undefined;
}

/**
 * Loads a kubeconfig the way kubectl merges them: the first file to define a cluster, user or
 * context by name wins, and so does the first current-context.
 */
export function loadKubeConfig(opts: KubeconfigOptions, env = process.env, home = os.homedir()): KubeConfig {
  const files = kubeconfigFiles(opts, env, home);
  const kc = new KubeConfig();
  for (const [i, file] of files.entries()) {
    const one = loadOne(file);
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
      throw new BadInput(`--context ${opts.context}: no such context in ${files.join(', ')} (have: ${kc.contexts.map((c) => c.name).join(', ') || 'none'})`);
    }
    kc.setCurrentContext(opts.context);
  }
  const problem = currentProblem(kc);
  if (problem) throw new BadInput(`${files.join(', ')}: ${problem}`);
  return kc;
}
