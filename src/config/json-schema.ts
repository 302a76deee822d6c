/**
 * The configuration's JSON Schema (draft 2020-12), written from the one superstruct schema
 * (src/config/schema.ts) for editors: `uyuni.yaml` names it in its `yaml-language-server`
 * modeline, so completion, descriptions (`about` in src/config/schema.ts), types, allowed values,
 * patterns and defaults come from the same description synth checks against. Cross-field rules (which plans need which section) stay in
 * src/config/rules.ts: an editor is told the shape, synth the whole truth.
 */
import type { Struct } from 'superstruct';

export interface JsonSchema {
  readonly [keyword: string]: unknown;
}

type AnyStruct = Struct<unknown, unknown>;

/** Where the schema lives in the package, relative to its root. */
export const CONFIG_SCHEMA_FILE = 'uyuni.schema.json';

/** A record's or list's item struct: superstruct keeps it only in `entries`. */
export function itemOf(s: AnyStruct, sample: unknown): AnyStruct {
  const entries = [...s.entries(sample, { branch: [], path: [] } as never)];
  return entries[entries.length - 1][2] as AnyStruct;
}

/** The value a missing key gets (a `defaulted` one), or whether it may be missing at all. */
function whenMissing(s: AnyStruct): { optional: boolean; default?: unknown } {
  const [error, value] = s.validate(undefined, { coerce: true });
  if (error) return { optional: false };
  return value === undefined ? { optional: true } : { optional: true, default: value };
}

/** One struct as JSON Schema. */
export function toJsonSchema(s: AnyStruct): JsonSchema {
  switch (s.type) {
    case 'object':
    case 'type': {
      const fields = Object.entries((s.schema ?? {}) as Record<string, AnyStruct>);
      const properties: Record<string, JsonSchema> = {};
      const required: string[] = [];
      for (const [key, field] of fields) {
        const missing = whenMissing(field);
        const json = toJsonSchema(field);
        // a section defaulted to {} is no default worth showing: its keys show theirs
        const shown = missing.default !== undefined && !(typeof missing.default === 'object' && missing.default !== null && Object.keys(missing.default).length === 0);
        const description = (field as { description?: unknown }).description;
        properties[key] = { ...(typeof description === 'string' ? { description } : {}), ...json, ...(shown ? { default: missing.default } : {}) };
        if (!missing.optional) required.push(key);
      }
      // `type({...})` accepts more keys (extra volumes are Kubernetes objects); `object` does not
      return { type: 'object', properties, ...(required.length ? { required } : {}), additionalProperties: s.type === 'type' };
    }
    case 'record':
      return { type: 'object', additionalProperties: toJsonSchema(itemOf(s, { k: undefined })) };
    case 'array':
      return { type: 'array', items: toJsonSchema(s.schema as AnyStruct) };
    default:
      // a leaf: src/config/schema.ts `leaf` keeps its JSON Schema as the struct's schema
      return s.schema && typeof s.schema === 'object' ? { ...(s.schema as JsonSchema) } : {};
  }
}

/**
 * The struct of the value at `path` below `root` (object keys, record values, list items), or
 * undefined where the schema has nothing there (an unknown key, below a leaf).
 */
export function structAt(root: AnyStruct, path: ReadonlyArray<PropertyKey>): AnyStruct | undefined {
  let s: AnyStruct | undefined = root;
  for (const key of path) {
    if (!s) return undefined;
    if (s.type === 'object' || s.type === 'type') s = ((s.schema ?? {}) as Record<string, AnyStruct>)[String(key)];
    else if (s.type === 'record') s = itemOf(s, { k: undefined });
    else if (s.type === 'array') s = s.schema as AnyStruct;
    else return undefined;
  }
  return s;
}

/** The keys a mapping struct knows (none for a record or a leaf). */
export function knownKeys(s: AnyStruct | undefined): string[] {
  return s && (s.type === 'object' || s.type === 'type') ? Object.keys((s.schema ?? {}) as object) : [];
}

/** The whole document for `configSchema`. */
export function configJsonSchema(configSchema: AnyStruct): JsonSchema {
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    title: 'uyuni-cdk configuration (uyuni.yaml)',
    description: 'Reference: docs/configuration.md. Written by `npm run schema` from src/config/schema.ts; never edit by hand.',
    ...toJsonSchema(configSchema),
  };
}
