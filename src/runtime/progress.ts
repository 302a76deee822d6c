/**
 * Progress output. Three renderings of one event stream: a live line per step on a TTY, plain
 * lines otherwise (at least every `intervalSeconds` while waiting, naming the blocker), and one
 * JSON event per line for machines. Every event also goes to `<runDir>/events.jsonl`.
 * Secret values never reach this module: events carry names and keys only.
 */
import * as fs from 'fs';
import type { DestructiveChange } from './destructive';
import type { PodProgress } from './readiness';

export type OutputMode = 'tty' | 'plain' | 'json';

/** A pod the step waits on (a Job's, a rollout's): phase, and each container's started, ready, restarts. */
export interface WaitingPod extends PodProgress {
  /** The waited-on object it belongs to: `Deployment/uyuni (uyuni)`. */
  readonly owner: string;
}

export type RunEvent =
  | { type: 'run-start'; plan: string; runId: string; runDir: string; steps: number; server: string }
  /** Before the first write: the plan's destructive changes (src/runtime/destructive.ts)... */
  | { type: 'destructive'; changes: DestructiveChange[] }
  /** ...and what let them go ahead (`--yes`, the answer on the terminal, a saved plan), or not. */
  | { type: 'approval'; result: Approval }
  | { type: 'step-start'; step: string; index: number; total: number; description: string }
  | { type: 'step-skip'; step: string; index: number; total: number; reason: string }
  | { type: 'gate'; step: string; ok: boolean; detail: string }
  | { type: 'requirement'; step: string; kind: string; name: string; namespace: string; result: 'present' | 'generated' | 'completed-keys'; keys: string[] }
  | { type: 'action'; step: string; action: string; object: string; result: string }
  | { type: 'apply'; step: string; object: string; result: string }
  | { type: 'waiting'; step: string; index: number; total: number; elapsedSeconds: number; blockers: string[]; pods?: WaitingPod[] }
  | { type: 'log'; step: string; pod: string; container: string; line: string }
  | { type: 'facts'; step: string; facts: Record<string, string> }
  | { type: 'step-done'; step: string; index: number; total: number; elapsedSeconds: number }
  | { type: 'step-failed'; step: string; index: number; total: number; elapsedSeconds: number; reason: string; pods: FailedContainer[] }
  | {
    type: 'run-done'; status: 'done' | 'failed' | 'interrupted'; exitCode: number; elapsedSeconds: number; message?: string;
    /** `interrupted`: the signal that ended the run (SIGINT, SIGTERM, SIGHUP). */
    signal?: string;
    /** `interrupted`: what goes on in the cluster without the run, each with the command that stops it. */
    stillRunning?: Array<{ object: string; stop: string }>;
    /** A failed run that got as far as its run directory: where its logs and events are. */
    runDir?: string;
    /** A failed step: the command that continues the run (`--rerun <step>` when it has Jobs). */
    next?: string;
  };

export interface FailedContainer {
  pod: string;
  container: string;
  exitCode?: number;
  reason?: string;
  message?: string;
  lastLines: string[];
}

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
}

const two = (n: number) => String(n).padStart(2, '0');
/** 4.2s, 3m05s, 9h59m59s: a server's first start is counted in hours. */
const secs = (s: number) => {
  if (s < 60) return `${s.toFixed(1)}s`;
  const w = Math.floor(s);
  return w < 3600 ? `${Math.floor(w / 60)}m${two(w % 60)}s` : `${Math.floor(w / 3600)}h${two(Math.floor(w / 60) % 60)}m${two(w % 60)}s`;
};

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

/** The first blockers and how many more: a step waiting on 27 volumes stays one line. */
function brief(blockers: string[]): string {
  return blockers.length <= 3 ? blockers.join('; ') : `${blockers.slice(0, 3).join('; ')} (+${blockers.length - 3} more)`;
}

export type Approval = 'yes' | 'answered yes' | 'saved plan' | 'refused' | 'declined';

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

export class Reporter {
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
  private liveState?: { prefix: string; startedAt: number; blockers: string[] };

