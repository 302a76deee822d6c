/**
 * docs/configuration.md documents every key the configuration schema accepts, and no key it does
 * not (issue 15 item 5): the superstruct schema (src/config/schema.ts) is walked to its leaves and
 * compared with the first column of every table whose header starts with `key`.
 */
import * as fs from 'fs';
import * as path from 'path';
import type { Struct } from 'superstruct';
import { configSchema } from '../src/config/schema';

type AnyStruct = Struct<unknown, unknown>;

/** A record's value struct: superstruct keeps it only in `entries`, which yields [key, key, Key], [key, value, Value]. */
function recordValue(s: AnyStruct): AnyStruct {
  return [...s.entries({ k: undefined }, { branch: [], path: [] } as never)][1][2] as AnyStruct;
}

/**
 * Every key path down to a value: `a.b`, `<*>` for a record's keys, `[]` for a list's items.
 * A map or list of plain values (labels, args) is one key; of sections, each of their keys is.
 */
export function schemaKeys(s: AnyStruct, at = ''): string[] {
  const join = (k: string) => (at ? `${at}.${k}` : k);
  if (s.type === 'object') return Object.entries(s.schema as Record<string, AnyStruct>).flatMap(([k, v]) => schemaKeys(v, join(k)));
  if (s.type === 'record') {
    const v = recordValue(s);
    return v.type === 'object' ? schemaKeys(v, join('<*>')) : [at];
  }
  if (s.type === 'array') {
    const item = s.schema as AnyStruct;
    return item.type === 'object' ? schemaKeys(item, `${at}[]`) : [at];
  }
  return [at];
}

/** `a.{b,c}` → `a.b`, `a.c`. */
function expandBraces(key: string): string[] {
  const m = /^(.*)\{([^}]+)\}(.*)$/.exec(key);
  return m ? m[2].split(',').flatMap((alt) => expandBraces(`${m[1]}${alt.trim()}${m[3]}`)) : [key];
}

/** A placeholder (`<claim>`, `<name>`) matches any one key; a trailing one names a map's keys (`nodePorts.<port>` is `nodePorts`). */
const normalize = (key: string) => key.replace(/<[^>]+>/g, '<*>').replace(/(\.<\*>)+$/, '');

/**
 * The keys of one table cell: the first `code` span is a whole key; later ones are either whole
 * (`tls.renewBefore`), a suffix replacing the first's last part (`.hostPath`), or a sibling
 * without dots (`city` after `tls.ca.state`).
 */
export function cellKeys(cell: string): string[] {
  const spans = [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]);
  if (spans.length === 0) return [];
  const first = spans[0];
  const parent = first.slice(0, first.lastIndexOf('.') + 1);
  const keys = spans.map((s, i) => (i === 0 || (s.includes('.') && !s.startsWith('.')) ? s : parent + s.replace(/^\./, '')));
  return keys.flatMap(expandBraces).map(normalize);
}

/** The first cells of every table whose header's first cell is `key`. */
export function documentedKeys(markdown: string): string[] {
  const keys: string[] = [];
  let inKeyTable = false;
  for (const line of markdown.split('\n')) {
    if (!line.startsWith('|')) {
      inKeyTable = false;
      continue;
    }
    const first = line.split('|')[1].trim();
    if (first === 'key') inKeyTable = true;
    else if (inKeyTable && !/^-+$/.test(first)) keys.push(...cellKeys(first));
  }
  return keys;
}

const matches = (doc: string, key: string) => {
  const d = doc.split('.');
  const k = key.split('.');
  return d.length === k.length && d.every((part, i) => part === k[i] || (part === '<*>' && !k[i].includes('[]')) || (part === '<*>[]' && k[i].endsWith('[]')));
};

const DOC = path.join(__dirname, '..', 'docs', 'configuration.md');

describe('docs/configuration.md and the schema', () => {
  const schema = schemaKeys(configSchema as unknown as AnyStruct).map(normalize);
  const documented = documentedKeys(fs.readFileSync(DOC, 'utf8'));

  it('reads the schema down to its leaves (records, lists of sections, defaulted and optional sections)', () => {
    expect(schema).toEqual(expect.arrayContaining([
      'fqdn', 'images.components.server.tag', 'volumes.overrides.<*>.labels', 'services.<*>.nodePorts',
      'nodeServices.pods[].containers[].env[].name', 'server.extraVolumes', 'plans', 'timeouts.deadlineSeconds',
    ]));
    expect(schema).not.toContain('images.components');
  });

  it('reads the notations of the tables (suffixes, siblings, braces, placeholders)', () => {
    expect(cellKeys('`server.mirror.claimName` / `.hostPath`')).toEqual(['server.mirror.claimName', 'server.mirror.hostPath']);
    expect(cellKeys('`tls.ca.state`, `city`')).toEqual(['tls.ca.state', 'tls.ca.city']);
    expect(cellKeys('`ingress.annotations.{ssl,hub}`')).toEqual(['ingress.annotations.ssl', 'ingress.annotations.hub']);
    expect(cellKeys('`services.<name>.nodePorts.<port>`')).toEqual(['services.<*>.nodePorts']);
    expect(cellKeys('`tls.duration`, `tls.renewBefore`')).toEqual(['tls.duration', 'tls.renewBefore']);
  });

  it('documents every key the schema accepts', () => {
    expect(schema.filter((k) => !documented.some((d) => matches(d, k)))).toEqual([]);
  });

  it('documents no key the schema does not accept', () => {
    expect(documented.filter((d) => !schema.some((k) => matches(d, k)))).toEqual([]);
  });
});
