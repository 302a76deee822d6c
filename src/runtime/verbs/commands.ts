/**
 * The verbs' entry points (loaded lazily by src/cli/ so `--help` never loads the Kubernetes
 * client): connect, call the runtime, print, return the exit code. The process itself (its
 * streams, signals, exit, parsing the arguments) is the CLI's: it comes in as `Io` and options.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { EXIT } from '../../plan/exit-codes';
import { RUN_DEFAULTS } from '../../plan/run-defaults';
import { Cluster } from '../../kube/cluster';
import { destroyPlan, waitGone } from './destroy';
import { BadInput } from '../../kube/api-errors';
import { forceUnlock, releaseHeldLocks, RunLock } from '../safety/lock';
import { DecisionFlags, decisionFlagsOf, givenFlags } from '../decide/plan-result';
import { openPlanDir, PlanDir } from '../core/plan-dir';
import { hasChanges, planSteps } from '../decide/plan';
import { Reporter } from '../report/reporter';
import { planView } from '../report/plan-view';
import { destroyView } from '../report/destroy-view';
import { interruptRun, RunOptions, RunState, runPlan, timestamp } from '../apply/run';
import { isSavedPlan, planDigest, readSavedPlan, writeSavedPlan } from '../decide/saved-plan';
import { repairRecords } from './repair';
import { targetOf } from '../core/target';
import { CommonOptions, connect, debugging, guarded, Io, outputMode, paletteOf, viewOptions } from './verb';

export type { CommonOptions, Io };
export { statusCommand } from './status-command';

/** `run`'s options; the decision flags (`--rerun`, `--no-prune`, `--purge-volumes`, `--adopt`, `--allow-…`) are one value (plan-result.ts). */
export interface RunCommandOptions extends CommonOptions, DecisionFlags {
  readonly runDir?: string;
  /** `--keep-runs N`: run series kept after the run. @default RUN_DEFAULTS.keepRuns */
  readonly keepRuns?: number;
  /** Seconds. */
  readonly timeout?: number;
  /** Seconds. @default RUN_DEFAULTS.stuckGraceSeconds */
  readonly stuckGrace?: number;
  /** Seconds. @default RUN_DEFAULTS.progressIntervalSeconds */
  readonly progressInterval?: number;
  /** `--yes`, `-y`, `--auto-approve`: the destructive changes go ahead without a question. */
  readonly yes?: boolean;
  readonly autoApprove?: boolean;
  /** Seconds to wait for the namespace's lock. @default 0 */
  readonly lockTimeout?: number;
  /** `-v`: every object's apply, also those that changed nothing. */
  readonly verbose?: boolean;
}

/**
 * `run FILE`: the saved plan's directory, namespace and decision flags. Flags given beside it are
 * refused, not merged: what runs is what the file holds, as `plan --out` showed it.
 */
function savedRun(file: string, o: RunCommandOptions): Pick<RunOptions, 'planDir' | 'namespace' | 'flags' | 'saved'> {
  const saved = readSavedPlan(file);
  const given = [...givenFlags(o), ...o.namespace ? ['--namespace'] : []];
  if (given.length) {
    const held = givenFlags(saved.flags);
    throw new BadInput(`${file} is a saved plan: it carries its own options; ${given.join(', ')} belong to \`uyuni-cdk plan --out\` `
      + `(its decision flags are taken from the file: ${held.length ? held.join(', ') : 'none'}; to change them, make and review a new plan with them)`);
  }
  return { planDir: saved.planDir, namespace: saved.options.namespace, flags: saved.flags, saved };
}

export function runCommand(planDir: string, o: RunCommandOptions, io: Io): Promise<number> {
  return guarded(io, async () => {
    const from = isSavedPlan(planDir) ? savedRun(planDir, o) : undefined;
    const intervalSeconds = o.progressInterval ?? RUN_DEFAULTS.progressIntervalSeconds;
    const reporter = new Reporter({
      mode: outputMode(o, io), format: o.output === 'yaml' ? 'yaml' : 'json', write: io.out, writeErr: io.err, intervalSeconds, palette: paletteOf(o, io), verbose: o.verbose,
    });
    const cluster = connect(o);
    cluster.onAvailability = (answers, detail) => reporter.emit({ type: 'api', answers, detail });
    // --timeout bounds everything, the first request included (the plan's own deadline applies from the first step)
    if (o.timeout) cluster.setDeadline(Date.now() + o.timeout * 1000);
    const state: RunState = {};
    const options: RunOptions = {
      planDir,
      cluster,
      reporter,
      runDir: o.runDir,
      keepRuns: o.keepRuns,
      flags: decisionFlagsOf(o),
      timeoutSeconds: o.timeout,
      namespace: o.namespace,
      connection: { kubeconfig: o.kubeconfig, context: o.context },
      onFailure: (e) => { if (debugging() && e instanceof Error) io.err(`${e.stack}\n`); },
      stuckGraceSeconds: o.stuckGrace,
      yes: Boolean(o.yes || o.autoApprove),
      ...(io.ask ? { ask: io.ask } : {}),
      ...from,
      lockTimeoutSeconds: o.lockTimeout,
      state,
    };
    // Ctrl-C, SIGTERM, SIGHUP: nothing to undo (each step is idempotent or resumable); run-done
    // says what still runs in the cluster and how to continue, then the lock goes.
    io.onInterrupt?.(async (signal = 'SIGINT') => {
      await interruptRun(options, signal).catch(() => undefined);
      reporter.close();
      await releaseHeldLocks();
    });
    return runPlan(options);
  });
}