  constructor(opts: ReporterOptions) {
    this.mode = opts.mode;
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

  emit(ev: RunEvent): void {
    const stamped = { at: new Date(this.now()).toISOString(), ...ev };
    const line = JSON.stringify(stamped) + '\n';
    if (ev.type === 'waiting') {
      this.emitWaiting(ev, line);
      return;
    }
    if (this.file !== undefined) fs.writeSync(this.file, line);
    if (this.mode === 'json') {
      this.write(line);
      return;
    }
    const text = this.render(ev);
    if (text === undefined) return;
    this.clearLive();
    if (ev.type === 'run-done' && ev.status !== 'done') this.writeErr(text + '\n');
    else this.write(text + '\n');
    this.drawLive();
  }

  /**
   * The waiter reports on every change and four times a second. Recorded (events.jsonl, and
   * `-o json`, the same lines): what changed (a blocker, a pod's state) and, once an interval, a
   * heartbeat: a ten-hour first start stays a few thousand lines, not 144 000. Printed as a plain
   * line: once a step has waited an interval, then every interval. The TTY line: every report.
   */
  private emitWaiting(ev: Extract<RunEvent, { type: 'waiting' }>, line: string): void {
    const due = this.waitingDue(ev);
    const what = JSON.stringify([ev.step, ev.blockers, ev.pods ?? []]);
    if (this.mode === 'tty') this.setLive(ev);
    if (!due && what === this.lastRecorded) return;
    this.lastRecorded = what;
    if (this.file !== undefined) fs.writeSync(this.file, line);
    if (this.mode === 'json') this.write(line);
    else if (this.mode === 'plain' && due) this.write(this.render(ev) + '\n');
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
    switch (ev.type) {
      case 'run-start': return `run ${ev.runId}: plan ${ev.plan}, ${ev.steps} steps, cluster ${ev.server}, logs in ${ev.runDir}`;
      case 'destructive': return destructiveText(ev);
      case 'approval': return APPROVAL[ev.result];
      case 'step-start': this.startLive(`${n(ev)} ${ev.step}`); return `${n(ev)} ${ev.step}: ${ev.description}`;
      case 'step-skip': return `${n(ev)} ${ev.step}: skipped, ${ev.reason}`;
      case 'gate': return `  gate ${ev.ok ? 'passed' : 'REFUSED'}: ${ev.detail}`;
      case 'requirement': return `  ${ev.kind} ${ev.namespace}/${ev.name}: ${ev.result}${ev.result === 'present' ? '' : ` (keys ${ev.keys.join(', ')}, values not shown)`}`;
      case 'action': return `  ${ev.action} ${ev.object}: ${ev.result}`;
      case 'apply': return `  ${ev.object}: ${ev.result}`;
      case 'waiting': return `${n(ev)} ${ev.step}: waiting ${secs(ev.elapsedSeconds)} for ${brief(ev.blockers)}`;
      case 'log': return `  ${ev.step}/${ev.pod}${ev.container ? `/${ev.container}` : ''} | ${ev.line}`;
      case 'facts': return `  facts: ${Object.entries(ev.facts).map(([k, v]) => `${k}=${v}`).join(' ')}`;
      case 'step-done': this.stopLive(); return `${n(ev)} ${ev.step}: done in ${secs(ev.elapsedSeconds)}`;
      case 'step-failed': {
        this.stopLive();
        const out = [`${n(ev)} ${ev.step}: FAILED after ${secs(ev.elapsedSeconds)}: ${ev.reason}`];
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
        if (ev.status === 'done') return `done in ${secs(ev.elapsedSeconds)}`;
        if (ev.status === 'interrupted') {
          const out = [`uyuni-cdk: interrupted (${ev.signal}) after ${secs(ev.elapsedSeconds)}. Run the same command again to resume: finished steps are skipped, running Jobs attached to.`];
          for (const r of ev.stillRunning ?? []) out.push(`  still running in the cluster: ${r.object} (it goes on without the run; to stop it: ${r.stop})`);
          if (ev.runDir) out.push(`  logs and events: ${ev.runDir}`);
          if (ev.next) out.push(`  next: ${ev.next}`);
          return out.join('\n');
        }
        const out = [`run failed (exit ${ev.exitCode}) after ${secs(ev.elapsedSeconds)}${ev.message ? `: ${ev.message}` : ''}`];
        if (ev.runDir) out.push(`  logs and events: ${ev.runDir}`);
        if (ev.next) out.push(`  next: fix the cause, then ${ev.next}`);
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
    this.live = fit(`${s.prefix} ${secs((this.now() - s.startedAt) / 1000)} waiting for `, brief(s.blockers), cols - 1);
    this.write(this.live);
  }

  private clearLive(): void {
    if (this.mode === 'tty' && this.live) {
      this.write('\r\x1b[2K');
      this.live = '';
    }
  }
}
