/**
 * The verbs' entry points (loaded lazily by src/cli/ so `--help` never loads the Kubernetes
 * client): connect, call the runtime, print, return the exit code. The process itself (its
 * streams, signals, exit, parsing the arguments) is the CLI's: it comes in as `Io` and options.
 */
import { EXIT } from '../plan/exit-codes';
import { RUN_DEFAULTS } from '../plan/run-defaults';
import { Cluster } from './client';
import { destroyPlan, renderDestroy } from './destroy';
import { RuntimeError } from './errors';
import { loadKubeConfig } from './kubeconfig';
import { openPlanDir, PlanDir } from './plan-dir';
import { planSteps, renderPlan } from './planview';
import { OutputMode, Reporter } from './progress';
import { runPlan } from './run';
import { renderStatus, stepStatuses } from './status';

export interface CommonOptions {
  readonly kubeconfig?: string;
  readonly context?: string;
  readonly namespace?: string;
  /** @default text */
  readonly output?: 'text' | 'json';
}

export interface Io {
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
  readonly isTTY: boolean;
  /**
   * Called once a run has started, with what to do when the user interrupts it (Ctrl-C) before
   * the process ends; absent: nobody interrupts (tests).
   */
  readonly onInterrupt?: (cleanup: () => void) => void;
}

function outputMode(o: CommonOptions, io: Io): OutputMode {
  if (o.output === 'json') return 'json';
  return io.isTTY ? 'tty' : 'plain';
}

function connect(o: CommonOptions): Cluster {
  return new Cluster(loadKubeConfig({ kubeconfig: o.kubeconfig, context: o.context }));
}

async function guarded(io: Io, fn: () => Promise<number>): Promise<number> {
  // Last resort: should the command ever wait on something that can no longer happen (the event
  // loop empties), the process must not exit 0 without a result.
  const silent = () => {
    io.err('uyuni-cdk: internal error: the command stopped before it finished (no pending request or timer); nothing was reported\n');
    process.exitCode = EXIT.stepFailed;
  };
  process.once('beforeExit', silent);
  try {
    return await fn();
  } catch (e) {
    if (e instanceof RuntimeError) {
      io.err(`uyuni-cdk: ${e.message}\n`);
      return e.exitCode;
    }
    io.err(`uyuni-cdk: ${(e as Error)?.stack ?? e}\n`);
    return EXIT.stepFailed;
  } finally {
    process.removeListener('beforeExit', silent);
  }
}

export interface RunCommandOptions extends CommonOptions {
  readonly rerun?: readonly string[];
  readonly runDir?: string;
  /** Seconds. */
  readonly timeout?: number;
  /** Seconds. @default RUN_DEFAULTS.stuckGraceSeconds */
  readonly stuckGrace?: number;
  /** Seconds. @default RUN_DEFAULTS.progressIntervalSeconds */
  readonly progressInterval?: number;
}

export function runCommand(planDir: string, o: RunCommandOptions, io: Io): Promise<number> {
  return guarded(io, async () => {
    const intervalSeconds = o.progressInterval ?? RUN_DEFAULTS.progressIntervalSeconds;
    const reporter = new Reporter({ mode: outputMode(o, io), write: io.out, writeErr: io.err, intervalSeconds });
    // Ctrl-C: nothing to undo (each step is idempotent or resumable); the CLI says how to continue.
    io.onInterrupt?.(() => reporter.close());
    const cluster = connect(o);
    // --timeout bounds everything, the first request included (the plan's own deadline applies from the first step)
    if (o.timeout) cluster.setDeadline(Date.now() + o.timeout * 1000);
    return runPlan({
      planDir,
      cluster,
      reporter,
      runDir: o.runDir,
      rerun: o.rerun,
      timeoutSeconds: o.timeout,
      namespace: o.namespace,
      stuckGraceSeconds: o.stuckGrace,
    });
  });
}

/** What plan, status and destroy share: the plan (relocated by --namespace), a reachable cluster, the step files. */
async function openPlan(planDir: string, o: CommonOptions): Promise<PlanDir & { cluster: Cluster }> {
  const dir = openPlanDir(planDir, o.namespace);
  const cluster = connect(o);
  await cluster.ping();
  return { ...dir, cluster };
}

export function planCommand(planDir: string, o: CommonOptions, io: Io): Promise<number> {
  return guarded(io, async () => {
    const mode = outputMode(o, io);
    const { plan, cluster, objectsOf } = await openPlan(planDir, o);
    const steps = await planSteps(cluster, plan, objectsOf);
    io.out(mode === 'json' ? JSON.stringify({ plan: plan.name, namespace: plan.namespace, steps }) + '\n' : renderPlan(plan, steps) + '\n');
    return EXIT.ok;
  });
}

export function statusCommand(planDir: string, o: CommonOptions, io: Io): Promise<number> {
  return guarded(io, async () => {
    const mode = outputMode(o, io);
    const { plan, cluster, objectsOf } = await openPlan(planDir, o);
    const steps = await stepStatuses(cluster, plan, objectsOf);
    io.out(mode === 'json' ? JSON.stringify({ plan: plan.name, namespace: plan.namespace, steps }) + '\n' : renderStatus(plan, steps) + '\n');
    return EXIT.ok;
  });
}

export interface DestroyCommandOptions extends CommonOptions {
  readonly yes?: boolean;
  readonly purgeVolumes?: boolean;
}

export function destroyCommand(planDir: string, o: DestroyCommandOptions, io: Io): Promise<number> {
  return guarded(io, async () => {
    const mode = outputMode(o, io);
    const { plan, cluster, objectsOf } = await openPlan(planDir, o);
    const opts = { yes: Boolean(o.yes), purgeVolumes: Boolean(o.purgeVolumes) };
    const items = await destroyPlan(cluster, plan, objectsOf, opts);
    io.out(mode === 'json' ? JSON.stringify({ plan: plan.name, namespace: plan.namespace, dryRun: !opts.yes, items }) + '\n' : renderDestroy(plan, items, opts) + '\n');
    return EXIT.ok;
  });
}
