import type { Command } from 'commander';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { EXIT } from '../plan/exit-codes';
import { DEFAULT_API_TIMEOUT_SECONDS, DEFAULT_CONCURRENCY, DEFAULT_JOB_TIMEOUT_SECONDS, DEFAULT_PACKAGE_DIR, DEFAULT_SLICE } from '../systemd/defaults';
import { positiveNumber } from './options';

/**
 * `uyuni-cdk agent render|cleanup`: the node agent's verbs. Options and output only; the work is
 * in src/systemd (render) and src/agent (cleanup), loaded inside the actions.
 */

interface RenderFlags { file: string; out: string; session?: boolean; packageDir: string; kubeconfig?: string; slice: string }
interface CleanupFlags extends Omit<RenderFlags, 'file' | 'out'> {
  node: string; dryRun?: boolean; unitDir?: string;
  /** Seconds. */
  apiTimeout: number;
  /** Seconds. */
  jobTimeout: number;
  concurrency: number;
}

function fail(verb: string, message: string, code: number): void {
  process.stderr.write(`uyuni-cdk agent ${verb}: ${message}\n`);
  process.exitCode = code;
}

async function render(flags: RenderFlags): Promise<void> {
  const { parseAllDocuments } = await import('yaml');
  const { renderNodeUnits, defaultKubeconfig } = await import('../systemd');
  let pods: unknown[];
  try {
    const docs = parseAllDocuments(fs.readFileSync(flags.file, 'utf8'));
    pods = [];
    for (const doc of Array.isArray(docs) ? docs : [docs]) {
      if (doc.errors.length) throw new Error(doc.errors[0].message);
      const value = doc.toJS() as { kind?: string; items?: unknown[] } | null;
      if (value === null) continue;
      if (value.kind === 'List' && Array.isArray(value.items)) pods.push(...value.items);
      else pods.push(value);
    }
    const notPod = pods.find((p) => (p as { kind?: string }).kind !== undefined && (p as { kind?: string }).kind !== 'Pod');
    if (notPod) throw new Error(`holds a ${(notPod as { kind: string }).kind}, not a Pod`);
    if (pods.length === 0) throw new Error('holds no pod');
  } catch (e) {
    return fail('render', `${flags.file}: ${(e as Error).message}`, EXIT.badInput);
  }
  const units = renderNodeUnits(pods as never[], {
    session: flags.session ?? false,
    packageDir: flags.packageDir,
    kubeconfig: defaultKubeconfig(flags.kubeconfig, process.env, os.homedir()),
    slice: flags.slice,
  });
  const problems = [
    ...units.errors.map((e) => e.message),
    ...[...units.collisions].map(([unit, owners]) => `the pods ${owners.join(' and ')} map to the same unit ${unit}`),
  ];
  if (problems.length) return fail('render', problems.join('\n'), EXIT.badInput);
  fs.mkdirSync(flags.out, { recursive: true });
  for (const unit of units.units.values()) {
    const file = path.join(flags.out, unit.name);
    fs.writeFileSync(file, unit.content);
    process.stdout.write(`${file}\n`);
  }
}

async function cleanup(flags: CleanupFlags): Promise<void> {
  const { defaultKubeconfig, defaultUnitDir } = await import('../systemd/paths');
  const { runCleanup } = await import('../agent/cleanup');
  const { PodListError } = await import('../agent/pods');
  const { streamLogger, CLEANUP_TARGET } = await import('../agent/log');
  const session = flags.session ?? false;
  try {
    const result = await runCleanup({
      node: flags.node,
      session,
      dryRun: flags.dryRun ?? false,
      packageDir: flags.packageDir,
      unitDir: flags.unitDir ?? defaultUnitDir(session, process.env, os.homedir()),
      slice: flags.slice,
      kubeconfig: defaultKubeconfig(flags.kubeconfig, process.env, os.homedir()),
      apiTimeoutMs: flags.apiTimeout * 1000,
      jobTimeoutMs: flags.jobTimeout * 1000,
      concurrency: flags.concurrency,
      log: streamLogger(CLEANUP_TARGET, (text) => process.stderr.write(text)),
    });
    if (result.failures.length) {
      fail('cleanup', `${result.failures.length} of ${result.failures.length + result.removed.length} systemd units could not be removed cleanly (see above)`, EXIT.stepFailed);
    }
  } catch (e) {
    if (e instanceof PodListError) {
      return fail('cleanup', `the pods of node ${flags.node} could not be listed completely, so no systemd unit was touched: ${e.message}`, EXIT.unreachable);
    }
    return fail('cleanup', `${(e as Error).message}; no systemd unit was removed`, EXIT.unreachable);
  }
}

export function register(program: Command): void {
  const agent = program.command('agent').description('The node agent: systemd units for pods on systemd-backed nodes');
  const common = (cmd: Command): Command => cmd
    .option('--session', 'use the user manager (systemd --user on the session bus) instead of the system manager')
    .option('--package-dir <dir>', 'root of the packages a relative command[0] resolves under', DEFAULT_PACKAGE_DIR)
    .option('--kubeconfig <file>', 'kubeconfig used and written into units as KUBECONFIG (default: $KUBECONFIG, ~/.kube/config)')
    .option('--slice <slice>', 'the slice the units are put into', DEFAULT_SLICE);

  common(agent.command('render')
    .description('write the unit file(s) of a pod (one per container, init containers as oneshot units)')
    .requiredOption('-f, --file <pod>', 'the pod manifest (YAML or JSON; several documents or a List are fine)')
    .requiredOption('--out <dir>', 'directory the unit files are written into'))
    .action((flags: RenderFlags) => render(flags));

  common(agent.command('cleanup')
    .description('remove the units of the slice that no pod of this node accounts for (fails closed if the pods cannot be listed)')
    .requiredOption('--node <name>', 'the node whose pods (spec.nodeName) own units here')
    .option('--dry-run', 'print the decisions, touch nothing')
    .option('--unit-dir <dir>', 'where unit files live (default: /lib/systemd/system, or $XDG_CONFIG_HOME/systemd/user with --session)')
    .option('--api-timeout <seconds>', 'limit for each page of the pod list', positiveNumber, DEFAULT_API_TIMEOUT_SECONDS)
    .option('--job-timeout <seconds>', 'limit for each stop job', positiveNumber, DEFAULT_JOB_TIMEOUT_SECONDS)
    .option('--concurrency <n>', 'D-Bus calls in flight at the same time', (v: string) => Math.floor(positiveNumber(v)), DEFAULT_CONCURRENCY))
    .action((flags: CleanupFlags) => cleanup(flags));
}
