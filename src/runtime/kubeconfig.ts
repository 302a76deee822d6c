import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { KubeConfig } from '@kubernetes/client-node';
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

/**
 * Loads a kubeconfig the way kubectl merges them: the first file to define a cluster, user or
 * context by name wins, and so does the first current-context.
 */
export function loadKubeConfig(opts: KubeconfigOptions, env = process.env, home = os.homedir()): KubeConfig {
  const files = kubeconfigFiles(opts, env, home);
  const kc = new KubeConfig();
  for (const [i, file] of files.entries()) {
    const one = new KubeConfig();
    try {
      one.loadFromFile(file);
    } catch (e) {
      throw new BadInput(`${file}: not a usable kubeconfig (${(e as Error).message})`);
    }
    if (i === 0) {
      kc.loadFromFile(file);
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
  if (!kc.getCurrentCluster()) {
    throw new BadInput(`${files.join(', ')}: no current context with a cluster (use --context)`);
  }
  return kc;
}
