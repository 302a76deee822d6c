/**
 * The verbs' entry points (loaded lazily by src/cli/ so `--help` never loads the Kubernetes
 * client): connect, call the runtime, print, return the exit code. The process itself (its
 * streams, signals, exit, parsing the arguments) is the CLI's: it comes in as `Io` and options.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { EndingSignal, EXIT } from '../plan/exit-codes';
import { printable } from '../plan/printable';
import { RUN_DEFAULTS } from '../plan/run-defaults';
import { ArchiveStatus, readArchiveStatus, renderArchiveStatus } from './archive-status';
import { Cluster } from './client';
import { destroyPlan, destroySummary, renderDestroy, waitGone } from './destroy';
import { BadInput, RuntimeError } from './errors';
import { loadKubeConfig } from './kubeconfig';
import { forceUnlock, releaseHeldLocks, RunLock } from './lock';
import { renderTakeovers } from './ownership';
import { DecisionFlags, decisionFlagsOf, givenFlags } from './plan-result';
import { openPlanDir, openPlanView, PlanDir } from './plan-dir';
import { hasChanges, planSteps, renderPlan } from './planview';
import { stringify } from 'yaml';
import { paletteFor, Palette } from './colour';
import { OutputMode, Reporter } from './progress';
import { interruptRun, RunOptions, RunState, runPlan, timestamp } from './run';
import { isSavedPlan, planDigest, readSavedPlan, writeSavedPlan } from './saved-plan';
import { repairRecords } from './repair';
import { renderStatus, statusExitCode, stepStatuses } from './status';
import { targetOf } from './target';

export interface CommonOptions {
  readonly kubeconfig?: string;
  readonly context?: string;
  readonly namespace?: string;
  /** @default text */
  readonly output?: 'text' | 'json' | 'yaml';
  /** `--no-color` sets it false: no colour even on a terminal (NO_COLOR does the same). @default true */
  readonly color?: boolean;
}

export interface Io {
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
  readonly isTTY: boolean;
  /**
   * Called once a run has started, with what to do when the user interrupts it (Ctrl-C) or a
   * signal ends it (SIGTERM, SIGHUP: src/cli/parse.ts `onEndingSignals`) before the process
   * ends; absent: nobody interrupts (tests).
   */
  readonly onInterrupt?: (cleanup: (signal?: EndingSignal) => Promise<void>) => void;
  /** Asks a question on the terminal and returns the answer; absent: no terminal to ask on (a pipe, CI, tests). */
  readonly ask?: (question: string) => Promise<string>;
}

function outputMode(o: CommonOptions, io: Io): OutputMode {
  if (o.output === 'json' || o.output === 'yaml') return 'json';
  return io.isTTY ? 'tty' : 'plain';
}

/** A verb's one result document for machines: JSON, or YAML with `-o yaml`. */
function machine(o: CommonOptions, doc: object): string {
  return o.output === 'yaml' ? stringify(doc) : `${JSON.stringify(doc)}\n`;
}

/** Colour only for text on a terminal, never with `--no-color` or NO_COLOR (src/runtime/colour.ts). */
function paletteOf(o: CommonOptions, io: Io): Palette {
  return paletteFor({ isTTY: io.isTTY, format: o.output ?? 'text', color: o.color });
}

/** The cluster of the kubeconfig; an API server that stops answering, and answers again, is said on stderr. */
function connect(o: CommonOptions, io?: Io): Cluster {
  const cluster = new Cluster(loadKubeConfig({ kubeconfig: o.kubeconfig, context: o.context }));
  if (io) cluster.onAvailability = (_answers, detail) => io.err(`uyuni-cdk: ${detail}\n`);
  return cluster;
}

/**
 * Every verb's failure: one line saying what failed and what to check, the error's exit code;
 * the stack only with `--debug` (the CLI sets UYUNI_CDK_DEBUG=1).
 */
const debugging = () => process.env.UYUNI_CDK_DEBUG === '1';

function reportFailure(io: Io, e: unknown): number {
  const debug = debugging();
  const expected = e instanceof RuntimeError;
  // what a kubeconfig or an argument carried: no terminal escapes, no 100 kB value
  const message = printable(e instanceof Error ? e.message : String(e));
  io.err(`uyuni-cdk: ${message}${expected || debug ? '' : ' (an unexpected error: --debug shows where)'}\n`);
  if (debug && e instanceof Error && e.stack) io.err(`${e.stack}\n`);
  return expected ? e.exitCode : EXIT.stepFailed;
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
    return reportFailure(io, e);
  } finally {
    process.removeListener('beforeExit', silent);
  }
}

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
  /** `--out FILE`: save what was shown, for `run FILE` (src/runtime/saved-plan.ts). */
  readonly out?: string;
  /** `-v`: every unchanged object and every wait listed (default: counted). */
  readonly verbose?: boolean;
}

