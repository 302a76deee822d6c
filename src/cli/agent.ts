import type { Command } from 'commander';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { EXIT } from '../plan/exit-codes';
import { Option } from 'commander';
import { DEFAULT_API_TIMEOUT_SECONDS, DEFAULT_CONCURRENCY, DEFAULT_JOB_TIMEOUT_SECONDS, DEFAULT_MAX_PODS, DEFAULT_PACKAGE_DIR, DEFAULT_POD_SECURITY, DEFAULT_RESYNC_SECONDS, DEFAULT_SLICE, PodSecurityLevel, POD_SECURITY_LEVELS } from '../systemd/defaults';
import { positiveNumber } from './options';

/**
 * `uyuni-cdk agent render|cleanup|run`: the node agent's verbs. Options and output only; the work is
 * in src/systemd (render) and src/agent (cleanup), loaded inside the actions.
 */

interface RenderFlags { file: string; out: string; session?: boolean; packageDir: string; kubeconfig?: string; slice: string }
interface CleanupFlags extends Omit<RenderFlags, 'file' | 'out'> {
  node: string; dryRun?: boolean; unitDir?: string; stateDir?: string;
  /** Seconds. */
  apiTimeout: number;
  /** Seconds. */
  jobTimeout: number;
  concurrency: number;
}
interface RunFlags extends Omit<CleanupFlags, 'dryRun'> {
  /** Seconds. */
  resync: number;
  nodeIp?: string;
  output: 'text' | 'json';
  podSecurity: PodSecurityLevel;
  maxPods: number;
}

function fail(verb: string, message: string, code: number): void {
  process.stderr.write(`uyuni-cdk agent ${verb}: ${message}\n`);
  process.exitCode = code;
}

async function render(flags: RenderFlags): Promise<void> {
  const { parseAllDocuments } = require('yaml') as typeof import('yaml');
  const { renderNodeUnits, defaultKubeconfig } = await import('../systemd');
  let pods: unknown[];
  try {
    const docs = parseAllDocuments(fs.readFileSync(flags.file, 'utf8'));
    pods = [];
    for (const doc of Array.isArray(docs) ? docs : [docs]) {
      if (doc.errors.length) throw new Error(doc.errors[0].message);
      const value = doc.toJS() as { kind?: string; items?: unknown[] } | null;
      if (value === null) continue;
      if (typeof value === 'object' && value.kind === 'List' && Array.isArray(value.items)) pods.push(...value.items);
      else pods.push(value);
    }
    const kindOf = (p: unknown) => (typeof p === 'object' && p !== null ? (p as { kind?: unknown }).kind : undefined);
    const notPod = pods.find((p) => kindOf(p) !== undefined && kindOf(p) !== 'Pod');
    if (notPod) throw new Error(`holds a ${(notPod as { kind: string }).kind}, not a Pod`);
    if (pods.length === 0) throw new Error('holds no pod');
  } catch (e) {
    return fail('render', `${flags.file}: ${(e as Error).message}`, EXIT.badInput);
  }
  let units: ReturnType<typeof renderNodeUnits>;
  try {
    units = renderNodeUnits(pods as never[], {
      session: flags.session ?? false,
      packageDir: flags.packageDir,
      kubeconfig: defaultKubeconfig(flags.kubeconfig, process.env, os.homedir()),
      slice: flags.slice,
    });
  } catch (e) {
    return fail('render', `${flags.file}: ${(e as Error).message}`, EXIT.badInput);
  }
  const problems = [
    ...units.errors.map((e) => e.message),
    ...[...units.collisions].map(([unit, owners]) => `the pods ${owners.join(' and ')} map to the same unit ${unit}`),
  ];
  if (problems.length) return fail('render', problems.join('\n'), EXIT.badInput);
  try {
    fs.mkdirSync(flags.out, { recursive: true });
    if (!fs.lstatSync(flags.out).isDirectory()) throw new Error(`${flags.out} is not a directory`);
    // Every target is checked before the first is written: a refusal leaves DIR as it was.
    for (const unit of units.units.values()) checkTarget(path.join(flags.out, unit.name));
    for (const unit of units.units.values()) {
      const file = path.join(flags.out, unit.name);
      writeUnitFile(file, unit.content);
      process.stdout.write(`${file}\n`);
    }
  } catch (e) {
    return fail('render', (e as Error).message, EXIT.badInput);
  }
}

/** A unit file may replace only a regular file of its own (one link), never anything a link points to. */
function checkTarget(file: string): void {
  let st: fs.Stats;
  try {
    st = fs.lstatSync(file);
  } catch {
    return;
  }
  if (st.isSymbolicLink()) throw new Error(`${file} is a symbolic link: refused (its target is never written)`);
  if (!st.isFile()) throw new Error(`${file} exists and is not a regular file: refused`);
  if (st.nlink > 1) throw new Error(`${file} has other hard links: refused (they would change too)`);
}

/**
 * Writes a unit file without following a link planted at its name: a new file is created
 * exclusively (O_CREAT|O_EXCL), an existing one opened with O_NOFOLLOW and checked on the open
 * descriptor (regular, one link) before it is truncated.
 */
