/**
 * The cross checks of a configuration: rules across settings that the schema cannot say (exposure
 * of Services that exist, node ports without clashes, the plans' sections agreeing, ...).
 */
import { PROXY_SERVICES, SERVER_SERVICE_NAMES, serverServices, ServiceSpec } from '../model/ports';
import { KNOWN_VOLUMES } from '../model/volumes';
import type { ExposureConfig, PlanName, UyuniConfig } from './schema';
import { portFeatures } from './features';
import { PLAN_SECTIONS, plansOf, SERVER_PLANS } from './plans-of';
import { didYouMean } from './suggest';

const suggestService = (name: string, names: readonly string[]) => {
  const hint = didYouMean(name, names);
  return hint ? `; ${hint}` : '';
};

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

/** What portFeatures reads: which Services exist. */
const FEATURE_SECTIONS = ['tftp', 'debugJava', 'monitoring', 'hubApi'] as const;

const SECTION_OF_PLAN: Partial<Record<PlanName, keyof UyuniConfig>> = {
  'migrate': 'migration', 'migrate-prepare': 'migration', 'upgrade': 'upgrade', 'proxy': 'proxy', 'node-services': 'nodeServices',
  'backup': 'backup', 'restore': 'backup', 'ssl-addca': 'caRotation', 'ssl-rotate': 'caRotation',
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
    reads: ['caRotation', 'migration', 'upgrade'],
    applies: (c) => c.caRotation !== undefined,
    check: (c) => [
      ...(c.migration ? ['caRotation: not with migration (the migrated server keeps the old server\'s CA; rotate it once the migration finished)'] : []),
      ...(c.upgrade?.ca === 'new' ? ['upgrade.ca: must be keep with caRotation (the rotation replaces the CA, with an overlap)'] : []),
    ],
  },
  {
    reads: ['caRotation', 'tls'],
    applies: (c) => c.caRotation !== undefined,
    check: (c) => {
      const r = c.caRotation!;
      if (r.ca === 'secret' && !r.secret) return ['caRotation.secret: needed with caRotation.ca secret (the Secret that holds the new CA)'];
      if (r.ca === 'generated' && r.secret) return ['caRotation.secret: only with caRotation.ca secret (a generated CA is made by cert-manager)'];
      if (c.tls.mode === 'third-party' && r.ca !== 'secret') {
        return ['caRotation.ca: must be secret with tls.mode third-party (no cert-manager issues the certificates: name the new CA\'s Secret)'];
      }
      const addca = (c.plans ?? []).indexOf('ssl-addca');
      if (r.emergency && addca >= 0) return [`plans[${addca}]: ssl-addca has no place with caRotation.emergency (dist/ssl-rotate/ makes the new CA and switches at once)`];
      if (c.tls.mode === 'third-party' && r.emergency) {
        return ['caRotation.emergency: not with tls.mode third-party (the new certificates are yours to put into Secrets uyuni-cert and db-cert; run dist/ssl-rotate/ after that)'];
      }
      return [];
    },
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
export function crossChecks(config: UyuniConfig, invalid: ReadonlySet<string> = new Set()): string[] {
  return RULES.filter((r) => r.reads.every((s) => !invalid.has(s)) && (r.applies?.(config) ?? true)).flatMap((r) => r.check(config));
}
