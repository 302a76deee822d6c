// Container output, as the kubelet would keep it: lines with the (virtual) time they were
// printed, readable whole or followed until the container terminates; after a restart, the
// previous run's lines too.
export interface LogLine {
  at: number;
  text: string;
}

interface ContainerLog {
  lines: LogLine[];
  ended: boolean;
  followers: Set<{ line: (l: LogLine) => void; end: () => void }>;
}

export class PodLogs {
  private readonly logs = new Map<string, ContainerLog>();
  /** A restarted container's run before the current one (`?previous=true`). */
  private readonly previousRuns = new Map<string, LogLine[]>();

  private entry(ns: string, pod: string, container: string): ContainerLog {
    const k = `${ns}/${pod}/${container}`;
    let e = this.logs.get(k);
    if (!e) this.logs.set(k, (e = { lines: [], ended: false, followers: new Set() }));
    return e;
  }

  append(ns: string, pod: string, container: string, text: string, at: number): void {
    const e = this.entry(ns, pod, container);
    if (e.ended) return;
    const line = { at, text };
    e.lines.push(line);
    for (const f of e.followers) f.line(line);
  }

  /** The container terminated: followers' streams end. */
  end(ns: string, pod: string, container: string): void {
    const e = this.entry(ns, pod, container);
    e.ended = true;
    for (const f of e.followers) f.end();
    e.followers.clear();
  }

  /** The container restarts (a crash, a failed probe): this run's output becomes the previous one. */
  restart(ns: string, pod: string, container: string): void {
    const e = this.entry(ns, pod, container);
    for (const f of e.followers) f.end();
    e.followers.clear();
    this.previousRuns.set(`${ns}/${pod}/${container}`, e.lines);
    e.lines = [];
    e.ended = false;
  }

  /** What the container printed before its last restart; undefined when it never restarted. */
  previous(ns: string, pod: string, container: string): LogLine[] | undefined {
    const l = this.previousRuns.get(`${ns}/${pod}/${container}`);
    return l && [...l];
  }

  lines(ns: string, pod: string, container: string): LogLine[] {
    return [...this.entry(ns, pod, container).lines];
  }

  /** Calls line() for each new line and end() once the container terminates. Returns unsubscribe. */
  follow(ns: string, pod: string, container: string, line: (l: LogLine) => void, end: () => void): () => void {
    const e = this.entry(ns, pod, container);
    if (e.ended) {
      end();
      return () => {};
    }
    const f = { line, end };
    e.followers.add(f);
    return () => e.followers.delete(f);
  }

  /** The pod is gone: its logs go with it. */
  forget(ns: string, pod: string): void {
    for (const k of this.previousRuns.keys()) if (k.startsWith(`${ns}/${pod}/`)) this.previousRuns.delete(k);
    for (const [k, e] of this.logs) {
      if (k.startsWith(`${ns}/${pod}/`)) {
        for (const f of e.followers) f.end();
        this.logs.delete(k);
      }
    }
  }

  stop(): void {
    for (const e of this.logs.values()) {
      for (const f of e.followers) f.end();
      e.followers.clear();
    }
  }
}
