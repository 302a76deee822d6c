/**
 * Progress output. Three renderings of one event stream (the vocabulary and the sink the engine
 * emits to are in events.ts): a live line per step on a TTY, plain lines otherwise (at least
 * every `intervalSeconds` while waiting, naming the blocker), and one JSON event per line for
 * machines. Every event also goes to `<runDir>/events.jsonl`.
 * Secret values never reach this module: events carry names and keys only.
 */
import * as fs from 'fs';
import { stringify } from 'yaml';
import { formatDuration } from '../../plan/duration';
import { NO_COLOUR, paintAction, Palette } from './colour';
import { Approval, CopyProgress, countEvent, emptyTally, idText, inStartupProbe, RunEvent, RunSink, RunTally, WaitingPod } from '../core/events';
import { podSecurityText } from '../core/pod-security';
import { targetText } from '../core/target';

export type OutputMode = 'tty' | 'plain' | 'json';

export interface ReporterOptions {
  readonly mode: OutputMode;
  /** Where progress goes. @default process.stdout */
  readonly write?: (text: string) => void;
  /** Where the final failure goes in text modes. @default process.stderr */
  readonly writeErr?: (text: string) => void;
  /** Plain/json: a waiting line at least this often. @default 10 */
  readonly intervalSeconds?: number;
  /** Clock, for tests. */
  readonly now?: () => number;
  /** Text modes: colours (src/runtime/report/colour.ts). @default none */
  readonly palette?: Palette;
  /** json mode: one JSON event a line, or YAML documents (`---` before each). @default json */
  readonly format?: 'json' | 'yaml';
  /** `-v`: text modes also print each object whose apply changed nothing (otherwise a count per step). */
  readonly verbose?: boolean;
}

/** 4.2s, 3m5s, 9h59m59s: one formatter for every duration printed (src/plan/duration.ts). */
const secs = formatDuration;

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** `3 created, 2 updated, 1 deleted, 2 stopped, 4 Jobs run, 71 unchanged`: relabelled, scaled and applied only when there are any. */
export function tallyText(t: RunTally): string {
  return [
    `${t.created} created`, `${t.updated} updated`, ...(t.relabelled ? [`${t.relabelled} relabelled`] : []), `${t.deleted} deleted`, `${t.stopped} stopped`,
    ...(t.scaled ? [`${t.scaled} scaled`] : []), plural(t.jobsRun, 'Job run', 'Jobs run'), `${t.unchanged} unchanged`,
    ...(t.applied ? [`${t.applied} applied without comparing`] : []),
  ].join(', ');
}

/**
 * A live line that must fit the terminal: the end of a blocker (a pod's state) says where the
 * wait is, the start which object it is; the middle goes.
 */
function fit(head: string, body: string, width: number): string {
  const room = width - head.length;
  if (body.length <= room) return head + body;
  if (room < 24) return (head + body).slice(0, width);
  const front = Math.min(Math.floor(room / 4), 20);
  return `${head}${body.slice(0, front)}…${body.slice(body.length - (room - front - 1))}`;
}

/** 1.2 GiB: binary units, as a claim's size is given. */
export function size(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
  let v = bytes;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return u === 0 ? `${bytes} B` : `${v.toFixed(1)} ${units[u]}`;
}

/** `claim 3/16 /var/spacewalk: 1.2 GiB (45%), 12.34MB/s, 0:01:23 left` */
export function copyText(p: CopyProgress): string {
  const what = p.claim ? `claim ${p.claim} ${p.path}` : p.path;
  const end = p.done ? 'done' : p.eta ? `${p.eta} left` : undefined;
  return `${what}: ${size(p.bytes)} (${p.percent}%), ${p.rate}${end ? `, ${end}` : ''}`;
}

/**
 * A pod in its startup probe in the room there is: the pod's name goes first, then the
 * namespace; `starting (startup probe)` stays.
 */
