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
  if (failure.type === 'never') return `${field}: ${REMOVED_SETTINGS[field] ?? 'unknown setting'}`;
  if (failure.refinement) return `${field}: ${failure.message}`;
  if (failure.value === undefined) return `${field}: is required`;
  if (failure.type === 'object' || failure.type === 'record') return `${field}: must be a mapping of settings`;
  if (failure.type === 'array') return `${field}: must be a list`;
  return `${field}: ${failure.message}`;
}

/** The plans a configuration asks for (explicit `plans`, or derived from its sections). */
export function plansOf(config: UyuniConfig): PlanName[] {
  if (config.plans) return [...new Set(config.plans)];
  const server: PlanName[] = config.migration ? ['migrate', 'migrate-prepare'] : config.upgrade ? ['upgrade'] : ['install'];
  return [...server, ...(config.proxy ? ['proxy' as const] : []), ...(config.nodeServices ? ['node-services' as const] : [])];
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
    }
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
  const podNames = new Set<string>();
  for (const [i, pod] of (config.nodeServices?.pods ?? []).entries()) {
    const key = `${pod.namespace}/${pod.name}`;
    if (podNames.has(key)) problems.push(`nodeServices.pods[${i}]: pod ${key} is defined twice`);
    podNames.add(key);
  }
  return problems;
}