/** What plan, status and destroy share: the plan (relocated by --namespace), a reachable cluster, the step files. */
async function openPlan(planDir: string, o: CommonOptions, io: Io): Promise<PlanDir & { cluster: Cluster }> {
  const dir = openPlanDir(planDir, o.namespace);
  const cluster = connect(o, io);
  await cluster.ping();
  return { ...dir, cluster };
}

/** `plan`'s options; the decision flags predict `run` given them, and `--out` saves them whole. */
export interface PlanCommandOptions extends CommonOptions, DecisionFlags {
  /** Terraform's `-detailed-exitcode`: 0 no changes, 2 changes, 1 any error (a run that would stop, bad input, an unreachable cluster). */
  readonly detailedExitcode?: boolean;
  /** `--bookkeeping-drift`: with detailedExitcode, objects to relabel (only bookkeeping labels differ) are changes too. @default false */
  readonly bookkeepingDrift?: boolean;
  /** `--out FILE`: save what was shown, for `run FILE` (src/runtime/decide/saved-plan.ts). */
  readonly out?: string;
  /** `-v`: every unchanged object and every wait listed (default: counted). */
  readonly verbose?: boolean;
}

export async function planCommand(planDir: string, o: PlanCommandOptions, io: Io): Promise<number> {
  // 2 is both "bad input" and, under --detailed-exitcode, "changes": which one is known here only.
  let changes = false;
  const code = await guarded(io, async () => {
    const view = planView(viewOptions(o, io));
    const { dir, plan, cluster, objectsOf } = await openPlan(planDir, o, io);
    for (const s of o.rerun ?? []) {
      if (!plan.steps.some((x) => x.name === s)) throw new BadInput(`--rerun ${s}: no such step (steps: ${plan.steps.map((x) => x.name).join(', ')})`);
    }
    const flags = decisionFlagsOf(o);
    // the one verdict: the steps, and what run refuses or takes over before its first write
    const r = await planSteps(cluster, plan, objectsOf, { flags });
    const refused = r.lostCredentials.length > 0 || r.locked !== undefined || r.takeovers.some((t) => t.action === 'refuse');
    view.verdict(plan, r, targetOf(cluster));
    if (o.out) {
      writeSavedPlan(o.out, { planDir: dir, digest: planDigest(dir, plan), server: cluster.server, options: o.namespace ? { namespace: o.namespace } : {}, flags, result: r });
      view.saved(o.out, dir, flags);
    }
    if (!o.detailedExitcode) return EXIT.ok;
    if (r.stopsAt || refused) return EXIT.stepFailed;
    changes = hasChanges(r, Boolean(o.bookkeepingDrift)) || r.takeovers.length > 0;
    return EXIT.ok;
  });
  if (!o.detailedExitcode) return code;
  // Under --detailed-exitcode 2 means "changes": every error is 1, as Terraform has it.
  if (code !== EXIT.ok) return EXIT.stepFailed;
  return changes ? EXIT.planChanges : EXIT.ok;
}

export interface LogsCommandOptions extends CommonOptions {
  readonly follow?: boolean;
  readonly tail?: number;
}

/** `logs`: a step's pods' logs (or the plan's Deployments'), from the cluster or the saved run directories. */
export function logsCommand(planDir: string, step: string | undefined, o: LogsCommandOptions, io: Io): Promise<number> {
  return guarded(io, async () => {
    const { plan, cluster, objectsOf } = await openPlan(planDir, o, io);
    const { showLogs } = await import('./logs');
    await showLogs(cluster, plan, objectsOf, { step, follow: o.follow, tail: o.tail }, { out: io.out, err: io.err, onStop: (stop) => io.onInterrupt?.(async () => stop()) });
    return EXIT.ok;
  });
}

export interface SupportCommandOptions extends CommonOptions {
  /** The bundle's file. @default ./uyuni-support-<plan>-<timestamp>.tar.gz */
  readonly file?: string;
  /** `--no-exec` sets it false: the server's supportconfig is not run. @default true */
  readonly exec?: boolean;
  /** `--without-logs`: no log or event text in the bundle; what a bundle may be when Secrets cannot be read. */
  readonly withoutLogs?: boolean;
}

