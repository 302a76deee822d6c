import * as fs from 'fs';
import * as path from 'path';
import { Failure, validate } from 'superstruct';
import { PROXY_SERVICES, SERVER_SERVICE_NAMES, serverServices, ServiceSpec } from '../model/ports';
import { KNOWN_VOLUMES } from '../model/volumes';
import { configSchema, ExposureConfig, PlanName, REMOVED_SETTINGS, STRING_EXPECTED, UyuniConfig } from './schema';
import { portFeatures } from './features';
import { knownKeys, structAt } from './json-schema';
import { ConfigSource, fieldName, Layer, mergeLayers, parseKeyPath, setLayers, SetSyntaxError } from './layers';
import { didYouMean } from './suggest';

/**
 * cdk8s bundles its own copy of yaml 2.x to write the manifests; reading the configuration with
 * that same copy spares every synth from loading a second one. Our own dependency is the fallback.
 */
function yamlLib(): typeof import('yaml') {
  try {
    // A literal path, so that a bundle (scripts/build.js) includes it: the copy cdk8s itself loads.
    return require('cdk8s/node_modules/yaml');
  } catch {
    return require('yaml');
  }
}

/** The default configuration file, at the project root. */
export const DEFAULT_CONFIG_FILE = 'uyuni.yaml';

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

/** Why a file could not be opened, in words (`not found`), not as an errno code. */
function unreadable(e: NodeJS.ErrnoException): string {
  const words: Record<string, string> = { ENOENT: 'not found', EACCES: 'permission denied', EPERM: 'permission denied', ENOTDIR: 'not found (a part of its path is not a directory)', ELOOP: 'too many symbolic links' };
  return (e.code && words[e.code]) ?? `cannot be read: ${e.code ?? e.message}`;
}

/** The sections of a refused configuration that passed the schema, and the names of those that did not. */
export interface ValidSections {
  readonly sections: Partial<UyuniConfig>;
  readonly invalid: ReadonlySet<string>;
}

/**
 * The configuration files to read: `$UYUNI_CONFIG` (several separated by ":", as KUBECONFIG;
 * later files win), else uyuni.yaml in `cwd`.
 */
export function configPaths(env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): string[] {
  const given = (env.UYUNI_CONFIG ?? '').split(path.delimiter).filter((f) => f !== '');
  return (given.length > 0 ? given : [DEFAULT_CONFIG_FILE]).map((f) => path.resolve(cwd, f));
}

/**
 * The layers the environment gives the cdk8s app, which gets no arguments: `$UYUNI_CONFIG`'s
 * files, then `$UYUNI_SET`'s assignments (`images.tag="2026.10",namespace=uyuni-test`).
 */
export function configSources(env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): ConfigSource[] {
  const files: ConfigSource[] = configPaths(env, cwd).map((file) => ({ file }));
  return env.UYUNI_SET ? [...files, { set: env.UYUNI_SET, via: 'UYUNI_SET' }] : files;
}

/**
 * What a configuration may make synth do, checked before anything bigger is built from it
 * (docs/configuration.md "Limits"): its size in bytes (checked before it is parsed), the depth of
 * its nesting (while it is parsed) and the alias expansions of its YAML (before it is expanded).
 */
export const LIMITS = { bytes: 1024 * 1024, depth: 64, aliases: 64 } as const;

const MIB = `${LIMITS.bytes} bytes (1 MiB)`;

/** How messages name a set of layers: `base.yaml + prod.yaml + --set`. */
export function sourcesLabel(sources: readonly ConfigSource[]): string {
  const names: string[] = [];
  for (const s of sources) {
    const name = 'file' in s ? s.file : (s.via ?? '--set');
    if (!names.includes(name) || 'file' in s) names.push(name);
  }
  return names.join(' + ');
}

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

/** A regular file of at most LIMITS.bytes, read without ever holding more than one byte over that. */
function readBounded(file: string): string {
  let fd: number;
  try {
    // O_NONBLOCK: opening a FIFO must not wait for a writer (it is refused below as not a regular file).
    fd = fs.openSync(file, fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK ?? 0));
  } catch (e) {
    const why = `config file ${file}: ${unreadable(e as NodeJS.ErrnoException)}`;
    throw new ConfigError(file, [why], undefined, new Map(), why);
  }
  try {
    const stat = fs.fstatSync(fd);
    if (!stat.isFile()) throw new ConfigError(file, ['cannot be read: not a regular file']);
    if (stat.size > LIMITS.bytes) throw new ConfigError(file, [`is ${stat.size} bytes: a configuration may have at most ${MIB}`]);
    // One byte over the limit tells a file that grew since fstat.
    const buf = Buffer.alloc(stat.size + 1);
    let n = 0;
    for (let r = 1; r > 0 && n < buf.length; n += r) r = fs.readSync(fd, buf, n, buf.length - n, null);
    if (n > LIMITS.bytes) throw new ConfigError(file, [`is more than ${MIB}: a configuration may have at most that`]);
    return buf.toString('utf8', 0, n);
  } catch (e) {
    if (e instanceof ConfigError) throw e;
    throw new ConfigError(file, [`cannot be read: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`]);
  } finally {
    fs.closeSync(fd);
  }
}

