/**
 * The unit file model and its one canonical text form (spec §2): sections in the fixed order
 * [Unit], [Service], [Install], separated by one blank line; within a section the `Key=Value`
 * lines sorted as whole strings (by bytes, as the reference's Rust sort does); no trailing newline,
 * as the reference writes it, so files it wrote compare equal byte for byte.
 */

export const SECTIONS = ['Unit', 'Service', 'Install'] as const;
export type Section = (typeof SECTIONS)[number];

/** A unit file as directives per section; values are already quoted/escaped. */
export interface UnitFile {
  readonly name: string;
  readonly directives: Readonly<Record<Section, ReadonlyArray<readonly [key: string, value: string]>>>;
}

function byBytes(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

export function renderUnitFile(unit: UnitFile): string {
  return SECTIONS
    .filter((section) => unit.directives[section].length > 0)
    .map((section) => {
      const lines = unit.directives[section].map(([k, v]) => `${k}=${v}`).sort(byBytes);
      return [`[${section}]`, ...lines].join('\n');
    })
    .join('\n\n');
}

/**
 * Whether a unit file's text puts the unit into `slice` (a `Slice=` line in its [Service]
 * section). Used to find unit files on disk that belong to the agent even when not loaded.
 */
export function unitFileSlice(content: string): string | undefined {
  let section = '';
  let slice: string | undefined;
  for (const raw of content.split('\n')) {
    const line = raw.trim();
    if (line.startsWith('[') && line.endsWith(']')) section = line.slice(1, -1);
    else if (section === 'Service' && line.startsWith('Slice=')) slice = line.slice('Slice='.length).trim();
  }
  return slice;
}
