/**
 * Step Job logs: every container of every pod streamed live (prefixed by step and pod) and saved
 * to `<runDir>/<step>/<pod>.<container>.log`; the last lines are kept for the failure report.
 * Two kinds of lines a Job prints are not log lines (src/scripts/data-sync.sh prints both):
 * `@file …` (a file a copy sent: hundreds of thousands on a real server) goes to the saved log
 * only, `@progress key=value…` (a copy's overall progress) becomes a `copy-progress` event.
 */
import * as fs from 'fs';
import * as path from 'path';
import type { V1Pod } from '@kubernetes/client-node';
import type { Cluster } from '../../kube/cluster';
import { ApiError } from '../../kube/api-errors';
import type { CopyProgress, EventSink } from '../core/events';
import { startedContainers } from '../readiness';
import type { WatchHandle } from '../../kube/list-watch';

const TAIL = 30;
/** A stream cut off more often than this is given up (its container's log stays readable with kubectl logs). */
const MAX_CUTS = 10;

interface Stream {
  state: 'starting' | 'streaming' | 'ended' | 'retry';
  handle?: WatchHandle;
  /** The saved log, written synchronously: a run that ends right after its last line still has it on disk. */
  fd?: number;
  partial: string;
  lines: string[];
  attempts: number;
  /** Times the stream was cut off and followed again. */
  cuts: number;
  where?: { namespace: string; pod: string; container: string };
  ended: Promise<void>;
  markEnded: () => void;
}

/** A line for the saved log only. */
export const FILE_MARK = '@file ';
/** A copy's progress: `@progress claim=3/16 bytes=1234 percent=45 rate=1.2MB/s eta=0:01:23 path=/var/spacewalk` (done=1 at its end). */
export const PROGRESS_MARK = '@progress ';

/** A `@progress` line's fields (undefined: not one, or without bytes, percent, rate and path). */
export function parseProgress(line: string): CopyProgress | undefined {
  if (!line.startsWith(PROGRESS_MARK)) return undefined;
  const rest = line.slice(PROGRESS_MARK.length);
  // path= comes last: a path keeps whatever it holds
  const at = rest.search(/(^| )path=/);
  if (at < 0) return undefined;
  const fields = new Map(rest.slice(0, at).split(' ').filter(Boolean).map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]));
  const path = rest.slice(at).replace(/^ ?path=/, '');
  const bytes = Number(fields.get('bytes'));
  const percent = Number(fields.get('percent'));
  const rate = fields.get('rate');
  if (!path || !Number.isFinite(bytes) || !Number.isFinite(percent) || !rate || !fields.has('bytes') || !fields.has('percent')) return undefined;
  const claim = fields.get('claim');
  const eta = fields.get('eta');
  return { ...(claim ? { claim } : {}), path, bytes, percent, rate, ...(eta ? { eta } : {}), done: fields.get('done') === '1' };
}

function newStream(): Stream {
  let markEnded!: () => void;
  const ended = new Promise<void>((r) => { markEnded = r; });
  return { state: 'starting', partial: '', lines: [], attempts: 0, cuts: 0, ended, markEnded };
}

/** A name as a path component: `/`, `..` and anything outside `[A-Za-z0-9._-]` cannot leave the step's directory. */
export function safeComponent(name: string): string {
  const safe = name.replace(/[^A-Za-z0-9._-]/g, '_').replace(/^\./, '_');
  return safe === '' ? '_' : safe;
}

function closeFile(s: Stream): void {
  if (s.fd !== undefined) fs.closeSync(s.fd);
  s.fd = undefined;
}

export class StepLogs {
  private readonly streams = new Map<string, Stream>();

  constructor(
    private readonly cluster: Cluster,
    private readonly runDir: string,
    private readonly step: string,
    private readonly reporter: EventSink,
  ) {}

  /** Called with the current pods of the step's Jobs: starts streams for containers that started. */
  observe(pods: Iterable<V1Pod>): void {
    for (const pod of pods) {
      for (const container of startedContainers(pod)) this.start(pod.metadata?.namespace ?? '', pod.metadata?.name ?? '', container);
    }
  }

