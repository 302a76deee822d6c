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
});
