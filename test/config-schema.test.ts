/**
 * The editors' JSON Schema (uyuni.schema.json) is the one src/config/json-schema.ts writes from
 * the superstruct schema, and an independent JSON Schema implementation (ajv, draft 2020-12)
 * agrees with synth's own check on what it can tell: every committed configuration passes,
 * typical mistakes fail.
 */
import Ajv2020 from 'ajv/dist/2020';
import * as fs from 'fs';
import * as path from 'path';
import { parse } from 'yaml';
import { configJsonSchema } from '../src/config/json-schema';
import { parseConfig } from '../src/config/load';
import { configSchema } from '../src/config/schema';

const ROOT = path.join(__dirname, '..');
const committed = JSON.parse(fs.readFileSync(path.join(ROOT, 'uyuni.schema.json'), 'utf8'));
const CONFIGS = ['uyuni.yaml', ...fs.readdirSync(path.join(ROOT, 'examples')).filter((f) => f.endsWith('.yaml')).map((f) => `examples/${f}`)];
const validate = new Ajv2020({ strict: true, allErrors: true }).compile(committed);

describe('uyuni.schema.json', () => {
  it('is what `npm run schema` writes from the configuration schema', () => {
    expect(committed).toEqual(configJsonSchema(configSchema as never));
  });

  it.each(CONFIGS)('is named by the modeline of %s, and accepts it', (file) => {
    const text = fs.readFileSync(path.join(ROOT, file), 'utf8');
    const m = /^# yaml-language-server: \$schema=(\S+)$/.exec(text.split('\n')[0]);
    expect(m).not.toBeNull();
    expect(path.resolve(path.dirname(path.join(ROOT, file)), m![1])).toBe(path.join(ROOT, 'uyuni.schema.json'));
    expect(validate(parse(text)) ? [] : validate.errors).toEqual([]);
  });

  it.each([
    ['an unknown key', { fdqn: 'x.example.org' }, 'additionalProperties'],
    ['a missing fqdn', {}, 'required'],
    ['an unquoted tag (YAML reads 2026.10 as a number)', { fqdn: 'a.example.org', images: { tag: 2026.1 } }, 'type'],
    ['a value not among the allowed', { fqdn: 'a.example.org', tls: { mode: 'self-signed' } }, 'enum'],
    ['a size that is no quantity', { fqdn: 'a.example.org', volumes: { overrides: { 'var-pgsql18': { size: '50 GB' } } } }, 'pattern'],
    ['a port out of range', { fqdn: 'a.example.org', migration: { source: { fqdn: 'o.example.org', port: 70000 }, postgresql: { from: 14 } } }, 'maximum'],
  ])('refuses %s, as synth does', (_what, config, keyword) => {
    expect(validate(config)).toBe(false);
    expect(validate.errors!.map((e) => e.keyword)).toContain(keyword);
    expect(() => parseConfig(JSON.stringify(config))).toThrow();
  });

  /** Every property of a schema, by its path (`<*>` a record's value, `[]` a list's item). */
  const properties = (schema: any, at = ''): Array<[string, any]> => {
    if (!schema || typeof schema !== 'object') return [];
    return [
      ...Object.entries(schema.properties ?? {}).flatMap(([k, v]) => [[`${at}${k}`, v] as [string, any], ...properties(v, `${at}${k}.`)]),
      ...properties(typeof schema.additionalProperties === 'object' ? schema.additionalProperties : undefined, `${at}<*>.`),
      ...properties(schema.items, `${at}[].`),
    ];
  };

  it('describes every property, from the configuration schema (editors show it on hover)', () => {
    const all = properties(committed);
    expect(all.length).toBeGreaterThan(150);
    expect(all.filter(([, v]) => typeof v.description !== 'string' || v.description.length < 10).map(([p]) => p)).toEqual([]);
    // a struct several keys share gets each key's own description
    expect(committed.properties.fqdn.description).toMatch(/^The server's fully qualified domain name/);
    expect(committed.properties.proxy.properties.fqdn.description).toMatch(/^The proxy's fully qualified domain name/);
    expect(committed.properties.migration.properties.source.properties.fqdn.description).toMatch(/^The old server's fully qualified domain name/);
  });

  const FQDNS = [
    'uyuni.example.com', 'a.b', 'x-1.example.org', `${'a'.repeat(63)}.example.com`, `${'a.'.repeat(126)}b`,
    'uyuni', 'Uyuni.example.com', 'uyuni.example.com.', '.example.com', '-a.example.com', 'a-.example.com', 'a..b', 'a_b.example.com',
    `${'a'.repeat(64)}.example.com`, `${'a.'.repeat(126)}bc`, 'uyuni example.com', '', 'ü.example.com',
  ];

  it.each(['fqdn', 'proxy.fqdn', 'migration.source.fqdn'])('%s: the pattern refuses exactly what synth refuses', (key) => {
    const schema = key.split('.').reduce((s, k) => s.properties[k], committed as any);
    expect(schema.pattern).toBeDefined();
    const one = new Ajv2020({ strict: true }).compile(schema);
    const verdicts = FQDNS.map((v) => {
      const config = key === 'fqdn' ? { fqdn: v } : key === 'proxy.fqdn' ? { plans: ['proxy'], fqdn: 'a.example.org', proxy: { fqdn: v } } : { fqdn: 'a.example.org', migration: { source: { fqdn: v }, postgresql: { from: 14 } } };
      let synth = true;
      try {
        parseConfig(JSON.stringify(config));
      } catch {
        synth = false;
      }
      return { v, schema: one(v), synth };
    });
    expect(verdicts.filter((x) => x.schema !== x.synth)).toEqual([]);
    // both ways: some pass, some are refused
    expect(new Set(verdicts.map((x) => x.synth))).toEqual(new Set([true, false]));
  });
});
