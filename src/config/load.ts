import * as fs from 'fs';
import * as path from 'path';
import { Failure, validate } from 'superstruct';
import { PROXY_SERVICES, SERVER_SERVICE_NAMES, serverServices, ServiceSpec } from '../model/ports';
import { KNOWN_VOLUMES } from '../model/volumes';
import { configSchema, ExposureConfig, PlanName, REMOVED_SETTINGS, UyuniConfig } from './schema';
import { portFeatures } from './features';

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

/** Bad user input. Every message names the file and the field. Synth exits 2 on it. */
export class ConfigError extends Error {
  constructor(readonly file: string, readonly problems: readonly string[]) {
    super(`${file}: invalid configuration\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

/** The configuration file to read: `$UYUNI_CONFIG`, else uyuni.yaml in `cwd`. */
export function configPath(env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): string {
  return path.resolve(cwd, env.UYUNI_CONFIG || DEFAULT_CONFIG_FILE);
}

/**
 * What a configuration may make synth do, checked before anything bigger is built from it
 * (docs/configuration.md "Limits"): its size in bytes (checked before it is parsed), the depth of
 * its nesting (while it is parsed) and the alias expansions of its YAML (before it is expanded).
 */
export const LIMITS = { bytes: 1024 * 1024, depth: 64, aliases: 64 } as const;

const MIB = `${LIMITS.bytes} bytes (1 MiB)`;

export function loadConfigFile(file: string): UyuniConfig {
  return parseConfig(readBounded(file), file);
}

/** A regular file of at most LIMITS.bytes, read without ever holding more than one byte over that. */
function readBounded(file: string): string {
  let fd: number;
  try {
    // O_NONBLOCK: opening a FIFO must not wait for a writer (it is refused below as not a regular file).
    fd = fs.openSync(file, fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK ?? 0));
  } catch (e) {
    throw new ConfigError(file, [`cannot be read: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`]);
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
 * An alias expands to its anchor's node, and aliases in that node expand in turn: a few lines can
 * stand for billions of nodes. Counts the expansions in document order and names the alias that
 * goes over LIMITS.aliases.
 */
function aliasProblem(Y: Yaml, doc: YamlDocument, at: (offset: number) => string): string | undefined {
  const anchors = new Map<string, unknown>();
  const aliases: Array<{ alias: import('yaml').Alias; source: unknown }> = [];
  Y.visit(doc, {
    Node(_key, node) {
      if (Y.isAlias(node)) aliases.push({ alias: node, source: anchors.get(node.source) });
      else if (node.anchor) anchors.set(node.anchor, node);
    },
  });
  const over = (a: import('yaml').Alias) =>
    `YAML aliases expand to more than ${LIMITS.aliases} nodes at the alias *${a.source} at ${at(a.range?.[0] ?? 0)} (the bound of a configuration)`;
  const unresolved = aliases.find(({ source }) => source === undefined);
  if (unresolved) {
    const a = unresolved.alias;
    return `not valid YAML: the alias *${a.source} at ${at(a.range?.[0] ?? 0)} has no anchor &${a.source} before it`;
  }
  if (aliases.length > LIMITS.aliases) return over(aliases[LIMITS.aliases].alias);
  const sourceOf = new Map(aliases.map(({ alias, source }) => [alias, source]));
  const memo = new Map<unknown, number>();
  const expansions = (node: unknown): number => {
    if (Y.isAlias(node)) return 1 + expansions(sourceOf.get(node));
    if (Y.isPair(node)) return expansions(node.key) + expansions(node.value);
    if (!Y.isCollection(node)) return 0;
    const known = memo.get(node);
    if (known !== undefined) return known;
    memo.set(node, Infinity); // an alias inside the node it refers to
    let n = 0;
    for (const item of node.items) {
      n += expansions(item);
      if (n > LIMITS.aliases) break;
    }
    memo.set(node, n);
    return n;
  };
  let total = 0;
  for (const { alias } of aliases) {
    total += expansions(alias);
    if (total > LIMITS.aliases) return over(alias);
  }
  return undefined;
}

/** Parses and validates configuration text; throws ConfigError listing every problem found. */
export function parseConfig(text: string, file = DEFAULT_CONFIG_FILE): UyuniConfig {
  if (Buffer.byteLength(text) > LIMITS.bytes) throw new ConfigError(file, [`is more than ${MIB}: a configuration may have at most that`]);
  const Y = yamlLib();
  const { doc, problems, at } = parseYaml(Y, text);
  if (problems.length > 0 || !doc) throw new ConfigError(file, problems);
  const aliases = aliasProblem(Y, doc, at);
  if (aliases) throw new ConfigError(file, [aliases]);
  let raw: unknown;
  try {
    raw = doc.toJS({ maxAliasCount: LIMITS.aliases }) ?? {};
  } catch (e) {
    throw new ConfigError(file, [`not valid YAML: ${(e as Error).message}`]);
  }
  return checkConfig(raw, file);
}

/**
 * Validates settings already read (parsed YAML, or a construct's props: `file` then names the
 * construct) against the schema and the cross checks; throws ConfigError listing every problem.
 */
export function checkConfig(raw: unknown, file: string): UyuniConfig {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new ConfigError(file, ['the document must be a mapping of settings (see docs/configuration.md)']);
  }
  const [error, config] = validate(raw, configSchema, { coerce: true });
  if (error) {
    throw new ConfigError(file, [...new Set(error.failures().map(describeFailure))]);
  }
  const crossProblems = crossChecks(config);
  if (crossProblems.length > 0) throw new ConfigError(file, crossProblems);
  return config;
}

function fieldName(p: ReadonlyArray<PropertyKey>): string {
  return p.map((k, i) => (typeof k === 'number' ? `[${k}]` : `${i > 0 ? '.' : ''}${String(k)}`)).join('') || '(top level)';
}

/** Our own checks carry their messages (src/config/schema.ts); superstruct's structural ones get ours here. */
function describeFailure(failure: Failure): string {
  const field = fieldName(failure.path);
  if (failure.type === 'never') return `${field}: ${REMOVED_SETTINGS[field] ?? 'unknown setting'}`;
  if (failure.refinement) return `${field}: ${failure.message}`;
  if (failure.value === undefined) return `${field}: is required`;
  if (failure.type === 'object' || failure.type === 'record') return `${field}: must be a mapping of settings`;
  if (failure.type === 'array') return `${field}: must be a list`;
  return `${field}: ${failure.message}`;
}

/** The plans that write the server's objects into `namespace`. */
const SERVER_PLANS: readonly PlanName[] = ['install', 'migrate', 'migrate-prepare', 'upgrade'];

/** The plans a configuration asks for (explicit `plans`, or derived from its sections). */
export function plansOf(config: UyuniConfig): PlanName[] {
  if (config.plans) return [...new Set(config.plans)];
  const server: PlanName[] = config.migration ? ['migrate', 'migrate-prepare'] : config.upgrade ? ['upgrade'] : ['install'];
  return [...server, ...(config.proxy ? ['proxy' as const] : []), ...(config.nodeServices ? ['node-services' as const] : []),
    ...(config.backup ? ['backup' as const, 'restore' as const] : [])];
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
        : `${field}: no such Service (known: ${[...allNames].sort().join(', ')})`);
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

function checkServer(config: UyuniConfig): string[] {
  const problems: string[] = [];
  const s = config.server;
  if (s.superPrivileged && (s.apparmorProfile || s.selinuxType)) {
    problems.push('server.superPrivileged: cannot be combined with server.apparmorProfile or server.selinuxType (it sets both itself)');
  }
  if (s.mirror && !!s.mirror.claimName === !!s.mirror.hostPath) {
    problems.push('server.mirror: set exactly one of claimName and hostPath');
  }
  const ours = new Set<string>(['ca-cert', 'db-ca-cert', 'tls', 'run', 'sys-fs-cgroup', 'mirror', ...KNOWN_VOLUMES.map((v) => v.name)]);
  const extra = new Set<string>();
  for (const [i, v] of s.extraVolumes.entries()) {
    if (ours.has(v.name)) problems.push(`server.extraVolumes[${i}].name: ${v.name} is a volume of the server pod already`);
    else if (extra.has(v.name)) problems.push(`server.extraVolumes[${i}].name: ${v.name} is listed twice`);
    extra.add(v.name);
  }
  for (const [i, m] of s.extraVolumeMounts.entries()) {
    if (!extra.has(m.name) && !ours.has(m.name)) {
      problems.push(`server.extraVolumeMounts[${i}].name: no volume ${m.name} (add it to server.extraVolumes)`);
    }
  }
  return problems;
}

/** The proxy section: its exposure (tftp has a fixed one) and what issuing its certificate from the server's Issuer needs. */
function checkProxy(config: UyuniConfig, usedNodePorts: Map<number, string>): string[] {
  const proxy = config.proxy!;
  const problems: string[] = [];
  const { tftp, ...exposure } = proxy.services;
  if (tftp) {
    problems.push('proxy.services.tftp: tftp is always a LoadBalancer Service with ClientIP affinity (use proxy.tftp.hostNetwork to do without it)');
  }
  problems.push(...checkExposure('proxy.services', exposure, PROXY_SERVICES, PROXY_SERVICES.map((s) => s.name), usedNodePorts));
  if (proxy.tls.issuer) {
    if (config.tls.mode === 'third-party') {
      problems.push('proxy.tls.issuer: the server has no Issuer uyuni-issuer with tls.mode third-party; create Secret proxy-cert yourself');
    }
    if (proxy.namespace === config.namespace) {
      problems.push(`proxy.namespace: must not be the server's namespace ${config.namespace} with proxy.tls.issuer `
        + '(the proxy\'s Services web and salt would replace the server\'s)');
      return problems;
    }
  }
  const plans = plansOf(config);
  if (proxy.namespace === config.namespace && plans.includes('proxy') && plans.some((p) => SERVER_PLANS.includes(p))) {
    problems.push(`proxy.namespace: must not be the server's namespace ${config.namespace} when a server plan and the proxy plan `
      + 'are written (both define Services web, salt and tftp there)');
  }
  return problems;
}