function startingText(p: WaitingPod, room: number): string {
  const full = idText(p.owner);
  const owner = `${p.owner.kind}/${p.owner.name}`;
  const texts = [`${full} starting (startup probe), pod ${p.pod}`, `${full} starting (startup probe)`, `${owner} starting (startup probe)`, 'starting (startup probe)'];
  return (texts.find((t) => t.length <= room) ?? texts[texts.length - 1]).slice(0, Math.max(room, 0));
}

/** The first blockers and how many more: a step waiting on 27 volumes stays one line. */
function brief(blockers: string[]): string {
  return blockers.length <= 3 ? blockers.join('; ') : `${blockers.slice(0, 3).join('; ')} (+${blockers.length - 3} more)`;
}

/** The plan's notes as a block: the URL, the admin's login, DNS, the ports that must reach the server. */
function notesText(ev: Extract<RunEvent, { type: 'notes' }>): string {
  const n = ev.notes;
  const out = ['notes:', `  web UI: ${n.url}`];
  if (n.admin) {
    out.push(`  administrator: user and password in Secret ${n.admin.secret} (keys ${n.admin.usernameKey}, ${n.admin.passwordKey}); the password:`);
    if (ev.adminPasswordCommand) out.push(`    ${ev.adminPasswordCommand}`);
  } else if (n.adminFrom) out.push(`  administrator: the users and passwords of ${n.adminFrom}, migrated with its data`);
  for (const d of n.dns) out.push(`  DNS: ${d.name} → ${d.pointTo}`);
  out.push('  ports that must reach it (clients, proxies):');
  const w = Math.max(...n.ports.map((p) => `${p.port}/${p.protocol}`.length));
  for (const p of n.ports) out.push(`    ${`${p.port}/${p.protocol}`.padEnd(w)}  ${p.what}: ${p.via}`);
  return out.join('\n');
}

const APPROVAL: Readonly<Record<Approval, string>> = {
  'yes': 'going ahead: --yes',
  'answered yes': 'going ahead: answered yes',
  'saved plan': 'going ahead: the saved plan was reviewed',
  'refused': 'refused: no terminal to ask on and no --yes',
  'declined': 'not done: the answer was not yes',
};

function destructiveText(ev: Extract<RunEvent, { type: 'destructive' }>): string {
  const w = Math.max(...ev.changes.map((c) => c.kind.length));
  return [`destructive changes (${ev.changes.length}):`, ...ev.changes.map((c) => `  ${c.kind.padEnd(w)}  ${c.object}  [${c.step}]  ${c.why}`)].join('\n');
}

export class Reporter implements RunSink {
  readonly mode: OutputMode;
  private readonly write: (text: string) => void;
  private readonly writeErr: (text: string) => void;
  private readonly intervalMs: number;
  private readonly now: () => number;
  private file?: number;
  private live = '';
  private lastWaiting = { key: '', at: 0 };
  /** What the last recorded waiting event said (step, blockers, pods). */
  private lastRecorded = '';
  private liveTimer?: NodeJS.Timeout;
  private liveState?: { prefix: string; startedAt: number; blockers: string[]; copy?: string; starting?: WaitingPod };
  /** When a copy's progress was last recorded and printed (the start of the step's first). */
  private lastCopy = { step: '', at: 0 };
  private readonly palette: Palette;
  private readonly verbose: boolean;
  private readonly format: 'json' | 'yaml';
  /** What the run changed so far (the closing line, run-done's `resources`). */
  readonly tally: RunTally = emptyTally();
  /** Objects of the current step whose apply changed nothing: one count at its end, not a line each. */
  private stepUnchanged = 0;

  constructor(opts: ReporterOptions) {
    this.mode = opts.mode;
    this.palette = opts.palette ?? NO_COLOUR;
    this.verbose = Boolean(opts.verbose);
    this.format = opts.format ?? 'json';
    this.write = opts.write ?? ((t) => process.stdout.write(t));
    this.writeErr = opts.writeErr ?? ((t) => process.stderr.write(t));
    this.intervalMs = (opts.intervalSeconds ?? 10) * 1000;
    this.now = opts.now ?? Date.now;
  }

