/**
 * How a problem of a configuration is said: the schema's failures in our words (with a quoting
 * hint, a did-you-mean), each cross check's problem with the layer and place of its field.
 */
import { Failure, validate } from 'superstruct';
import { configSchema, REMOVED_SETTINGS, STRING_EXPECTED, UyuniConfig } from './schema';
import type { ValidSections } from './errors';
import { knownKeys, structAt } from './json-schema';
import { fieldName, Layer, parseKeyPath } from './layers';
import { didYouMean } from './suggest';

/** Where each value came from: the layer, and whether to say so (only when there are several). */
export interface Provenance {
  originOf(path: ReadonlyArray<string | number>): Layer | undefined;
  readonly several: boolean;
}

/** The field paths a cross check's problem starts with (`a.b, c.d: ...`). */
export function fieldsOf(problem: string): Path[] {
  const paths: Path[] = [];
  for (const field of problem.slice(0, Math.max(0, problem.indexOf(': '))).split(', ')) {
    try {
      paths.push(parseKeyPath(field));
    } catch {
      // not a field path
    }
  }
  return paths;
}

/**
 * Each top-level section of `raw` checked on its own (defaults filled in): those that pass, and
 * the names of those that do not, so that a problem in one section hides no problem of another.
 */
export function validSections(raw: Record<string, unknown>): ValidSections {
  const sections: Record<string, unknown> = {};
  const invalid = new Set<string>();
  for (const [key, struct] of Object.entries(configSchema.schema)) {
    const [failed, value] = validate(raw[key], struct as Parameters<typeof validate>[1], { coerce: true });
    if (failed) invalid.add(key);
    else if (value !== undefined) sections[key] = value;
  }
  return { sections: sections as Partial<UyuniConfig>, invalid };
}

export type Path = ReadonlyArray<string | number>;

/** ` (prod.yaml, line 3, column 8)`, ` (--set images.tag=2026.10)`: when there are several layers. */
function fromWhere(path: Path, from: Provenance): string {
  if (!from.several) return '';
  const layer = from.originOf(path);
  if (!layer) return '';
  const where = layer.where(path);
  return ` (${layer.label}${where ? `, ${where}` : ''})`;
}

/**
 * A cross check's problem with the layer of its field (`services.cobbler.nodePorts.cobbler: …`,
 * `migration, upgrade: …`), when there are several layers.
 */
export function locate(problem: string, from: Provenance): string {
  if (!from.several) return problem;
  const fields = problem.slice(0, Math.max(0, problem.indexOf(': '))).split(', ');
  const shown = new Set<string>();
  for (const field of fields) {
    try {
      const here = fromWhere(parseKeyPath(field), from);
      if (here) shown.add(here.slice(2, -1));
    } catch {
      // not a field path: nothing to add
    }
  }
  return shown.size > 0 ? `${problem} (${[...shown].join('; ')})` : problem;
}

/** The user wrote a number or a boolean where a string belongs: YAML read it so. How to quote it. */
function quoteHint(failure: Failure, from: Provenance): string {
  const v = failure.value as unknown;
  if (typeof v !== 'number' && typeof v !== 'boolean') return '';
  const path = failure.path as Path;
  const layer = from.originOf(path);
  const written = layer?.written(path) ?? String(v);
  const kind = typeof v === 'number' ? 'number' : 'boolean';
  const read = written === String(v) ? `a ${kind}` : `the ${kind} ${String(v)}`;
  const quoted = layer ? layer.quoted(path, written) : `"${written}"`;
  return `: YAML reads ${written} as ${read}; quote it: ${quoted}`;
}

/** `did you mean volumes.storageClass?` for an unknown key (or a record key the schema refused). */
function keySuggestion(path: Path): string {
  const key = path[path.length - 1];
  if (typeof key !== 'string') return '';
  const parent = path.slice(0, -1);
  const suggestion = didYouMean(key, knownKeys(structAt(configSchema as never, parent)));
  if (!suggestion) return '';
  return `; ${suggestion.replace(/^did you mean (.*)\?$/, (_m, k: string) => `did you mean ${fieldName([...parent, k])}?`)}`;
}

/** Our own checks carry their messages (src/config/schema.ts); superstruct's structural ones get ours here. */
export function describeFailure(failure: Failure, from: Provenance): string {
  const path = failure.path as Path;
  const field = fieldName(path);
  const at = fromWhere(path, from);
  if (failure.type === 'never') return `${field}: ${REMOVED_SETTINGS[field] ?? `unknown setting${keySuggestion(path)}`}${at}`;
  if (failure.refinement) return `${field}: ${failure.message}${at}`;
  if (failure.value === undefined) return `${field}: is required${at}`;
  if (failure.type === 'object' || failure.type === 'record') return `${field}: must be a mapping of settings${at}`;
  if (failure.type === 'array') return `${field}: must be a list${at}`;
  if (failure.message === STRING_EXPECTED) return `${field}: ${failure.message}${quoteHint(failure, from)}${at}`;
  return `${field}: ${failure.message}${at}`;
}
