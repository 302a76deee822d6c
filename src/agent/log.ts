/**
 * Log lines in the reference's format (env_logger's default):
 * `[2021-09-24T11:26:39Z INFO  stackable_agent::provider::cleanup] message` — the time in UTC to
 * the second, the level padded to five characters, then the target. `--output json` writes the
 * same records as one JSON object per line, with the structured fields (pod, unit, action).
 */
export type Level = 'ERROR' | 'WARN' | 'INFO';

export const CLEANUP_TARGET = 'uyuni_cdk::agent::cleanup';

/** The reconcile loop of `agent run` (the cleanup before it keeps its own target). */
export const RUN_TARGET = 'uyuni_cdk::agent::run';

/** What a record is about, for machine consumers: the pod, the unit, the action taken. */
export interface LogFields {
  readonly pod?: string;
  readonly unit?: string;
  readonly action?: string;
}

export function formatLogLine(level: Level, target: string, message: string, now: Date): string {
  const time = now.toISOString().replace(/\.\d{3}Z$/, 'Z');
  return `[${time} ${level.padEnd(5)} ${target}] ${message}`;
}

export interface Logger {
  log(level: Level, message: string, fields?: LogFields): void;
}

/** A logger writing one record per call to a stream (stderr for the CLI, like env_logger). */
export function streamLogger(target: string, write: (text: string) => void, clock: () => Date = () => new Date()): Logger {
  return { log: (level, message) => write(`${formatLogLine(level, target, message, clock())}\n`) };
}

/** One JSON object per record: `{"time","level","target","message",...fields}`. */
export function jsonLogger(target: string, write: (text: string) => void, clock: () => Date = () => new Date()): Logger {
  return { log: (level, message, fields) => write(`${JSON.stringify({ time: clock().toISOString(), level, target, message, ...fields })}\n`) };
}
