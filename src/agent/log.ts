/**
 * Log lines in the reference's format (env_logger's default):
 * `[2021-09-24T11:26:39Z INFO  stackable_agent::provider::cleanup] message` — the time in UTC to
 * the second, the level padded to five characters, then the target.
 */
export type Level = 'ERROR' | 'WARN' | 'INFO';

export const CLEANUP_TARGET = 'uyuni_cdk::agent::cleanup';

export function formatLogLine(level: Level, target: string, message: string, now: Date): string {
  const time = now.toISOString().replace(/\.\d{3}Z$/, 'Z');
  return `[${time} ${level.padEnd(5)} ${target}] ${message}`;
}

export interface Logger {
  log(level: Level, message: string): void;
}

/** A logger writing one record per call to a stream (stderr for the CLI, like env_logger). */
export function streamLogger(target: string, write: (text: string) => void, clock: () => Date = () => new Date()): Logger {
  return { log: (level, message) => write(`${formatLogLine(level, target, message, clock())}\n`) };
}