/** The key that starts at `offset`, as written (quoted or plain). */
function keyAt(text: string, offset: number): string {
  return /^("[^"\n]*"|'[^'\n]*'|[^:,}\n]*)/.exec(text.slice(offset, offset + 256))![1].trim();
}

type Yaml = typeof import('yaml');
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

/** Parses and validates configuration text; throws ConfigError listing every problem found. */
export function parseConfig(text: string, file = DEFAULT_CONFIG_FILE): UyuniConfig {
  const layer = fileLayer(yamlLib(), text, file);
  return checkRaw(layer.value!, file, { originOf: () => layer, several: false });
}

/**
 * A `--set` value as YAML reads it, when it is one flow value (a scalar, `[a, b]`, `{k: v}`); other text
 * (`a: b`, several lines) is the string as written. Empty is the empty string; `null` is null.
 */
function setValue(Y: Yaml, text: string): unknown {
  if (text === '') return '';
  const doc = Y.parseDocument(text, { uniqueKeys: true });
  if (doc.errors.length > 0 || !(Y.isScalar(doc.contents) || ((Y.isMap(doc.contents) || Y.isSeq(doc.contents)) && doc.contents.flow))) return text;
  return doc.toJS({ maxAliasCount: 0 });
}

/** One file's settings as a layer; throws ConfigError listing its YAML problems. */
function fileLayer(Y: Yaml, text: string, file: string): Layer {
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

/** Where each value came from: the layer, and whether to say so (only when there are several). */
interface Provenance {
  originOf(path: ReadonlyArray<string | number>): Layer | undefined;
  readonly several: boolean;
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

/** The field paths a cross check's problem starts with (`a.b, c.d: ...`). */
function fieldsOf(problem: string): Path[] {
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
function validSections(raw: Record<string, unknown>): ValidSections {
  const sections: Record<string, unknown> = {};
  const invalid = new Set<string>();
  for (const [key, struct] of Object.entries(configSchema.schema)) {
    const [failed, value] = validate(raw[key], struct as Parameters<typeof validate>[1], { coerce: true });
    if (failed) invalid.add(key);
    else if (value !== undefined) sections[key] = value;
  }
  return { sections: sections as Partial<UyuniConfig>, invalid };
}

type Path = ReadonlyArray<string | number>;

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
function locate(problem: string, from: Provenance): string {
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
function describeFailure(failure: Failure, from: Provenance): string {
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

/** The plans that write the server's objects into `namespace`. */
const SERVER_PLANS: readonly PlanName[] = ['install', 'migrate', 'migrate-prepare', 'upgrade'];

/** The plans a configuration asks for (explicit `plans`, or derived from its sections). */
export function plansOf(config: UyuniConfig): PlanName[] {
  if (config.plans) return [...new Set(config.plans)];
  const server: PlanName[] = config.migration ? ['migrate', 'migrate-prepare'] : config.upgrade ? ['upgrade'] : ['install'];
  return [...server, ...(config.proxy ? ['proxy' as const] : []), ...(config.nodeServices ? ['node-services' as const] : []),
    ...(config.backup ? ['backup' as const, 'restore' as const] : []),
    ...(config.db.archiving?.enabled ? ['db-basebackup' as const] : []),
    ...(config.db.archiving?.enabled && config.db.archiving.restoreTo ? ['db-pitr' as const] : [])];
}

const suggestService = (name: string, names: readonly string[]) => {
  const hint = didYouMean(name, names);
  return hint ? `; ${hint}` : '';
};

/** The plans a refused configuration asks for, when every section that says which passed the schema. */
export function plansOfSections(v: ValidSections): PlanName[] | undefined {
  return PLAN_SECTIONS.some((s) => v.invalid.has(s)) ? undefined : plansOf(v.sections as UyuniConfig);
}

/** Exposure only of Services that exist, node ports only for their ports and NodePort type, no clashes. */
function checkExposure(
  prefix: string, exposure: Record<string, ExposureConfig>, services: readonly ServiceSpec[], allNames: readonly string[],
  usedNodePorts: Map<number, string>,
): string[] {
  const problems: string[] = [];
  for (const [name, exp] of Object.entries(exposure)) {
    const field = `${prefix}.${name}`;
    const svc = services.find((s) => s.name === name);
    if (!svc) {
      problems.push(allNames.includes(name)
        ? `${field}: Service ${name} is not part of this configuration (it depends on tftp, debugJava, monitoring or hubApi)`
        : `${field}: no such Service${suggestService(name, allNames)} (known: ${[...allNames].sort().join(', ')})`);
      continue;
    }
    if (svc.fixed) {
      problems.push(`${field}: ${name} is always a ${svc.fixed.type} Service (use tftp.hostNetwork to do without it)`);
      continue;
    }
    if (exp.nodePorts && exp.type !== 'NodePort') {
      problems.push(`${field}.nodePorts: only allowed with type NodePort (type is ${exp.type})`);
    }
    if (exp.loadBalancerIP && exp.type !== 'LoadBalancer') {
      problems.push(`${field}.loadBalancerIP: only allowed with type LoadBalancer (type is ${exp.type})`);
    }
    for (const [portName, nodePort] of Object.entries(exp.nodePorts ?? {})) {
      if (!svc.ports.some((p) => p.name === portName)) {
        problems.push(`${field}.nodePorts.${portName}: ${name} has no port of that name (ports: ${svc.ports.map((p) => p.name).join(', ')})`);
        continue;
      }
      const other = usedNodePorts.get(nodePort);
      if (other) problems.push(`${field}.nodePorts.${portName}: node port ${nodePort} is already used by ${other}`);
      else usedNodePorts.set(nodePort, `${field}.nodePorts.${portName}`);
    }
    if (exp.type === 'NodePort') {
      // The table's default node ports count too: they are written when none is configured.
      for (const p of svc.ports) {
        if (exp.nodePorts?.[p.name] !== undefined || p.nodePort === undefined) continue;
        const other = usedNodePorts.get(p.nodePort);
        if (other) problems.push(`${field}: its default node port ${p.nodePort} (${p.name}) is already used by ${other}: set ${field}.nodePorts.${p.name}`);
        else usedNodePorts.set(p.nodePort, `${field} (default of ${p.name})`);
      }
    }
  }
  return problems;
}

/**
 * A rule across settings: the top-level sections it reads, and its problems (none: it holds).
 * `applies`: when the rule concerns the configuration at all (a section it needs is set).
 */
interface Rule {
  readonly reads: ReadonlyArray<keyof UyuniConfig>;
  readonly applies?: (c: UyuniConfig) => boolean;
  readonly check: (c: UyuniConfig) => readonly string[];
}

/** What plansOf reads. */
const PLAN_SECTIONS = ['plans', 'migration', 'upgrade', 'proxy', 'nodeServices', 'backup', 'db'] as const;
/** What portFeatures reads: which Services exist. */
const FEATURE_SECTIONS = ['tftp', 'debugJava', 'monitoring', 'hubApi'] as const;

const SECTION_OF_PLAN: Partial<Record<PlanName, keyof UyuniConfig>> = {
  'migrate': 'migration', 'migrate-prepare': 'migration', 'upgrade': 'upgrade', 'proxy': 'proxy', 'node-services': 'nodeServices',
  'backup': 'backup', 'restore': 'backup',
};

/** Names the server pod has volumes of already (a user's extra volume may not take one). */
const SERVER_POD_VOLUMES = new Set<string>(['ca-cert', 'db-ca-cert', 'tls', 'run', 'sys-fs-cgroup', 'mirror', ...KNOWN_VOLUMES.map((v) => v.name)]);

/** Whether the proxy and a server plan would both write into the server's namespace. */
const proxyInServerNamespace = (c: UyuniConfig) => c.proxy!.namespace === c.namespace;

/**
 * The cross checks, in the order their problems are listed (as aws-cdk's validate-queue-props.ts
 * lists a queue's rules). Each message names the field to change.
 */
const RULES: readonly Rule[] = [
  {
    reads: ['restore', 'backup'],
    check: (c) => (c.restore && !c.backup ? ['restore: needs a backup section (backup.claim is where the backups are)'] : []),
  },
  {
    reads: ['migration', 'upgrade'],
    check: (c) => (c.migration && c.upgrade ? ['migration, upgrade: only one of them may be set (a server is either migrated or upgraded)'] : []),
  },
  {
    reads: PLAN_SECTIONS,
    check: (c) => (c.plans ?? []).flatMap((plan, i) => {
      const section = SECTION_OF_PLAN[plan];
      if (plan === 'db-basebackup' && !c.db.archiving?.enabled) return [`plans[${i}]: db-basebackup needs db.archiving.enabled: true (the base backup goes into the WAL archive)`];
      if (plan === 'db-pitr' && !(c.db.archiving?.enabled && c.db.archiving.restoreTo)) return [`plans[${i}]: db-pitr needs db.archiving.enabled: true and db.archiving.restoreTo (the time to restore to)`];
      return section && c[section] === undefined ? [`plans[${i}]: ${plan} needs a ${section} section`] : [];
    }),
  },
  {
    // Node ports are cluster-wide: the server's and the proxy's must not clash either.
    reads: ['services', ...FEATURE_SECTIONS, 'proxy'],
    check: (c) => {
      const used = new Map<number, string>();
      const problems = checkExposure('services', c.services, serverServices(portFeatures(c)), SERVER_SERVICE_NAMES, used);
      if (!c.proxy) return problems;
      const { tftp, ...exposure } = c.proxy.services;
      if (tftp) problems.push('proxy.services.tftp: tftp is always a LoadBalancer Service with ClientIP affinity (use proxy.tftp.hostNetwork to do without it)');
      return [...problems, ...checkExposure('proxy.services', exposure, PROXY_SERVICES, PROXY_SERVICES.map((s) => s.name), used)];
    },
  },
  {
    reads: ['proxy', 'tls'],
    applies: (c) => Boolean(c.proxy?.tls.issuer),
    check: (c) => (c.tls.mode === 'third-party'
      ? ['proxy.tls.issuer: the server has no Issuer uyuni-issuer with tls.mode third-party; create Secret proxy-cert yourself'] : []),
  },
  {
    reads: ['proxy', 'namespace', ...PLAN_SECTIONS],
    applies: (c) => c.proxy !== undefined && proxyInServerNamespace(c),
    check: (c) => {
      if (c.proxy!.tls.issuer) {
        return [`proxy.namespace: must not be the server's namespace ${c.namespace} with proxy.tls.issuer `
          + '(the proxy\'s Services web and salt would replace the server\'s)'];
      }
      const plans = plansOf(c);
      return plans.includes('proxy') && plans.some((p) => SERVER_PLANS.includes(p))
        ? [`proxy.namespace: must not be the server's namespace ${c.namespace} when a server plan and the proxy plan `
          + 'are written (both define Services web, salt and tftp there)'] : [];
    },
  },
  {
    reads: ['ingress', 'services'],
    check: (c) => (c.ingress.type !== 'traefik' && (c.services.salt?.type ?? 'ClusterIP') === 'ClusterIP'
      ? [`services.salt.type: must be LoadBalancer or NodePort with ingress.type ${c.ingress.type} `
        + '(only Traefik routes salt 4505/4506 to a ClusterIP Service; clients cannot reach it otherwise)'] : []),
  },
  {
    reads: ['ingress'],
    check: (c) => (c.ingress.className && c.ingress.type === 'none' ? ['ingress.className: there is no Ingress with ingress.type none'] : []),
  },
  {
    reads: ['server'],
    check: ({ server: s }) => (s.superPrivileged && (s.apparmorProfile || s.selinuxType)
      ? ['server.superPrivileged: cannot be combined with server.apparmorProfile or server.selinuxType (it sets both itself)'] : []),
  },
  {
    reads: ['server'],
    check: ({ server: s }) => (s.mirror && !!s.mirror.claimName === !!s.mirror.hostPath ? ['server.mirror: set exactly one of claimName and hostPath'] : []),
  },
  {
    reads: ['server'],
    check: ({ server: s }) => {
      const problems: string[] = [];
      const extra = new Set<string>();
      for (const [i, v] of s.extraVolumes.entries()) {
        if (SERVER_POD_VOLUMES.has(v.name)) problems.push(`server.extraVolumes[${i}].name: ${v.name} is a volume of the server pod already`);
        else if (extra.has(v.name)) problems.push(`server.extraVolumes[${i}].name: ${v.name} is listed twice`);
        extra.add(v.name);
      }
      s.extraVolumeMounts.forEach((m, i) => {
        if (!extra.has(m.name) && !SERVER_POD_VOLUMES.has(m.name)) problems.push(`server.extraVolumeMounts[${i}].name: no volume ${m.name} (add it to server.extraVolumes)`);
      });
      return problems;
    },
  },
  {
    reads: ['nodeServices'],
    check: (c) => {
      const seen = new Set<string>();
      return (c.nodeServices?.pods ?? []).flatMap((pod, i) => {
        const key = `${pod.namespace}/${pod.name}`;
        const twice = seen.has(key);
        seen.add(key);
        return twice ? [`nodeServices.pods[${i}]: pod ${key} is defined twice`] : [];
      });
    },
  },
];

/** The problems of every rule whose sections are all valid (`invalid`: the sections the schema refused). */
function crossChecks(config: UyuniConfig, invalid: ReadonlySet<string> = new Set()): string[] {
  return RULES.filter((r) => r.reads.every((s) => !invalid.has(s)) && (r.applies?.(config) ?? true)).flatMap((r) => r.check(config));
}