function writeUnitFile(file: string, content: string): void {
  const { O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW } = fs.constants;
  let fd: number;
  try {
    fd = fs.openSync(file, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o644);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw new Error(`${file}: cannot be created (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
    try {
      fd = fs.openSync(file, O_WRONLY | O_NOFOLLOW | fs.constants.O_NONBLOCK);
    } catch (e2) {
      const code = (e2 as NodeJS.ErrnoException).code;
      throw new Error(code === 'ELOOP' ? `${file} is a symbolic link: refused (its target is never written)` : `${file}: cannot be opened (${code ?? (e2 as Error).message})`);
    }
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile() || st.nlink > 1) throw new Error(`${file} is not a regular file of its own: refused`);
    fs.ftruncateSync(fd, 0);
    fs.writeSync(fd, content);
  } finally {
    fs.closeSync(fd);
  }
}

/** What `cleanup` and `run` share: the node, the manager, paths and limits, defaults applied (seconds → ms). */
function nodeOptions(
  flags: Omit<CleanupFlags, 'dryRun'>,
  { defaultUnitDir, defaultKubeconfig, defaultStateDir }: typeof import('../systemd/paths'),
) {
  const session = flags.session ?? false;
  return {
    stateDir: flags.stateDir ?? defaultStateDir(session, process.env, os.homedir()),
    node: flags.node,
    session,
    packageDir: flags.packageDir,
    unitDir: flags.unitDir ?? defaultUnitDir(session, process.env, os.homedir()),
    slice: flags.slice,
    kubeconfig: defaultKubeconfig(flags.kubeconfig, process.env, os.homedir()),
    apiTimeoutMs: flags.apiTimeout * 1000,
    jobTimeoutMs: flags.jobTimeout * 1000,
    concurrency: flags.concurrency,
  };
}

async function cleanup(flags: CleanupFlags): Promise<void> {
  const paths = await import('../systemd/paths');
  const { runCleanup } = await import('../agent/cleanup');
  const { PodListError } = await import('../agent/pods');
  const { streamLogger, CLEANUP_TARGET } = await import('../agent/log');
  try {
    const result = await runCleanup({
      ...nodeOptions(flags, paths),
      dryRun: flags.dryRun ?? false,
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

async function run(flags: RunFlags): Promise<void> {
  const paths = await import('../systemd/paths');
  const { runAgent } = await import('../agent/run');
  const { PodListError } = await import('../agent/pods');
  const { defaultNodeIP } = await import('../agent/node-lease');
  const { notifyReady } = await import('../agent/sd-notify');
  const { streamLogger, jsonLogger, CLEANUP_TARGET, RUN_TARGET } = await import('../agent/log');
  const logger = flags.output === 'json'
    ? (target: string) => jsonLogger(target, (text) => process.stdout.write(text))
    : (target: string) => streamLogger(target, (text) => process.stderr.write(text));
  const log = logger(RUN_TARGET);
  // SIGTERM/SIGINT end the loop; the units keep running (they are systemd's, not ours).
  const stop = new AbortController();
  const onSignal = (): void => stop.abort();
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
  try {
    const result = await runAgent({
      ...nodeOptions(flags, paths),
      resyncMs: flags.resync * 1000,
      podSecurity: flags.podSecurity,
      maxPods: flags.maxPods,
      nodeIP: flags.nodeIp ?? defaultNodeIP(),
      cleanupLog: logger(CLEANUP_TARGET),
      log,
      signal: stop.signal,
      ready: async () => {
        try {
          await notifyReady(`watching the pods of node ${flags.node}`);
        } catch (e) {
          log.log('WARN', `${(e as Error).message}`, { action: 'notify' });
        }
      },
    });
    // Logged by the loop (one ERROR record); the unit's Restart=always starts a fresh agent.
    if (result.busLost) process.exitCode = EXIT.unreachable;
    else if (result.cleanupFailures) {
      fail('run', `${result.cleanupFailures} systemd units could not be removed cleanly at start-up (see above)`, EXIT.stepFailed);
    }
  } catch (e) {
    if (e instanceof PodListError) {
      return fail('run', `the pods of node ${flags.node} could not be listed completely, so no systemd unit was touched: ${e.message}`, EXIT.unreachable);
    }
    return fail('run', `${(e as Error).message}; the running systemd units were left alone`, EXIT.unreachable);
  } finally {
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
  }
}

const STATE_DIR_HELP = 'the agent\'s records of the unit files it wrote (default: /var/lib/uyuni-cdk-agent, or $XDG_STATE_HOME/uyuni-cdk-agent with --session)';

export function register(program: Command): void {
  const agent = program.command('agent').description('The node agent: systemd units for pods on systemd-backed nodes')
    .addHelpText('after', `
On a node, dist/agent/uyuni-cdk-agent.service runs \`uyuni-cdk agent run --node <node>\`; cleanup
alone is \`uyuni-cdk agent cleanup --node <node> --dry-run\` (what it would remove, and why), then
without --dry-run. Both need the system's systemd (--session: the user's). docs/agent.md.

Examples:
  uyuni-cdk agent render -f dist/node-services/0000-pods.k8s.yaml --out units   # the units of the plan\'s pods`);
  const common = (cmd: Command): Command => cmd
    .option('--session', 'use the user manager (systemd --user on the session bus) instead of the system manager')
    .option('--package-dir <dir>', 'root of the packages a relative command[0] resolves under', DEFAULT_PACKAGE_DIR)
    .option('--kubeconfig <file>', 'kubeconfig used and written into units as KUBECONFIG (default: $KUBECONFIG, ~/.kube/config)')
    .option('--slice <slice>', 'the slice the units are put into', DEFAULT_SLICE);

  common(agent.command('render')
    .description('write the unit file(s) of a pod (one per container, init containers as oneshot units)')
    .requiredOption('-f, --file <pod>', 'the pod manifest (YAML or JSON; several documents or a List are fine)')
    .requiredOption('--out <dir>', 'directory the unit files are written into')
    .addHelpText('after', `
Every unit file is checked before the first is written: a refusal (a symbolic link or a hard-linked
file at a unit's name, two pods mapping to one unit) leaves the directory as it was.

Exit codes: ${EXIT.ok} written (their paths on stdout), ${EXIT.badInput} a bad pod file, a pod that cannot run as a unit, or a refused target.`))
    .action((flags: RenderFlags) => render(flags));

  common(agent.command('cleanup')
    .description('remove the units of the slice that no pod of this node accounts for (fails closed if the pods cannot be listed)')
    .requiredOption('--node <name>', 'the node whose pods (spec.nodeName) own units here')
    .option('--dry-run', 'print the decisions, touch nothing')
    .option('--unit-dir <dir>', 'where unit files live (default: /lib/systemd/system, or $XDG_CONFIG_HOME/systemd/user with --session)')
    .option('--state-dir <dir>', STATE_DIR_HELP)
    .option('--api-timeout <seconds>', 'limit for each page of the pod list', positiveNumber, DEFAULT_API_TIMEOUT_SECONDS)
    .option('--job-timeout <seconds>', 'limit for each stop job', positiveNumber, DEFAULT_JOB_TIMEOUT_SECONDS)
    .option('--concurrency <n>', 'D-Bus calls in flight at the same time', (v: string) => Math.floor(positiveNumber(v)), DEFAULT_CONCURRENCY)
    .addHelpText('after', `
Exit codes: ${EXIT.ok} done (or, with --dry-run, decided), ${EXIT.stepFailed} some unit could not be removed cleanly (logged),
${EXIT.badInput} bad option, ${EXIT.unreachable} the pods could not be listed completely or the bus could not be used (nothing touched).`))
    .action((flags: CleanupFlags) => cleanup(flags));

  common(agent.command('run')
    .description('the start-up cleanup, then run the pods bound to this node as systemd units until SIGTERM/SIGINT (which leave the units running)')
    .requiredOption('--node <name>', 'the node whose pods (spec.nodeName) this agent runs; registered as a Node when missing')
    .option('--unit-dir <dir>', 'where unit files are written (default: /lib/systemd/system, or $XDG_CONFIG_HOME/systemd/user with --session)')
    .option('--state-dir <dir>', STATE_DIR_HELP)
    .option('--resync <seconds>', 'full relist of the node\'s pods this often', positiveNumber, DEFAULT_RESYNC_SECONDS)
    .option('--node-ip <ip>', 'the node\'s address (Node InternalIP, the pods\' hostIP) (default: the first non-loopback IPv4 address)')
    .option('--api-timeout <seconds>', 'limit for each API request and list page', positiveNumber, DEFAULT_API_TIMEOUT_SECONDS)
    .option('--job-timeout <seconds>', 'limit for each stop job of the start-up cleanup', positiveNumber, DEFAULT_JOB_TIMEOUT_SECONDS)
    .option('--concurrency <n>', 'D-Bus calls in flight at the same time', (v: string) => Math.floor(positiveNumber(v)), DEFAULT_CONCURRENCY)
    .addOption(new Option('--pod-security <level>', 'the node\'s pod policy (PodSecurity levels): privileged runs anything, baseline refuses privileged containers and commands outside the package directory, restricted also requires non-root, no privilege escalation, capabilities dropped and a seccomp profile').choices([...POD_SECURITY_LEVELS]).default(DEFAULT_POD_SECURITY))
    .option('--max-pods <n>', 'pods this node runs at most (more are Failed with reason OutOfpods)', (v: string) => Math.floor(positiveNumber(v)), DEFAULT_MAX_PODS)
    .addOption(new Option('-o, --output <format>', 'text (env_logger lines on stderr) or json (one object per line on stdout)').choices(['text', 'json']).default('text'))
    .addHelpText('after', `
Exit codes: ${EXIT.ok} stopped by SIGTERM/SIGINT, ${EXIT.stepFailed} stopped, but the start-up cleanup could not remove some unit,
${EXIT.badInput} bad option, ${EXIT.unreachable} the pods could not be listed at start-up or the bus could not be used (nothing touched),
or the connection to the bus was lost while running (the units keep running; Restart=always starts a new agent).`))
    .action((flags: RunFlags) => run(flags));
}
