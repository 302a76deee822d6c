/**
 * A configuration read, merged and checked: the layers (sources.ts) parsed (yaml-text.ts), merged
 * (layers.ts), validated against the schema and the cross checks (rules.ts), every problem said
 * with its field and place (problems.ts) in one ConfigError (errors.ts).
 */
import { validate } from 'superstruct';
import { configSchema, UyuniConfig } from './schema';
import { ConfigError } from './errors';
import { ConfigSource, Layer, mergeLayers, setLayers, SetSyntaxError } from './layers';
import { describeFailure, fieldsOf, locate, Path, Provenance, validSections } from './problems';
import { crossChecks } from './rules';
import { DEFAULT_CONFIG_FILE, readBounded, sourcesLabel } from './sources';
import { fileLayer, setValue, yamlLib } from './yaml-text';

export { ConfigError, ValidSections } from './errors';
export { configPaths, configSources, DEFAULT_CONFIG_FILE, LIMITS, sourcesLabel } from './sources';
export { plansOf, plansOfSections } from './plans-of';

/**
 * Reads, merges (src/config/layers.ts: later wins, mappings merge, lists are replaced) and
 * validates the layers of a configuration; throws ConfigError listing every problem of every
 * layer, each naming the layer its value came from when there are several.
 */
export function loadConfig(sources: readonly ConfigSource[]): UyuniConfig {
  const label = sourcesLabel(sources);
  const several = sources.length > 1;
  const Y = yamlLib();
  const layers: Layer[] = [];
  const problems: string[] = [];
  for (const source of sources) {
    if ('file' in source) {
      try {
        layers.push(fileLayer(Y, readBounded(source.file), source.file));
      } catch (e) {
        if (!(e instanceof ConfigError)) throw e;
        // one file: its own error (a file not found says so alone); several: each problem names its file
        if (!several) throw e;
        problems.push(...e.problems.map((p) => (p.startsWith('config file ') ? p : `${source.file}: ${p}`)));
      }
    } else {
      try {
        layers.push(...setLayers((text) => setValue(Y, text), source));
      } catch (e) {
        if (!(e instanceof SetSyntaxError)) throw e;
        problems.push(e.message);
      }
    }
  }
  if (problems.length > 0) throw new ConfigError(label, problems);
  const merged = mergeLayers(layers);
  if (merged.problems.length > 0) throw new ConfigError(label, merged.problems);
  return checkRaw(merged.value, label, { originOf: merged.originOf, several });
}

/** Parses and validates configuration text; throws ConfigError listing every problem found. */
export function parseConfig(text: string, file = DEFAULT_CONFIG_FILE): UyuniConfig {
  const layer = fileLayer(yamlLib(), text, file);
  return checkRaw(layer.value!, file, { originOf: () => layer, several: false });
}

/**
 * Validates settings already read (parsed YAML, or a construct's props: `file` then names the
 * construct) against the schema and the cross checks; throws ConfigError listing every problem.
 */
export function checkConfig(raw: unknown, file: string): UyuniConfig {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new ConfigError(file, ['the document must be a mapping of settings (see docs/configuration.md)']);
  }
  return checkRaw(raw as Record<string, unknown>, file, { originOf: () => undefined, several: false });
}

function checkRaw(raw: Record<string, unknown>, file: string, from: Provenance): UyuniConfig {
  // one file: where each problem is in it, shown after the problem (several: in the problem)
  const where = new Map<string, string>();
  const note = (problem: string, paths: readonly Path[]) => {
    if (from.several || where.has(problem)) return problem;
    for (const p of paths) {
      const at = from.originOf(p)?.where(p);
      if (at) {
        where.set(problem, at);
        break;
      }
    }
    return problem;
  };
  const crossChecked = (problems: readonly string[]) => problems.map((p) => note(locate(p, from), fieldsOf(p)));
  const [error, config] = validate(raw, configSchema, { coerce: true });
  if (!error) {
    const problems = crossChecked(crossChecks(config));
    if (problems.length > 0) throw new ConfigError(file, problems, { sections: config, invalid: new Set() }, where);
    return config;
  }
  // All in one round: the rules whose sections are valid run too, on those sections.
  const schemaProblems = [...new Set(error.failures().map((f) => note(describeFailure(f, from), [f.path as Path])))];
  const valid = validSections(raw);
  throw new ConfigError(file, [...schemaProblems, ...crossChecked(crossChecks(valid.sections as UyuniConfig, valid.invalid))], valid, where);
}