  /** Also append every event to this file (events.jsonl). */
  recordTo(file: string): void {
    this.file = fs.openSync(file, 'a');
  }

  close(): void {
    this.clearLive();
    if (this.liveTimer) clearInterval(this.liveTimer);
    if (this.file !== undefined) fs.closeSync(this.file);
    this.file = undefined;
  }

  emit(event: RunEvent): void {
    countEvent(this.tally, event);
    const ev: RunEvent = event.type === 'run-done' && !event.resources ? { ...event, resources: { ...this.tally } } : event;
    const stamped = { at: new Date(this.now()).toISOString(), ...ev };
    const line = JSON.stringify(stamped) + '\n';
    if (ev.type === 'waiting') {
      this.emitWaiting(ev, line, stamped);
      return;
    }
    if (ev.type === 'copy-progress') {
      this.emitCopy(ev, line, stamped);
      return;
    }
    if (this.file !== undefined) fs.writeSync(this.file, line);
    if (this.mode === 'json') {
      this.write(this.machine(line, stamped));
      return;
    }
    const text = this.render(ev);
    if (text === undefined) return;
    this.clearLive();
    if ((ev.type === 'run-done' && ev.status !== 'done') || ev.type === 'api' || ev.type === 'pod-security') this.writeErr(text + '\n');
    else this.write(text + '\n');
    this.drawLive();
  }

  /** An event for machines on stdout: its JSON line, or a YAML document. events.jsonl is always JSON. */
  private machine(line: string, stamped: object): string {
    return this.format === 'yaml' ? `---\n${stringify(stamped)}` : line;
  }

  /**
   * The waiter reports on every change and four times a second. Recorded (events.jsonl, and
   * `-o json`, the same lines): what changed (a blocker, a pod's state) and, once an interval, a
   * heartbeat: a ten-hour first start stays a few thousand lines, not 144 000. Printed as a plain
   * line: once a step has waited an interval, then every interval. The TTY line: every report.
   */
  private emitWaiting(ev: Extract<RunEvent, { type: 'waiting' }>, line: string, stamped: object): void {
    const due = this.waitingDue(ev);
    const what = JSON.stringify([ev.step, ev.blockers, ev.pods ?? []]);
    if (this.mode === 'tty') this.setLive(ev);
    if (!due && what === this.lastRecorded) return;
    this.lastRecorded = what;
    if (this.file !== undefined) fs.writeSync(this.file, line);
    if (this.mode === 'json') this.write(this.machine(line, stamped));
    else if (this.mode === 'plain' && due) this.write(this.render(ev) + '\n');
  }

  /**
   * A copy reports every few seconds for hours (and a Job may copy dozens of claims): recorded
   * and printed as a plain line once an interval and when a claim's copy is over; the TTY's live
   * line shows every report, in place of what the step waits for.
   */
  private emitCopy(ev: Extract<RunEvent, { type: 'copy-progress' }>, line: string, stamped: object): void {
    const t = this.now();
    if (ev.step !== this.lastCopy.step) this.lastCopy = { step: ev.step, at: t };
    if (this.mode === 'tty' && this.liveState) {
      this.liveState.copy = ev.done ? undefined : copyText(ev);
      this.redraw();
    }
    if (!ev.done && t - this.lastCopy.at < this.intervalMs) return;
    this.lastCopy.at = t;
    if (this.file !== undefined) fs.writeSync(this.file, line);
    if (this.mode === 'json') this.write(this.machine(line, stamped));
    else if (this.mode === 'plain' || ev.done) {
      this.clearLive();
      this.write(this.render(ev) + '\n');
      this.drawLive();
    }
  }

