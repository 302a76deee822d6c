/**
 * Where a configuration comes from and how it is read: the files (`$UYUNI_CONFIG`, else
 * uyuni.yaml), the `--set`/`$UYUNI_SET` layers, how messages name them, and a file read within
 * the size bound (src/config/load.ts merges and checks what these give).
 */
import * as fs from 'fs';
import * as path from 'path';
import { ConfigError } from './errors';
import type { ConfigSource } from './layers';

/** The default configuration file, at the project root. */
export const DEFAULT_CONFIG_FILE = 'uyuni.yaml';

/** Why a file could not be opened, in words (`not found`), not as an errno code. */
function unreadable(e: NodeJS.ErrnoException): string {
  const words: Record<string, string> = { ENOENT: 'not found', EACCES: 'permission denied', EPERM: 'permission denied', ENOTDIR: 'not found (a part of its path is not a directory)', ELOOP: 'too many symbolic links' };
  return (e.code && words[e.code]) ?? `cannot be read: ${e.code ?? e.message}`;
}

/**
 * The configuration files to read: `$UYUNI_CONFIG` (several separated by ":", as KUBECONFIG;
 * later files win), else uyuni.yaml in `cwd`.
 */
export function configPaths(env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): string[] {
  const given = (env.UYUNI_CONFIG ?? '').split(path.delimiter).filter((f) => f !== '');
  return (given.length > 0 ? given : [DEFAULT_CONFIG_FILE]).map((f) => path.resolve(cwd, f));
}

/**
 * The layers the environment gives the cdk8s app, which gets no arguments: `$UYUNI_CONFIG`'s
 * files, then `$UYUNI_SET`'s assignments (`images.tag="2026.10",namespace=uyuni-test`).
 */
export function configSources(env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): ConfigSource[] {
  const files: ConfigSource[] = configPaths(env, cwd).map((file) => ({ file }));
  return env.UYUNI_SET ? [...files, { set: env.UYUNI_SET, via: 'UYUNI_SET' }] : files;
}

/**
 * What a configuration may make synth do, checked before anything bigger is built from it
 * (docs/configuration.md "Limits"): its size in bytes (checked before it is parsed), the depth of
 * its nesting (while it is parsed) and the alias expansions of its YAML (before it is expanded).
 */
export const LIMITS = { bytes: 1024 * 1024, depth: 64, aliases: 64 } as const;

export const MIB = `${LIMITS.bytes} bytes (1 MiB)`;

/** How messages name a set of layers: `base.yaml + prod.yaml + --set`. */
export function sourcesLabel(sources: readonly ConfigSource[]): string {
  const names: string[] = [];
  for (const s of sources) {
    const name = 'file' in s ? s.file : (s.via ?? '--set');
    if (!names.includes(name) || 'file' in s) names.push(name);
  }
  return names.join(' + ');
}

/** A regular file of at most LIMITS.bytes, read without ever holding more than one byte over that. */
export function readBounded(file: string): string {
  let fd: number;
  try {
    // O_NONBLOCK: opening a FIFO must not wait for a writer (it is refused below as not a regular file).
    fd = fs.openSync(file, fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK ?? 0));
  } catch (e) {
    const why = `config file ${file}: ${unreadable(e as NodeJS.ErrnoException)}`;
    throw new ConfigError(file, [why], undefined, new Map(), why);
  }
  try {
    const stat = fs.fstatSync(fd);
    if (!stat.isFile()) throw new ConfigError(file, ['cannot be read: not a regular file']);
    if (stat.size > LIMITS.bytes) throw new ConfigError(file, [`is ${stat.size} bytes: a configuration may have at most ${MIB}`]);
    // One byte over the limit tells a file that grew since fstat.
    const buf = Buffer.alloc(stat.size + 1);
    let n = 0;
    for (let r = 1; r > 0 && n < buf.length; n += r) r = fs.readSync(fd, buf, n, buf.length - n, null);
    if (n > LIMITS.bytes) throw new ConfigError(file, [`is more than ${MIB}: a configuration may have at most that`]);
    return buf.toString('utf8', 0, n);
  } catch (e) {
    if (e instanceof ConfigError) throw e;
    throw new ConfigError(file, [`cannot be read: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`]);
  } finally {
    fs.closeSync(fd);
  }
}
