/**
 * A configuration file's YAML text as a layer (src/config/layers.ts): parsed with its bounds
 * (nesting, alias expansion), each problem with its line, and each setting's place for messages.
 */
import { ConfigError } from './errors';
import type { Layer } from './layers';
import { LIMITS, MIB } from './sources';

/**
 * cdk8s bundles its own copy of yaml 2.x to write the manifests; reading the configuration with
 * that same copy spares every synth from loading a second one. Our own dependency is the fallback.
 */
export function yamlLib(): typeof import('yaml') {
  try {
    // A literal path, so that a bundle (scripts/build.js) includes it: the copy cdk8s itself loads.
    return require('cdk8s/node_modules/yaml');
  } catch {
    return require('yaml');
  }
}

/** The key that starts at `offset`, as written (quoted or plain). */
function keyAt(text: string, offset: number): string {
  return /^("[^"\n]*"|'[^'\n]*'|[^:,}\n]*)/.exec(text.slice(offset, offset + 256))![1].trim();
}

export type Yaml = typeof import('yaml');
type YamlDocument = import('yaml').Document.Parsed;

/**
 * The one YAML document of `text`, its problems each with the line. The parser is fed by hand so
 * that nesting deeper than LIMITS.depth stops it right there (the composer recurses per level).
 */
function parseYaml(Y: Yaml, text: string): { doc?: YamlDocument; problems: string[]; at: (offset: number) => string } {
  const lines = new Y.LineCounter();
  const at = (offset: number) => {
    const { line, col } = lines.linePos(offset);
    return `line ${line}, column ${col}`;
  };
  lines.addNewLine(0); // as Parser.parse() does
  const parser = new Y.Parser(lines.addNewLine);
  const tokens: import('yaml').CST.Token[] = [];
  for (const lexeme of new Y.Lexer().lex(text)) {
    for (const token of parser.next(lexeme)) tokens.push(token);
    // The stack holds the document and the scalar being read besides the collections.
    if (parser.stack.length - 2 > LIMITS.depth) {
      return { problems: [`nested deeper than ${LIMITS.depth} levels at ${at(parser.offset)} (the bound of a configuration)`], at };
    }
  }
  for (const token of parser.end()) tokens.push(token);
  let doc: YamlDocument | undefined;
  let second: string | undefined;
  for (const d of new Y.Composer({ uniqueKeys: true }).compose(tokens, true, text.length)) {
    if (!doc) {
      doc = d;
    } else {
      second = `not valid YAML: a second document at ${at(d.range[0])} (a configuration is one document)`;
      break;
    }
  }
  const problems = (doc?.errors ?? []).map((e) => (e.code === 'DUPLICATE_KEY'
    ? `not valid YAML: duplicate key ${keyAt(text, e.pos[0])} at ${at(e.pos[0])} (map keys must be unique)`
    : `not valid YAML: ${e.message.split('\n')[0]} at ${at(e.pos[0])}`));
  if (second) problems.push(second);
  return { doc, problems, at };
}

/**
 * The aliases of `doc`, checked where `yaml` does not: each names an anchor before it, and none is
 * inside its own anchor's node (`yaml` would build a cycle of it). How far aliases expand is
 * `yaml`'s own `maxAliasCount`, at `toJS`; `blame()` then names the alias whose expansion it refused.
 */
function watchAliases(Y: Yaml, doc: YamlDocument, at: (offset: number) => string): { problem?: string; blame: () => string | undefined } {
  const anchors = new Map<string, unknown>();
  const where = (a: import('yaml').Alias) => `the alias *${a.source} at ${at(a.range?.[0] ?? 0)}`;
  const over = (a: import('yaml').Alias) => `YAML aliases expand to more than ${LIMITS.aliases} nodes at ${where(a)} (the bound of a configuration)`;
  let problem: string | undefined;
  let refused: import('yaml').Alias | undefined;
  Y.visit(doc, {
    Node(_key, node, path) {
      if (problem) return Y.visit.BREAK;
      if (!Y.isAlias(node)) {
        if (node.anchor) anchors.set(node.anchor, node);
        return undefined;
      }
      const source = anchors.get(node.source);
      if (source === undefined) problem = `not valid YAML: ${where(node)} has no anchor &${node.source} before it`;
      else if (path.includes(source as never)) problem = over(node); // inside its own anchor: it would expand without end
      // The alias yaml's count refuses is the innermost one whose resolution throws.
      const resolve = node.toJSON.bind(node);
      node.toJSON = (...args: Parameters<typeof resolve>) => {
        try {
          return resolve(...args);
        } catch (e) {
          refused ??= node;
          throw e;
        }
      };
      return undefined;
    },
  });
  return { problem, blame: () => (refused ? over(refused) : undefined) };
}

/**
 * A `--set` value as YAML reads it, when it is one flow value (a scalar, `[a, b]`, `{k: v}`); other text
 * (`a: b`, several lines) is the string as written. Empty is the empty string; `null` is null.
 */
export function setValue(Y: Yaml, text: string): unknown {
  if (text === '') return '';
  const doc = Y.parseDocument(text, { uniqueKeys: true });
  if (doc.errors.length > 0 || !(Y.isScalar(doc.contents) || ((Y.isMap(doc.contents) || Y.isSeq(doc.contents)) && doc.contents.flow))) return text;
  return doc.toJS({ maxAliasCount: 0 });
}

/** One file's settings as a layer; throws ConfigError listing its YAML problems. */
export function fileLayer(Y: Yaml, text: string, file: string): Layer {
  if (Buffer.byteLength(text) > LIMITS.bytes) throw new ConfigError(file, [`is more than ${MIB}: a configuration may have at most that`]);
  const { doc, problems, at } = parseYaml(Y, text);
  if (problems.length > 0 || !doc) throw new ConfigError(file, problems);
  const aliases = watchAliases(Y, doc, at);
  if (aliases.problem) throw new ConfigError(file, [aliases.problem]);
  let raw: unknown;
  try {
    raw = doc.toJS({ maxAliasCount: LIMITS.aliases }) ?? {};
  } catch (e) {
    throw new ConfigError(file, [aliases.blame() ?? `not valid YAML: ${(e as Error).message}`]);
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new ConfigError(file, ['the document must be a mapping of settings (see docs/configuration.md)']);
  }
  const node = (p: ReadonlyArray<string | number>) => {
    try {
      return doc.getIn(p, true) as import('yaml').Node | undefined;
    } catch {
      return undefined;
    }
  };
  /** The key node of the last step of `p`, for an unknown key (its value may be empty). */
  const keyNode = (p: ReadonlyArray<string | number>) => {
    const parent = p.length > 1 ? node(p.slice(0, -1)) : doc.contents;
    if (!Y.isMap(parent)) return undefined;
    return parent.items.find((pair) => (Y.isScalar(pair.key) ? pair.key.value : pair.key) === p[p.length - 1])?.key as import('yaml').Node | undefined;
  };
  return {
    label: file,
    value: raw as Record<string, unknown>,
    where: (p) => {
      // a setting starts at its key (an item of a list at its value)
      const n = keyNode(p) ?? node(p);
      return n?.range ? at(n.range[0]) : undefined;
    },
    written: (p) => {
      const n = node(p);
      return Y.isScalar(n) && n.range && n.type === 'PLAIN' ? text.slice(n.range[0], n.range[1]) : undefined;
    },
    quoted: (p, t) => `${typeof p[p.length - 1] === 'number' ? '-' : `${String(p[p.length - 1])}:`} "${t}"`,
  };
}