/** `support`: one .tar.gz with what helping needs and nothing secret (src/runtime/verbs/support.ts). */
export function supportCommand(planDir: string, o: SupportCommandOptions, io: Io): Promise<number> {
  return guarded(io, async () => {
    const { dir, plan, cluster, objectsOf } = await openPlan(planDir, o, io);
    const { collectSupport, pack } = await import('./support');
    const { timestamp } = await import('../apply/run');
    const top = `uyuni-support-${plan.name}-${timestamp()}`;
    const file = o.file ?? `${top}.tar.gz`;
    const parent = fs.mkdtempSync(path.join(os.tmpdir(), 'uyuni-support-'));
    try {
      const staging = path.join(parent, top);
      const r = await collectSupport(cluster, plan, dir, objectsOf, staging, { exec: o.exec ?? true, withoutLogs: o.withoutLogs, progress: (l) => io.err(`support: ${l}\n`) });
      pack(parent, top, file);
      const kib = Math.ceil(fs.statSync(file).size / 1024);
      io.err(`uyuni-cdk: wrote ${file} (${r.files} files, ${kib} KiB${o.withoutLogs ? ', without logs and events' : ''})${r.notes.length ? `; ${r.notes.length} not collected: see ${top}/notes.txt` : ''}; what was scrubbed: ${top}/redactions.txt\n`);
      return EXIT.ok;
    } finally {
      fs.rmSync(parent, { recursive: true, force: true });
    }
  });
}

export interface DestroyCommandOptions extends CommonOptions {
  readonly yes?: boolean;
  readonly purgeVolumes?: boolean;
  /** `--wait=false`: return once the deletes are sent, not when the objects are gone. @default true */
  readonly wait?: boolean;
  /** Seconds `--yes` waits for what it deleted to be gone. @default RUN_DEFAULTS.destroyTimeoutSeconds */
  readonly timeout?: number;
  /** Seconds to wait for the namespace's lock. @default 0 */
  readonly lockTimeout?: number;
}

export function destroyCommand(planDir: string, o: DestroyCommandOptions, io: Io): Promise<number> {
  return guarded(io, async () => {
    const view = destroyView(viewOptions(o, io));
    const { plan, cluster, objectsOf } = await openPlan(planDir, o, io);
    const opts = { yes: Boolean(o.yes), purgeVolumes: Boolean(o.purgeVolumes) };
    // deleting takes the namespace's lock, as run does (a dry run reads only)
    const lock = opts.yes ? new RunLock(cluster, { namespace: plan.namespace, runId: `destroy-${plan.name}-${timestamp()}`, plan, verb: 'destroy', timeoutSeconds: o.lockTimeout }) : undefined;
    io.onInterrupt?.(() => releaseHeldLocks());
    await lock?.acquire();
    let items;
    try {
      items = await destroyPlan(cluster, plan, objectsOf, { ...opts, timeoutSeconds: o.timeout, progress: (l) => io.err(`destroy: ${l}\n`) });
    } finally {
      // released before the wait: the Lease is in the namespace that goes (a run meanwhile refuses a terminating namespace)
      await lock?.release();
    }
    const result = { plan, target: targetOf(cluster), mode: opts, items };
    const wait = opts.yes && o.wait !== false;
    view.listed(result);
    let waited: { seconds: number } | undefined;
    try {
      if (wait) waited = { seconds: await waitGone(cluster, items, { timeoutSeconds: o.timeout, progress: (l) => io.err(`destroy: ${l}\n`) }) };
    } catch (e) {
      view.waitFailed(result, (e as Error).message);
      throw e;
    }
    view.finished(result, waited);
    return EXIT.ok;
  });
}

export interface UnlockCommandOptions {
  readonly kubeconfig?: string;
  readonly context?: string;
  readonly namespace?: string;
  /** `--force`: also a holder alive on this host (asked first). */
  readonly force?: boolean;
  /** `--yes`: what --force asks is approved. */
  readonly yes?: boolean;
}

/** `unlock -n NS RUN_ID`: removes a lock left behind (terraform force-unlock). */
export function unlockCommand(runId: string, o: UnlockCommandOptions, io: Io): Promise<number> {
  return guarded(io, async () => {
    if (!o.namespace) throw new BadInput('unlock needs -n, --namespace <ns>: the namespace whose lock to remove');
    const cluster = connect(o, io);
    await cluster.ping();
    io.out(`${await forceUnlock(cluster, o.namespace, runId, { force: o.force, yes: o.yes, ...(io.ask ? { ask: io.ask } : {}) })}\n`);
    return EXIT.ok;
  });
}

export interface RepairRecordCommandOptions {
  readonly kubeconfig?: string;
  readonly context?: string;
  readonly namespace?: string;
  /** `--yes`: write without asking (after showing). */
  readonly yes?: boolean;
}

/** `repair-record PLAN_DIR`: rebuilds the plan's damaged or half-lost records, shown and asked first (src/runtime/verbs/repair.ts). */
export function repairRecordCommand(planDir: string, o: RepairRecordCommandOptions, io: Io): Promise<number> {
  return guarded(io, async () => {
    const { plan, objectsOf, cluster } = await openPlan(planDir, o, io);
    return repairRecords(cluster, plan, objectsOf, `repair-record-${timestamp()}`, { yes: o.yes, out: io.out, ...(io.ask ? { ask: io.ask } : {}) });
  });
}