  /**
   * Waiting events are printed once a step has waited an interval, then every interval: quick
   * steps print none, slow ones name their blocker regularly. The TTY line shows every change.
   */
  private waitingDue(ev: Extract<RunEvent, { type: 'waiting' }>): boolean {
    const t = this.now();
    if (ev.step !== this.lastWaiting.key) this.lastWaiting = { key: ev.step, at: t - ev.elapsedSeconds * 1000 };
    if (t - this.lastWaiting.at >= this.intervalMs) {
      this.lastWaiting = { key: ev.step, at: t };
      return true;
    }
    return false;
  }

  private render(ev: RunEvent): string | undefined {
    const n = (e: { index: number; total: number }) => `[${e.index}/${e.total}]`;
    const p = this.palette;
    switch (ev.type) {
      case 'run-start': return `run ${ev.runId}: plan ${ev.plan}, ${ev.steps} steps, ${targetText({ server: ev.server, context: ev.context ?? '' })}, logs in ${ev.runDir}`;
      case 'destructive': return destructiveText(ev);
      case 'approval': return APPROVAL[ev.result];
      case 'step-start': this.stepUnchanged = 0; this.startLive(`${n(ev)} ${ev.step}`); return `${n(ev)} ${ev.step}: ${ev.description}`;
      case 'step-skip': return `${n(ev)} ${ev.step}: skipped, ${ev.reason}`;
      case 'gate': return `  gate ${ev.ok ? 'passed' : p.red('REFUSED')}: ${ev.detail}`;
      case 'requirement': return `  ${ev.kind} ${ev.namespace}/${ev.name}: ${paintAction(ev.result, ev.result, p)}${ev.result === 'present' ? '' : ` (keys ${ev.keys.join(', ')}, values not shown)`}`;
      case 'action': return `  ${paintAction(ev.action, ev.action, p)} ${idText(ev.object)}: ${ev.result}`;
      case 'apply':
        if (ev.result === 'unchanged') {
          this.stepUnchanged++;
          if (!this.verbose) return undefined;
        }
        return `  ${idText(ev.object)}: ${paintAction(ev.result, ev.result, p)}`;
      case 'waiting': return `${n(ev)} ${ev.step}: waiting ${secs(ev.elapsedSeconds)} for ${brief(ev.blockers)}`;
      case 'log': return `  ${ev.step}/${ev.pod}${ev.container ? `/${ev.container}` : ''} | ${ev.line}`;
      case 'copy-progress': return `  ${ev.step}: ${copyText(ev)}`;
      case 'starting': return `  ${ev.pods.join(', ')} ${ev.pods.length === 1 ? 'is' : 'are'} starting (startup probe; a first start sets the server up, which can take hours)\n  logs: ${ev.logs}`;
      case 'notes': return notesText(ev);
      case 'api': return `uyuni-cdk: ${ev.detail}`;
      case 'pod-security': return `uyuni-cdk: warning: ${podSecurityText(ev.report)}`;
      case 'facts': return `  facts: ${Object.entries(ev.facts).map(([k, v]) => `${k}=${v}`).join(' ')}`;
      case 'step-done': {
        this.stopLive();
        const same = this.stepUnchanged ? ` (${plural(this.stepUnchanged, 'object')} unchanged)` : '';
        this.stepUnchanged = 0;
        return `${n(ev)} ${ev.step}: done in ${secs(ev.elapsedSeconds)}${same}`;
      }
      case 'step-failed': {
        this.stopLive();
        const out = [`${n(ev)} ${ev.step}: ${ev.stillStarting ? p.yellow('STILL STARTING') : p.red('FAILED')} after ${secs(ev.elapsedSeconds)}: ${ev.reason}`];
        for (const p of ev.pods) {
          out.push(`  pod ${p.pod} container ${p.container}: exit code ${p.exitCode ?? '-'}, reason ${p.reason || '-'}${p.message ? ` (${p.message})` : ''}`);
          if (p.lastLines.length) {
            out.push(`  last ${p.lastLines.length} lines:`);
            for (const l of p.lastLines) out.push(`    ${l}`);
          }
        }
        return out.join('\n');
      }
      case 'run-done': {
        const t = ev.resources ?? this.tally;
        const series = ev.series ? ` Over its series of ${ev.series.attempts} attempts: ${tallyText(ev.series.resources)}.` : '';
        if (ev.status === 'done') return p.green(`Run complete in ${secs(ev.elapsedSeconds)}: ${tallyText(t)}${ev.series ? ' (this attempt)' : ''}.${series}`);
        if (ev.status === 'interrupted') {
          const out = [`uyuni-cdk: interrupted (${ev.signal}) after ${secs(ev.elapsedSeconds)}. Run the same command again to resume: finished steps are skipped, running Jobs attached to.`];
          for (const r of ev.stillRunning ?? []) out.push(`  still running in the cluster: ${idText(r.object)} (it goes on without the run; to stop it: ${r.stop})`);
          if (ev.runDir) out.push(`  logs and events: ${ev.runDir}`);
          if (ev.next) out.push(`  next: ${ev.next}`);
          return out.join('\n');
        }
        const out = [ev.stillStarting
          ? p.yellow(`run not finished (exit ${ev.exitCode}) after ${secs(ev.elapsedSeconds)}${ev.message ? `: ${ev.message}` : ''}`)
          : p.red(`run failed (exit ${ev.exitCode}) after ${secs(ev.elapsedSeconds)}${ev.message ? `: ${ev.message}` : ''}`)];
        const changed = t.created + t.updated + t.relabelled + t.deleted + t.stopped + t.scaled + t.jobsRun + t.applied;
        if (changed) out.push(`  changed before it stopped: ${tallyText(t)}${ev.series ? ' (this attempt)' : ''}`);
        if (ev.series) out.push(`  over its series of ${ev.series.attempts} attempts: ${tallyText(ev.series.resources)}`);
        if (ev.runDir) out.push(`  logs and events: ${ev.runDir}`);
        if (ev.next) out.push(ev.stillStarting ? `  next: nothing to fix; the same command waits on: ${ev.next}` : `  next: fix the cause, then ${ev.next}`);
        return out.join('\n');
      }
    }
  }