function crossChecks(config: UyuniConfig): string[] {
  const problems: string[] = [];
  if (config.migration && config.upgrade) {
    problems.push('migration, upgrade: only one of them may be set (a server is either migrated or upgraded)');
  }
  const needs: Partial<Record<PlanName, keyof UyuniConfig>> = {
    'migrate': 'migration', 'migrate-prepare': 'migration', 'upgrade': 'upgrade', 'proxy': 'proxy', 'node-services': 'nodeServices',
    'backup': 'backup', 'restore': 'backup',
  };
  for (const [i, plan] of (config.plans ?? []).entries()) {
    const section = needs[plan];
    if (section && config[section] === undefined) problems.push(`plans[${i}]: ${plan} needs a ${section} section`);
  }

  // Node ports are cluster-wide: the server's and the proxy's must not clash either.
  const usedNodePorts = new Map<number, string>();
  problems.push(...checkExposure('services', config.services, serverServices(portFeatures(config)), SERVER_SERVICE_NAMES, usedNodePorts));
  if (config.proxy) problems.push(...checkProxy(config, usedNodePorts));
  if (config.ingress.type !== 'traefik' && (config.services.salt?.type ?? 'ClusterIP') === 'ClusterIP') {
    problems.push(`services.salt.type: must be LoadBalancer or NodePort with ingress.type ${config.ingress.type} `
      + '(only Traefik routes salt 4505/4506 to a ClusterIP Service; clients cannot reach it otherwise)');
  }
  if (config.ingress.className && config.ingress.type === 'none') {
    problems.push('ingress.className: there is no Ingress with ingress.type none');
  }
  const volumeNames = new Set(KNOWN_VOLUMES.map((v) => v.name));
  for (const name of Object.keys(config.volumes.overrides)) {
    if (!volumeNames.has(name)) problems.push(`volumes.overrides.${name}: no such claim (known: ${[...volumeNames].join(', ')})`);
  }
  problems.push(...checkServer(config));
  if (config.restore && !config.backup) problems.push('restore: needs a backup section (backup.claim is where the backups are)');
  const podNames = new Set<string>();
  for (const [i, pod] of (config.nodeServices?.pods ?? []).entries()) {
    const key = `${pod.namespace}/${pod.name}`;
    if (podNames.has(key)) problems.push(`nodeServices.pods[${i}]: pod ${key} is defined twice`);
    podNames.add(key);
  }
  return problems;
}
