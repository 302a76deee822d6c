/** What a refused configuration says: its problems by field, and the sections that passed the schema. */
import type { UyuniConfig } from './schema';

/**
 * Bad user input. Every message names the file (the layers: `base.yaml + prod.yaml + --set`) and
 * the field. Synth exits 2 on it. `sections`: the top-level sections that passed the schema, for
 * the checks that only the plans can make (src/synth.ts), so that those are listed in the same round.
 */
export class ConfigError extends Error {
  /**
   * `where`: the line and column of a problem in the one file read (`line 3, column 8`), shown
   * after it as layered configurations show theirs. `headline`: the whole message, for a file
   * that cannot be read at all (`config file prod.yaml: not found`).
   */
  constructor(
    readonly file: string, readonly problems: readonly string[], readonly sections?: Readonly<ValidSections>,
    readonly where: ReadonlyMap<string, string> = new Map(), headline?: string,
  ) {
    super(headline ?? `${file}: invalid configuration\n${problems.map((p) => `  - ${p}${where.has(p) ? ` (${file}, ${where.get(p)})` : ''}`).join('\n')}`);
  }
}

/** The sections of a refused configuration that passed the schema, and the names of those that did not. */
export interface ValidSections {
  readonly sections: Partial<UyuniConfig>;
  readonly invalid: ReadonlySet<string>;
}
