/**
 * The verbs' entry points (loaded lazily by src/cli/ so `--help` never loads the Kubernetes
 * client): connect, call the runtime, print, return the exit code.
 */
import { Cluster } from './client';
import { destroyPlan, renderDestroy } from './destroy';
import { BadInput, RuntimeError } from './errors';
import { loadKubeConfig } from './kubeconfig';
import { planSteps, renderPlan } from './planview';
import { OutputMode, Reporter } from './progress';
import { loadPlan, runPlan, stepObjects } from './run';
import { renderStatus, stepStatuses } from './status';

export interface CommonOptions {
  readonly kubeconfig?: string;
  readonly context?: string;
  readonly namespace?: string;
  readonly output?: string;
}

export interface Io {
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
  readonly isTTY: boolean;
}

const processIo: Io = {
  out: (t) => process.stdout.write(t),
  err: (t) => process.stderr.write(t),
  isTTY: Boolean(process.stdout.isTTY),
};

function outputMode(o: CommonOptions, io: Io): OutputMode {
  if (o.output === 'json') return 'json';
  if (o.output === undefined || o.output === 'text') return io.isTTY ? 'tty' : 'plain';
  throw new BadInput(`--output ${o.output}: use text or json`);
}

function connect(o: CommonOptions): Cluster {
  return new Cluster(loadKubeConfig({ kubeconfig: o.kubeconfig, context: o.context }));
}

async function guarded(io: Io, fn: () => Promise<number>): Promise<number> {
  try {
    return await fn();
  } catch (e) {
    if (e instanceof RuntimeError) {
      io.err(`uyuni-cdk: ${e.message}\n`);
      return e.exitCode;
    }
    io.err(`uyuni-cdk: ${(e as Error)?.stack ?? e}\n`);
    return 1;
  }
}

function positiveNumber(name: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0) throw new BadInput(`${name} ${v}: must be a positive number of seconds`);
  return n;
}

export interface RunCommandOptions extends CommonOptions {
  readonly rerun?: string[];
  readonly runDir?: string;
  readonly timeout?: string;
  readonly stuckGrace?: string;
  readonly progressInterval?: string;
}

export function runCommand(planDir: string, o: RunCommandOptions, io: Io = processIo): Promise<number> {
  return guarded(io, async () => {
    const mode = outputMode(o, io);
    const reporter = new Reporter({ mode, write: io.out, writeErr: io.err, intervalSeconds: positiveNumber('--progress-interval', o.progressInterval) });
    // Ctrl-C: nothing to undo (each step is idempotent or resumable); say how to continue.
    const interrupted = () => {
      reporter.close();
      io.err(`\nuyuni-cdk: interrupted. Run the same command again to resume: finished steps are skipped, running Jobs attached to.\n`);
      process.exit(130);
    };
    if (io === processIo) process.once('SIGINT', interrupted);
    const code = await runPlan({
      planDir,
      cluster: connect(o),
      reporter,
      runDir: o.runDir,
      rerun: (o.rerun ?? []).flatMap((s) => s.split(',')).filter(Boolean),
      timeoutSeconds: positiveNumber('--timeout', o.timeout),
      namespace: o.namespace,
      stuckGraceSeconds: positiveNumber('--stuck-grace', o.stuckGrace),
    });
    return code;
  });
}

/** What plan, status and destroy share: the plan (relocated by --namespace), a reachable cluster, the step files. */
async function openPlan(planDir: string, o: CommonOptions) {
  const original = loadPlan(planDir);
  const plan = loadPlan(planDir, o.namespace);
  const cluster = connect(o);
  await cluster.ping();
  const objectsOf = (step: string) => stepObjects(planDir, plan, original, plan.steps.find((x) => x.name === step)!);
  return { plan, cluster, objectsOf };
}

export function planCommand(planDir: string, o: CommonOptions, io: Io = processIo): Promise<number> {
  return guarded(io, async () => {
    const mode = outputMode(o, io);
    const { plan, cluster, objectsOf } = await openPlan(planDir, o);
    const steps = await planSteps(cluster, plan, objectsOf);
    io.out(mode === 'json' ? JSON.stringify({ plan: plan.name, namespace: plan.namespace, steps }) + '\n' : renderPlan(plan, steps) + '\n');
    return 0;
  });
}

export function statusCommand(planDir: string, o: CommonOptions, io: Io = processIo): Promise<number> {
  return guarded(io, async () => {
    const mode = outputMode(o, io);
    const { plan, cluster, objectsOf } = await openPlan(planDir, o);
    const steps = await stepStatuses(cluster, plan, objectsOf);
    io.out(mode === 'json' ? JSON.stringify({ plan: plan.name, namespace: plan.namespace, steps }) + '\n' : renderStatus(plan, steps) + '\n');
    return 0;
  });
}

export interface DestroyCommandOptions extends CommonOptions {
  readonly yes?: boolean;
  readonly purgeVolumes?: boolean;
}

export function destroyCommand(planDir: string, o: DestroyCommandOptions, io: Io = processIo): Promise<number> {
  return guarded(io, async () => {
    const mode = outputMode(o, io);
    const { plan, cluster, objectsOf } = await openPlan(planDir, o);
    const opts = { yes: Boolean(o.yes), purgeVolumes: Boolean(o.purgeVolumes) };
    const items = await destroyPlan(cluster, plan, objectsOf, opts);
    io.out(mode === 'json' ? JSON.stringify({ plan: plan.name, namespace: plan.namespace, dryRun: !opts.yes, items }) + '\n' : renderDestroy(plan, items, opts) + '\n');
    return 0;
  });
}