export async function planCommand(planDir: string, o: PlanCommandOptions, io: Io): Promise<number> {
  // 2 is both "bad input" and, under --detailed-exitcode, "changes": which one is known here only.
  let changes = false;
  const code = await guarded(io, async () => {
    const mode = outputMode(o, io);
    const { dir, plan, cluster, objectsOf } = await openPlan(planDir, o, io);
    for (const s of o.rerun ?? []) {
      if (!plan.steps.some((x) => x.name === s)) throw new BadInput(`--rerun ${s}: no such step (steps: ${plan.steps.map((x) => x.name).join(', ')})`);
    }
    const flags = decisionFlagsOf(o);
    // the one verdict: the steps, and what run refuses or takes over before its first write
    const r = await planSteps(cluster, plan, objectsOf, { flags });
    const refused = r.lostCredentials.length > 0 || r.locked !== undefined || r.takeovers.some((t) => t.action === 'refuse');
    const safety = [...renderTakeovers(r.takeovers), ...r.lostCredentials.map((l) => `Refused: ${l.message}`), ...r.locked ? [`Refused: ${r.locked}`] : []];
    const target = targetOf(cluster);
    io.out(mode === 'json'
      ? machine(o, { plan: plan.name, namespace: plan.namespace, cluster: target, ...r })
      : [...safety, renderPlan(plan, r, { verbose: o.verbose, palette: paletteOf(o, io), target })].join('\n') + '\n');
    if (o.out) {
      writeSavedPlan(o.out, { planDir: dir, digest: planDigest(dir, plan), server: cluster.server, options: o.namespace ? { namespace: o.namespace } : {}, flags, result: r });
      if (mode !== 'json') io.out(`\nSaved the plan to ${o.out}: \`uyuni-cdk run ${o.out}\` applies exactly this, with its flags${givenFlags(flags).length ? ` (${givenFlags(flags).join(', ')})` : ' (none)'}, and refuses if the cluster or ${dir} changed since.\n`);
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

export function statusCommand(planDir: string, o: CommonOptions, io: Io): Promise<number> {
  return guarded(io, async () => {
    const mode = outputMode(o, io);
    // The index's summaries of the step files synth wrote, not their parse (src/runtime/plan-dir.ts).
    const { plan, viewOf } = openPlanView(planDir, o.namespace);
    const cluster = connect(o, io);
    // The reads go with the ping (one round trip less, issue 36); an unreachable cluster is
    // still reported by the ping's error, the reads' own errors only once it answered.
    const reading = stepStatuses(cluster, plan, viewOf);
    reading.catch(() => undefined);
    // db.archiving: the db pod's last report (src/runtime/archive-status.ts); a failed read is shown, not fatal.
    const archive = readArchiveStatus(cluster, plan, viewOf).catch((e: Error): ArchiveStatus => ({ error: `the db pods cannot be read: ${e.message}` }));
    await cluster.ping();
    const steps = await reading;
    const archiving = await archive;
    const target = targetOf(cluster);
    io.out(mode === 'json'
      ? machine(o, { plan: plan.name, namespace: plan.namespace, cluster: target, steps, ...(archiving ? { archiving } : {}) })
      : [renderStatus(plan, steps, target, paletteOf(o, io)), ...(archiving ? renderArchiveStatus(archiving) : [])].join('\n') + '\n');
    return statusExitCode(steps);
  });
}

export interface LogsCommandOptions extends CommonOptions {
  readonly follow?: boolean;
  readonly tail?: number;
}

/** `logs`: a step's pods' logs (or the plan's Deployments'), from the cluster or the saved run directories. */
export function logsCommand(planDir: string, step: string | undefined, o: LogsCommandOptions, io: Io): Promise<number> {
  return guarded(io, async () => {
    const { plan, cluster, objectsOf } = await openPlan(planDir, o, io);
    const { showLogs } = await import('./pod-logs');
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

/** `support`: one .tar.gz with what helping needs and nothing secret (src/runtime/support.ts). */
export function supportCommand(planDir: string, o: SupportCommandOptions, io: Io): Promise<number> {
  return guarded(io, async () => {
    const { dir, plan, cluster, objectsOf } = await openPlan(planDir, o, io);
    const { collectSupport, pack } = await import('./support');
    const { timestamp } = await import('./run');
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
    const mode = outputMode(o, io);
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
    const target = targetOf(cluster);
    const wait = opts.yes && o.wait !== false;
    const shown = items.map(({ ref: _r, ...i }) => i);
    if (mode !== 'json') io.out(renderDestroy(plan, items, opts, target) + '\n');
    let waited: { gone: boolean; seconds?: number; still?: string } | undefined;
    try {
      if (wait) waited = { gone: true, seconds: await waitGone(cluster, items, { timeoutSeconds: o.timeout, progress: (l) => io.err(`destroy: ${l}\n`) }) };
    } catch (e) {
      if (mode === 'json') io.out(machine(o, { plan: plan.name, namespace: plan.namespace, cluster: target, dryRun: !opts.yes, items: shown, waited: { gone: false, message: (e as Error).message } }));
      throw e;
    }
    const summary = destroySummary(items, { ...opts, waited: wait });
    io.out(mode === 'json'
      ? machine(o, { plan: plan.name, namespace: plan.namespace, cluster: target, dryRun: !opts.yes, items: shown, ...(waited ? { waited } : {}), summary })
      : `${summary}\n`);
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

/** `repair-record PLAN_DIR`: rebuilds the plan's damaged or half-lost records, shown and asked first (src/runtime/repair.ts). */
export function repairRecordCommand(planDir: string, o: RepairRecordCommandOptions, io: Io): Promise<number> {
  return guarded(io, async () => {
    const { plan, objectsOf, cluster } = await openPlan(planDir, o, io);
    return repairRecords(cluster, plan, objectsOf, `repair-record-${timestamp()}`, { yes: o.yes, out: io.out, ...(io.ask ? { ask: io.ask } : {}) });
  });
}
