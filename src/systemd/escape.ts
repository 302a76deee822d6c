/**
 * Quoting for values written into unit files, per systemd.syntax(7) and systemd.service(5),
 * so that the process systemd starts receives exactly the pod's argv and environment.
 *
 * - Specifiers: `%` starts a specifier in ExecStart= and Environment= → written `%%`.
 * - ExecStart= words: `$` starts a variable substitution → written `$$`; a word with anything
 *   outside a small safe set is double-quoted with C-style escapes (`\\`, `\"`, `\n`, `\xNN`), so no
 *   raw newline, quote or semicolon can end the word or the directive.
 * - Environment=: always one double-quoted `"NAME=VALUE"` word; systemd does not substitute `$`
 *   there, so `$` stays as it is.
 */

/** Thrown for values that no quoting can carry into a unit (NUL bytes, invalid names). */
export class UnitValueError extends Error {}

/** Characters a word may hold unquoted in ExecStart= (also none of them starts a prefix). */
const SAFE_WORD = /^[A-Za-z0-9_+=:,./@-]+$/;

function cEscapeChar(ch: string): string {
  switch (ch) {
    case '\\': return '\\\\';
    case '"': return '\\"';
    case '\n': return '\\n';
    case '\t': return '\\t';
    case '\r': return '\\r';
    default: {
      const code = ch.charCodeAt(0);
      if (code < 0x20 || code === 0x7f) return `\\x${code.toString(16).padStart(2, '0')}`;
      return ch;
    }
  }
}

function quoted(value: string, dollar: boolean): string {
  let out = '"';
  for (const ch of value) {
    if (ch === '%') out += '%%';
    else if (ch === '$' && dollar) out += '$$';
    else out += cEscapeChar(ch);
  }
  return out + '"';
}

function rejectNul(value: string, what: string): void {
  if (value.includes('\0')) throw new UnitValueError(`${what} contains a NUL character, which no process argument or variable can hold`);
}

/**
 * One word of an ExecStart= command line. `first` marks the executable path, which systemd never
 * substitutes variables in (so `$` cannot be escaped there: it is refused).
 */
export function execWord(value: string, first = false): string {
  rejectNul(value, first ? 'the command path' : `the argument ${JSON.stringify(value)}`);
  if (first && value.includes('$')) {
    throw new UnitValueError(`the command path ${JSON.stringify(value)} contains "$", which systemd cannot take literally in an executable path`);
  }
  if (SAFE_WORD.test(value)) return value;
  return quoted(value, !first);
}

/** The value of an ExecStart= line: the command path followed by its arguments. */
export function execLine(argv: readonly string[]): string {
  if (argv.length === 0) throw new UnitValueError('a command needs at least the executable path');
  return argv.map((word, i) => execWord(word, i === 0)).join(' ');
}

/** Names systemd accepts in an environment assignment (letters, digits, `_`; no leading digit). */
export const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The value of an Environment= line for one variable: `"NAME=VALUE"`, quoted and escaped. */
export function environmentAssignment(name: string, value: string): string {
  if (!ENV_NAME.test(name)) {
    throw new UnitValueError(`the environment variable name ${JSON.stringify(name)} is not valid for systemd (letters, digits and "_", not starting with a digit)`);
  }
  rejectNul(value, `the value of ${name}`);
  // systemd refuses control characters in values except newline and tab.
  if (/[\x01-\x08\x0b-\x1f\x7f]/.test(value)) {
    throw new UnitValueError(`the value of ${name} contains a control character that systemd does not accept in an environment variable`);
  }
  return quoted(`${name}=${value}`, false);
}