  private start(namespace: string, pod: string, container: string): void {
    const key = `${pod}.${container}`;
    const existing = this.streams.get(key);
    if (existing && existing.state !== 'retry') return;
    const s = existing ?? newStream();
    s.state = 'starting';
    s.where = { namespace, pod, container };
    this.streams.set(key, s);
    const dir = path.join(this.runDir, this.step);
    fs.mkdirSync(dir, { recursive: true });
    // Pod and container names come from the API: only safe characters reach the file name, and a
    // link planted at it is not followed.
    const { O_WRONLY, O_APPEND, O_CREAT, O_NOFOLLOW } = fs.constants;
    s.fd ??= fs.openSync(path.join(dir, `${safeComponent(pod)}.${safeComponent(container)}.log`), O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW, 0o644);
    this.follow(s, s.where);
  }

  /** `tailLines` 0: a stream cut off is followed again from now on (lines of the gap may be lost, none repeated). */
  private follow(s: Stream, where: NonNullable<Stream['where']>, tailLines?: number): void {
    const { namespace, pod, container } = where;
    const emitLine = (line: string) => {
      if (line.startsWith(FILE_MARK)) return;
      if (line.startsWith(PROGRESS_MARK)) {
        const p = parseProgress(line);
        if (p) {
          this.reporter.emit({ type: 'copy-progress', step: this.step, pod, ...p });
          return;
        }
      }
      s.lines.push(line);
      if (s.lines.length > TAIL) s.lines.shift();
      this.reporter.emit({ type: 'log', step: this.step, pod, container, line });
    };
    this.cluster.followLog(namespace, pod, container, (text) => {
      if (s.fd !== undefined) fs.writeSync(s.fd, text);
      const parts = (s.partial + text).split('\n');
      s.partial = parts.pop() ?? '';
      for (const l of parts) emitLine(l.replace(/\r$/, ''));
    }, (err) => {
      if (err && s.state !== 'ended' && s.cuts < MAX_CUTS) {
        // cut off by the transport (silent past the idle limit, broken): the container may still run
        s.cuts++;
        s.state = 'starting';
        this.follow(s, where, 0);
        return;
      }
      if (s.partial) emitLine(s.partial);
      s.partial = '';
      s.state = 'ended';
      closeFile(s);
      s.markEnded();
    }, tailLines).then((h) => {
      s.handle = h;
      if (s.state === 'starting') s.state = 'streaming';
    }, (e: unknown) => this.retry(s, where, e));
  }

  /**
   * 400: the container is still waiting to start; the next pod update tries again. Anything
   * else (a 5xx, a reset) is retried shortly: a terminated pod may never update again.
   */
  private retry(s: Stream, where: NonNullable<Stream['where']>, e: unknown): void {
    s.state = 'retry';
    if ((e instanceof ApiError && e.status === 400) || s.attempts >= 6) return;
    s.attempts++;
    setTimeout(() => { if (s.state === 'retry') this.start(where.namespace, where.pod, where.container); }, 100 * 2 ** s.attempts).unref();
  }

  /** Last lines seen of a container (for the failure report). */
  tail(pod: string, container: string): string[] | undefined {
    return this.streams.get(`${pod}.${container}`)?.lines;
  }

  /** Waits (bounded) for streams to drain: containers that terminated close their streams. */
  async drain(timeoutMs: number): Promise<void> {
    // Streams whose request failed get a last try now: their pods may never change again.
    for (const st of this.streams.values()) {
      if (st.state === 'retry' && st.where) this.start(st.where.namespace, st.where.pod, st.where.container);
    }
    const open = [...this.streams.values()].filter((s) => s.state === 'streaming' || s.state === 'starting').map((s) => s.ended);
    if (open.length === 0) return;
    // The bound holds the process (not unref'd): a stream whose end never comes (seen on
    // kube-apiserver after a Job's SuccessCriteriaMet) left nothing pending, and the run stopped
    // there with an internal error instead of going on after `timeoutMs`.
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.all(open), new Promise((r) => { timer = setTimeout(r, timeoutMs); })]);
    clearTimeout(timer);
  }

  stop(): void {
    for (const s of this.streams.values()) {
      if (s.state !== 'ended') {
        s.handle?.stop();
        closeFile(s);
        s.state = 'ended';
        s.markEnded();
      }
    }
  }
}