  // --- the TTY live line ---
  private startLive(prefix: string): void {
    if (this.mode !== 'tty') return;
    this.liveState = { prefix, startedAt: this.now(), blockers: ['server-side apply'] };
    this.liveTimer ??= setInterval(() => this.redraw(), 1000);
    this.liveTimer.unref();
  }

  private setLive(ev: Extract<RunEvent, { type: 'waiting' }>): void {
    if (!this.liveState) return;
    this.liveState.blockers = ev.blockers;
    // A server in its first start: what it is doing, not a blocker cut to fit.
    const starting = (ev.pods ?? []).find(inStartupProbe);
    this.liveState.starting = starting;
    this.redraw();
  }

  private stopLive(): void {
    this.clearLive();
    this.liveState = undefined;
  }

  private redraw(): void {
    this.clearLive();
    this.drawLive();
  }

  private drawLive(): void {
    if (this.mode !== 'tty' || !this.liveState) return;
    const s = this.liveState;
    const cols = process.stdout.columns || 120;
    const head = `${s.prefix} ${secs((this.now() - s.startedAt) / 1000)} `;
    this.live = s.copy ? fit(head, s.copy, cols - 1)
      : s.starting ? head + startingText(s.starting, cols - 1 - head.length)
        : fit(`${head}waiting for `, brief(s.blockers), cols - 1);
    this.write(this.live);
  }

  private clearLive(): void {
    if (this.mode === 'tty' && this.live) {
      this.write('\r\x1b[2K');
      this.live = '';
    }
  }
}
