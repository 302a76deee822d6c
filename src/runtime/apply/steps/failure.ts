/**
 * The failure report of a step: for each terminated or stuck container of its pods, the exit
 * code, reason and last log lines, from the live stream, the cluster, or (when the pods are
 * gone) the logs an earlier attempt saved (`<runs>/<series>/<attempt>/<step>/<pod>.<container>.log`,
 * src/runtime/core/run-dirs.ts).
 */
import * as fs from 'fs';
import * as path from 'path';
import type { V1ContainerStatus, V1Pod } from '@kubernetes/client-node';
import type { Cluster } from '../../../kube/cluster';
import { FILE_MARK, PROGRESS_MARK, StepLogs } from '../step-logs';
import type { FailedContainer } from '../../core/events';
import { terminations } from '../../readiness';
import { earlierAttempts } from '../../core/run-dirs';

const TAIL = 20;

/** A log's lines, without the empty one after its last newline, nor a copy's file list and progress (src/runtime/apply/step-logs.ts). */
const logLines = (text: string) => text.split('\n')
  .filter((l, i, a) => (l !== '' || i < a.length - 1) && !l.startsWith(FILE_MARK) && !l.startsWith(PROGRESS_MARK));

/** The other attempts of this plan's runs (every series), newest first. */
const earlierRuns = earlierAttempts;

function savedTail(runDir: string, step: string, pod: string, container: string): string[] {
  for (const d of earlierRuns(runDir)) {
    const f = path.join(d, step, `${pod}.${container}.log`);
    if (fs.existsSync(f)) return logLines(fs.readFileSync(f, 'utf8')).slice(-TAIL);
  }
  return [];
}

/** When a failed Job's pods are gone: the logs the newest earlier run saved of its pods. */
export function savedLogsOfJob(runDir: string, step: string, job: string): FailedContainer[] {
  for (const d of earlierRuns(runDir)) {
    let files: string[];
    try {
      files = fs.readdirSync(path.join(d, step)).filter((f) => f.startsWith(`${job}-`) && f.endsWith('.log'));
    } catch {
      continue;
    }
    if (files.length === 0) continue;
    return files.map((f) => {
      const [pod, container] = f.replace(/\.log$/, '').split('.');
      return { pod, container, reason: `pod gone; log saved in ${path.join(d, step, f)}`, lastLines: logLines(fs.readFileSync(path.join(d, step, f), 'utf8')).slice(-TAIL) };
    });
  }
  return [];
}

interface Where {
  readonly cluster: Cluster;
  readonly logs: StepLogs | undefined;
  readonly runDir: string;
  readonly step: string;
}

/** Terminated containers: the streamed tail, else the cluster's log, else an earlier run's. */
async function terminated(w: Where, p: V1Pod): Promise<FailedContainer[]> {
  const out: FailedContainer[] = [];
  const name = p.metadata?.name ?? '';
  for (const t of terminations(p)) {
    let lines = w.logs?.tail(name, t.container);
    if (!lines || lines.length === 0) lines = logLines(await w.cluster.readLog(p.metadata?.namespace ?? '', name, t.container, TAIL).catch(() => ''));
    if (lines.length === 0) lines = savedTail(w.runDir, w.step, name, t.container);
    out.push({ pod: name, container: t.container, exitCode: t.exitCode, reason: t.reason, message: t.message, lastLines: lines.slice(-TAIL) });
  }
  return out;
}

/** A crash-looping container waits for its next start: how its last run ended, and what it printed. */
async function waitingContainer(w: Where, p: V1Pod, c: V1ContainerStatus): Promise<FailedContainer> {
  const name = p.metadata?.name ?? '';
  const last = c.lastState?.terminated;
  const lines = last ? logLines(await w.cluster.readLog(p.metadata?.namespace ?? '', name, c.name, TAIL, true).catch(() => '')) : [];
  return {
    pod: name, container: c.name, ...(last ? { exitCode: last.exitCode } : {}), reason: c.state?.waiting?.reason,
    message: c.state?.waiting?.message ?? (last ? `last run: ${last.reason ?? 'terminated'}` : undefined), lastLines: lines,
  };
}

/** Exit code, reason and last log lines of every terminated or stuck container of the pods. */
export async function failureReport(cluster: Cluster, pods: readonly V1Pod[], logs: StepLogs | undefined, runDir: string, step: string): Promise<FailedContainer[]> {
  const w: Where = { cluster, logs, runDir, step };
  const out: FailedContainer[] = [];
  for (const p of pods) {
    const waitingCs = (p.status?.containerStatuses ?? []).filter((c) => c.state?.waiting);
    out.push(...await terminated(w, p));
    for (const c of waitingCs) out.push(await waitingContainer(w, p, c));
  }
  return out;
}
