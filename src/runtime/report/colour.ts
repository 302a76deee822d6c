/**
 * Colour on a terminal, as terraform and kapp show a plan: additions green, removals red,
 * changes yellow. Only when stdout is a terminal and the output is text: never in a pipe, a
 * file or JSON/YAML, never with `--no-color` or with NO_COLOR set to anything but '' (no-color.org).
 */

export type Paint = (text: string) => string;

export interface Palette {
  readonly enabled: boolean;
  readonly green: Paint;
  readonly red: Paint;
  readonly yellow: Paint;
  readonly cyan: Paint;
  readonly bold: Paint;
}

const sgr = (open: number, close: number): Paint => (t) => (t === '' ? t : `\x1b[${open}m${t}\x1b[${close}m`);
const plain: Paint = (t) => t;

export const NO_COLOUR: Palette = { enabled: false, green: plain, red: plain, yellow: plain, cyan: plain, bold: plain };
export const COLOUR: Palette = { enabled: true, green: sgr(32, 39), red: sgr(31, 39), yellow: sgr(33, 39), cyan: sgr(36, 39), bold: sgr(1, 22) };

export interface ColourChoice {
  /** stdout is a terminal. */
  readonly isTTY: boolean;
  /** text, json or yaml: only text is coloured. */
  readonly format: string;
  /** `--no-color` sets it false. @default true */
  readonly color?: boolean;
  /** @default process.env */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

/** Whether output gets colour: a terminal, text, no `--no-color`, no NO_COLOR. */
export function paletteFor(c: ColourChoice): Palette {
  const env = c.env ?? process.env;
  const off = !c.isTTY || c.format !== 'text' || c.color === false || (env.NO_COLOR !== undefined && env.NO_COLOR !== '') || env.TERM === 'dumb';
  return off ? NO_COLOUR : COLOUR;
}

/**
 * One line of a unified diff (as decide/line-diff.ts writes it, not indented) coloured by its first
 * character: `+` green, `-` red, `@@` cyan, the `---`/`+++` header bold; context lines as they are.
 */
export function paintDiffLine(line: string, p: Palette): string {
  if (line.startsWith('+++ ') || line.startsWith('--- ')) return p.bold(line);
  if (line.startsWith('@@')) return p.cyan(line);
  if (line.startsWith('+')) return p.green(line);
  if (line.startsWith('-')) return p.red(line);
  return line;
}

/** The colour of an action word: what is added green, what is removed or stopped red, what changes yellow. */
export function paintAction(action: string, text: string, p: Palette): string {
  if (/^(create|created|generate|generated|adopt)\b/.test(action)) return p.green(text);
  if (/^(delete|deleted|deleting|prune|stop|stopped|failed|refuse|would REFUSE|blocked-immutable|missing|missing-kind)\b/.test(action)) return p.red(text);
  if (/^(update|updated|recreate|re-created|scale|scaled|completed-keys)\b/.test(action)) return p.yellow(text);
  return text;
}
