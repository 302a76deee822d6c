import * as fs from 'fs';
import * as path from 'path';
import { Failure, validate } from 'superstruct';
import { PROXY_SERVICES, serverServices, ServiceSpec } from '../model/ports';
import { SERVER_VOLUMES } from '../model/volumes';
import { configSchema, ExposureConfig, PlanName, UyuniConfig } from './schema';

/**
 * cdk8s bundles its own copy of yaml 2.x to write the manifests; reading the configuration with
 * that same copy spares every synth from loading a second one. Our own dependency is the fallback.
 */
function yamlLib(): typeof import('yaml') {
  try {
    return require(require.resolve('yaml', { paths: [path.dirname(require.resolve('cdk8s'))] }));
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

export function loadConfigFile(file: string): UyuniConfig {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    throw new ConfigError(file, [`cannot be read: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`]);
  }
  return parseConfig(text, file);
}

/** Parses and validates configuration text; throws ConfigError listing every problem found. */
export function parseConfig(text: string, file = DEFAULT_CONFIG_FILE): UyuniConfig {
  const doc = yamlLib().parseDocument(text, { uniqueKeys: true, prettyErrors: false });
  if (doc.errors.length > 0) {
    throw new ConfigError(file, doc.errors.map((e) => `not valid YAML: ${e.message.split('\n')[0]}`));
  }
  const raw: unknown = doc.toJS() ?? {};
  if (typeof raw !== 'object' || Array.isArray(raw)) {
    throw new ConfigError(file, ['the document must be a mapping of settings (see docs/configuration.md)']);
  }
  const [error, config] = validate(raw, configSchema, { coerce: true });
  if (error) {
    throw new ConfigError(file, [...new Set(error.failures().map(describeFailure))]);
  }
  const problems = crossChecks(config);
  if (problems.length > 0) throw new ConfigError(file, problems);
  return config;
}

function fieldName(p: ReadonlyArray<PropertyKey>): string {
  return p.map((k, i) => (typeof k === 'number' ? `[${k}]` : `${i > 0 ? '.' : ''}${String(k)}`)).join('') || '(top level)';
}

/** Our own checks carry their messages (src/config/schema.ts); superstruct's structural ones get ours here. */
function describeFailure(failure: Failure): string {
  const field = fieldName(failure.path);
  if (failure.type === 'never') return `${field}: unknown setting`;
  if (failure.refinement) return `${field}: ${failure.message}`;
  if (failure.value === undefined) return `${field}: is required`;
  if (failure.type === 'object' || failure.type === 'record') return `${field}: must be a mapping of settings`;
  if (failure.type === 'array') return `${field}: must be a list`;
  return `${field}: ${failure.message}`;
}

/** The plans a configuration asks for (explicit `plans`, or derived from its sections). */
export function plansOf(config: UyuniConfig): PlanName[] {
  if (config.plans) return [...new Set(config.plans)];
  const server: PlanName = config.migration ? 'migrate' : config.upgrade ? 'upgrade' : 'install';
  return [server, ...(config.proxy ? ['proxy' as const] : []), ...(config.nodeServices ? ['node-services' as const] : [])];
}

/** Exposure only of Services that exist, node ports only for their ports and NodePort type, no clashes. */
function checkExposure(
  prefix: string, exposure: Record<string, ExposureConfig>, services: readonly ServiceSpec[], usedNodePorts: Map<number, string>,
): string[] {
  const problems: string[] = [];
  for (const [name, exp] of Object.entries(exposure)) {
    const field = `${prefix}.${name}`;
    const svc = services.find((s) => s.name === name);
    if (!svc) {
      problems.push(`${field}: no such Service with this configuration (known: ${services.map((s) => s.name).sort().join(', ')})`);
      continue;
    }
    if (exp.nodePorts && exp.type !== 'NodePort') {
      problems.push(`${field}.nodePorts: only allowed with type NodePort (type is ${exp.type})`);
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
  }
  return problems;
}

function crossChecks(config: UyuniConfig): string[] {
  const problems: string[] = [];
  if (config.migration && config.upgrade) {
    problems.push('migration, upgrade: only one of them may be set (a server is either migrated or upgraded)');
  }
  const needs: Partial<Record<PlanName, keyof UyuniConfig>> = { migrate: 'migration', upgrade: 'upgrade', proxy: 'proxy', 'node-services': 'nodeServices' };
  for (const [i, plan] of (config.plans ?? []).entries()) {
    const section = needs[plan];
    if (section && config[section] === undefined) problems.push(`plans[${i}]: ${plan} needs a ${section} section`);
  }

  // Node ports are cluster-wide: the server's and the proxy's must not clash either.
  const usedNodePorts = new Map<number, string>();
  const server = serverServices({ tftp: config.tftp, debugJava: config.debugJava, hubApi: config.hubApi.replicas > 0 }, config.db.separate);
  problems.push(...checkExposure('services', config.services, server, usedNodePorts));
  if (config.proxy) problems.push(...checkExposure('proxy.services', config.proxy.services, PROXY_SERVICES, usedNodePorts));
  const volumeNames = new Set(SERVER_VOLUMES.map((v) => v.name));
  for (const name of Object.keys(config.volumes.overrides)) {
    if (!volumeNames.has(name)) problems.push(`volumes.overrides.${name}: no such volume (known: ${[...volumeNames].join(', ')})`);
  }
  const podNames = new Set<string>();
  for (const [i, pod] of (config.nodeServices?.pods ?? []).entries()) {
    const key = `${pod.namespace}/${pod.name}`;
    if (podNames.has(key)) problems.push(`nodeServices.pods[${i}]: pod ${key} is defined twice`);
    podNames.add(key);
  }
  return problems;
}
