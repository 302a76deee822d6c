/**
 * The agent's writes into the unit directory: atomic (a temporary file beside the target,
 * fsync'd, then renamed over it, so systemd never reads half a unit and a link planted at the
 * name is replaced, never followed), and removals only inside that directory.
 */
import * as fs from 'fs';
import * as path from 'path';

/** Whether `file` is below `dir` (not `dir` itself, not through `..`). */
export function isInside(dir: string, file: string): boolean {
  const rel = path.relative(path.resolve(dir), path.resolve(file));
  return rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel);
}

/** The file's current text, or undefined when there is none (or it is not a regular file). */
export function readUnitFile(unitDir: string, name: string): string | undefined {
  try {
    const file = path.join(unitDir, name);
    if (!fs.lstatSync(file).isFile()) return undefined;
    return fs.readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

/** Writes `<unitDir>/<name>` atomically; the temporary name (a dot file) is no unit name systemd reads. */
export function writeUnitFileAtomic(unitDir: string, name: string, content: string): void {
  fs.mkdirSync(unitDir, { recursive: true });
  const file = path.join(unitDir, name);
  if (!isInside(unitDir, file)) throw new Error(`${name}: not a file name inside ${unitDir}`);
  const tmp = path.join(unitDir, `.${name}.${process.pid}.tmp`);
  const { O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW } = fs.constants;
  fs.rmSync(tmp, { force: true });
  const fd = fs.openSync(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o644);
  try {
    fs.writeSync(fd, content);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  try {
    fs.renameSync(tmp, file);
  } catch (e) {
    fs.rmSync(tmp, { force: true });
    throw e;
  }
}

/** Removes `<unitDir>/<name>`; a missing file is fine. */
export function removeUnitFile(unitDir: string, name: string): void {
  const file = path.join(unitDir, name);
  if (!isInside(unitDir, file)) throw new Error(`${name}: not a file name inside ${unitDir}`);
  fs.rmSync(file, { force: true });
}

/** Why `file` cannot be executed, or undefined when it can (a regular file with an execute bit). */
export function executableProblem(file: string): string | undefined {
  let st: fs.Stats;
  try {
    st = fs.statSync(file);
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'ENOENT' ? 'does not exist' : `cannot be read (${(e as NodeJS.ErrnoException).code})`;
  }
  if (!st.isFile()) return 'is not a regular file';
  if ((st.mode & 0o111) === 0) return 'is not executable';
  return undefined;
}
