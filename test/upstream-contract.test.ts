/**
 * The upstream contract: what the official server-helm chart 2026.08 (and the images and tools
 * it goes with) renders or expects, pinned on the objects uyuni-cdk synthesizes from the
 * equivalent configuration. One `describe` per upstream source, one `it` per fact. Where we
 * decided to differ, the test pins our form and says so (docs/upstream.md, "Decisions"); where
 * we differ without such a decision, the test is `it.failing` and names the deviation, so it
 * turns red the day the code follows upstream and has to become a plain `it`.
 *
 * Sources are cited as in docs/upstream.md: repository, file, commit. "R2026.8" is the
 * `helm template` output of registry.opensuse.org/uyuni/server-helm:2026.8.0 with default
 * values, as published in AkashKumar7902/zero-to-uyuni assets/uyuni.yaml.prerendered @ 6b541b7d.
 */
import { defaultConfigWith, podSpec, SynthesizedPlan, synthYaml } from './helpers/synth';
import type { K8sObject } from './helpers/validate';
import { ANNOTATIONS } from '../src/plan/types';

/** An object's annotations without the plan contract's own (the Argo CD sync wave every object carries). */
function upstreamAnnotations(o: K8sObject): Record<string, string> {
  const { [ANNOTATIONS.syncWave]: _wave, ...rest } = (o.metadata.annotations ?? {}) as Record<string, string>;
  return rest;
}

// --- synthesis, once per configuration ----------------------------------------------------

type Plans = ReturnType<typeof synthYaml>;
const cache = new Map<string, Plans>();
/** Every plan of the default configuration with `changes` on top (undefined deletes a key). */
function synth(changes: Record<string, unknown> = {}): Plans {
  const key = JSON.stringify(changes, (_k, v) => (v === undefined ? '<deleted>' : v));
  let plans = cache.get(key);
  if (!plans) {
    plans = synthYaml(defaultConfigWith(changes));
    cache.set(key, plans);
  }
  return plans;
}
const install = (changes: Record<string, unknown> = {}): SynthesizedPlan => synth(changes).install;

const UPGRADE = { upgrade: { postgresql: { from: 16 } } };
const MIGRATION = {
  tls: { mode: 'migrated' },
  migration: { source: { fqdn: 'old-server.example.com' }, postgresql: { from: 14 } },
};
const FQDN = 'uyuni.example.com';
const NS = 'uyuni';

// --- reading objects ----------------------------------------------------------------------

const all = (p: SynthesizedPlan, kind: string) => p.objects.filter((o) => o.kind === kind);
const names = (p: SynthesizedPlan, kind: string) => all(p, kind).map((o) => o.metadata.name);
const has = (p: SynthesizedPlan, kind: string, name: string) => p.objects.some((o) => o.kind === kind && o.metadata.name === name);
const container = (o: K8sObject, name: string): any => {
  const found = [...(podSpec(o).initContainers ?? []), ...podSpec(o).containers].find((c: any) => c.name === name);
  if (!found) throw new Error(`no container ${name} in ${o.kind} ${o.metadata.name}`);
  return found;
};
const serverOf = (p: SynthesizedPlan) => p.find('Deployment', 'uyuni');
const uyuniOf = (p: SynthesizedPlan) => container(serverOf(p), 'uyuni');
const dbOf = (p: SynthesizedPlan) => p.find('Deployment', 'db');

/** An env var as one string: `NAME=value`, `NAME<-secret:name/key`, `NAME<-configmap:name/key`, or `NAME` (no value). */
function envLine(e: any): string {
  if (e.valueFrom?.secretKeyRef) return `${e.name}<-secret:${e.valueFrom.secretKeyRef.name}/${e.valueFrom.secretKeyRef.key}`;
  if (e.valueFrom?.configMapKeyRef) return `${e.name}<-configmap:${e.valueFrom.configMapKeyRef.name}/${e.valueFrom.configMapKeyRef.key}`;
  if (e.valueFrom) return `${e.name}<-${JSON.stringify(e.valueFrom)}`;
  return e.value === undefined ? e.name : `${e.name}=${e.value}`;
}
const envLines = (c: any): string[] => (c.env ?? []).map(envLine);
/** A mount as one string: `name -> path [subPath] (ro)`. */
const mountLine = (m: any) => `${m.name} -> ${m.mountPath}${m.subPath ? ` [${m.subPath}]` : ''}${m.readOnly ? ' (ro)' : ''}`;
const containerPorts = (c: any): number[] => (c.ports ?? []).map((p: any) => p.containerPort).sort((a: number, b: number) => a - b);
const volume = (o: K8sObject, name: string): any => {
  const found = (podSpec(o).volumes ?? []).find((v: any) => v.name === name);
  if (!found) throw new Error(`no volume ${name} in ${o.kind} ${o.metadata.name}`);
  return found;
};
/** `name port/protocol->targetPort` for each port of a Service. */
const servicePorts = (s: K8sObject) => s.spec.ports.map((p: any) => `${p.name} ${p.port}/${p.protocol}->${p.targetPort}`);
const ingressPaths = (i: K8sObject): string[] => i.spec.rules.flatMap((r: any) => r.http.paths.map(
  (p: any) => `${p.path} ${p.pathType} ${p.backend.service.name}:${p.backend.service.port.number}`,
));
const traefikAnnotations = (o: K8sObject) => Object.fromEntries(
  Object.entries(o.metadata.annotations ?? {}).filter(([k]) => k.startsWith('traefik.ingress.kubernetes.io/')),
);
const requirement = (p: SynthesizedPlan, name: string) => {
  const found = p.plan.steps.flatMap((s) => s.requires).find((r) => r.name === name);
  if (!found) throw new Error(`no requirement ${name} in plan ${p.plan.name}`);
  return found;
};

// The chart's lists, written out here (not taken from src/): a change in src/ has to show here.

/** server.yaml @ 18abb310: the main container's mounts, in order (ca-cert/db-ca-cert subPath files; tls, run, cgroup). */
const SERVER_MOUNTS = [
  'var-cobbler -> /var/lib/cobbler',
  'var-search -> /var/lib/rhn/search',
  'var-salt -> /var/lib/salt',
  'var-cache -> /var/cache',
  'var-spacewalk -> /var/spacewalk',
  'var-log -> /var/log',
  'srv-salt -> /srv/salt',
  'srv-www -> /srv/www/',
  'srv-tftpboot -> /srv/tftpboot',
  'srv-formulametadata -> /srv/formula_metadata',
  'srv-pillar -> /srv/pillar',
  'srv-susemanager -> /srv/susemanager',
  'srv-spacewalk -> /srv/spacewalk',
  'ca-certs -> /etc/pki/trust/anchors/',
  'run-salt-master -> /run/salt/master',
  'etc-apache2 -> /etc/apache2',
  'etc-systemd-multi -> /etc/systemd/system/multi-user.target.wants',
  'etc-systemd-sockets -> /etc/systemd/system/sockets.target.wants',
  'etc-salt -> /etc/salt',
  'etc-tomcat -> /etc/tomcat',
  'etc-cobbler -> /etc/cobbler',
  'etc-sysconfig -> /etc/sysconfig',
  'etc-postfix -> /etc/postfix',
  'etc-sssd -> /etc/sssd',
  'etc-rhn -> /etc/rhn',
  'ca-cert -> /etc/pki/trust/anchors/LOCAL-RHN-ORG-TRUSTED-SSL-CERT [ca.crt] (ro)',
  'ca-cert -> /usr/share/susemanager/salt/certs/RHN-ORG-TRUSTED-SSL-CERT [ca.crt] (ro)',
  'ca-cert -> /srv/www/htdocs/pub/RHN-ORG-TRUSTED-SSL-CERT [ca.crt] (ro)',
  'db-ca-cert -> /etc/pki/trust/anchors/DB-RHN-ORG-TRUSTED-SSL-CERT [ca.crt] (ro)',
  'tls -> /etc/pki/',
  'run -> /run',
  'sys-fs-cgroup -> /sys/fs/cgroup',
];
/** The claims among them (server.yaml @ 18abb310: each a PVC of the same name). */
const SERVER_CLAIMS = SERVER_MOUNTS.slice(0, 25).map((m) => m.split(' -> ')[0]);

/** pvcs.yaml @ 96c86b96 defaults, with R2026.8's ca-certs (10Mi) and without root. */
const CLAIM_SIZES: Record<string, string> = {
  'etc-apache2': '1Mi',
  'etc-cobbler': '1Mi',
  'etc-postfix': '1Mi',
  'etc-rhn': '1Mi',
  'etc-salt': '1Mi',
  'etc-sssd': '1Mi',
  'etc-sysconfig': '20Mi',
  'etc-systemd-multi': '1Mi',
  'etc-systemd-sockets': '1Mi',
  'etc-tomcat': '1Mi',
  'run-salt-master': '10Mi',
  'srv-formulametadata': '10Mi',
  'srv-pillar': '10Mi',
  'srv-salt': '10Mi',
  'srv-spacewalk': '10Mi',
  'srv-susemanager': '1Mi',
  'srv-tftpboot': '300Mi',
  'srv-www': '100Gi',
  'var-cache': '10Gi',
  'var-cobbler': '10Mi',
  'var-log': '2Gi',
  'var-pgsql18': '50Gi',
  'var-salt': '10Mi',
  'var-search': '10Gi',
  'var-spacewalk': '100Gi',
  'ca-certs': '10Mi',
};

/** server.yaml @ 18abb310: the paths init-volumes seeds (`chown/chmod --reference`, copy when empty). */
const SEEDED_PATHS = [
  '/var/lib/cobbler', '/var/lib/rhn/search', '/var/lib/salt', '/var/cache', '/var/log', '/srv/salt', '/srv/www', '/srv/tftpboot',
  '/srv/formula_metadata', '/srv/pillar', '/srv/susemanager', '/srv/spacewalk', '/etc/apache2', '/etc/rhn',
  '/etc/systemd/system/multi-user.target.wants', '/etc/systemd/system/sockets.target.wants', '/etc/salt', '/etc/tomcat',
  '/etc/cobbler', '/etc/sysconfig', '/etc/postfix', '/etc/sssd',
];

/** R2026.8 / ingress_test @ 017664fc: the paths served over plain HTTP. */
const R2026_8_NOSSL_PATHS = [
  '/pub', '/rhn/kickstart/DownloadFile', '/rhn/common/DownloadFile', '/rhn/rpc/api', '/rpc/api', '/rhn/errors', '/rhn/ty/TinyUrl',
  '/rhn/websocket', '/rhn/metrics', '/cobbler_api', '/cblr', '/httpboot', '/images', '/cobbler', '/os-images', '/tftp', '/docs',
];
/**
 * Since then /cobbler_api is gone from the public interface (uyuni#12486, CVE-2026-71400): the
 * image's 10-cobbler_api_localhost.sh @ a4e5bb57 answers it from 127.0.0.1 and ::1 only
 * (`Require ip 127.0.0.1 ::1`), and server-helm.changes.oholecek.no_cobbler_api @ eeede693
 * removes it from the chart.
 */
const NOSSL_PATHS = R2026_8_NOSSL_PATHS.filter((x) => x !== '/cobbler_api');
/** R2026.8: the exporter paths and their backends. */
const EXPORTER_PATHS = [
  '/postgresql-exporter Prefix tomcat-internal:9187',
  '/node-exporter Prefix tomcat-internal:9100',
  '/tasko-exporter Prefix taskomatic-internal:9800',
  '/tasko-jmx Prefix taskomatic-internal:5557',
  '/tomcat-jmx Prefix tomcat-internal:5556',
];
const T = 'traefik.ingress.kubernetes.io/';

// --- images --------------------------------------------------------------------------------

describe('server-helm templates/_helpers.tpl @ a850e9da (uyuni.image) and tests/deployment_test.yaml @ 18abb310 (image references)', () => {
  it('builds <repository>/<name>:<tag> from the chart default repository registry.opensuse.org/uyuni and the 2026.08 tag', () => {
    expect(uyuniOf(install()).image).toBe('registry.opensuse.org/uyuni/server:2026.08');
    expect(container(dbOf(install()), 'db').image).toBe('registry.opensuse.org/uyuni/server-postgresql:2026.08');
  });

  it('uses the configured registry for every component', () => {
    const p = install({ images: { registry: 'registry.example.org/mirror/uyuni' } });
    expect(uyuniOf(p).image).toBe('registry.example.org/mirror/uyuni/server:2026.08');
    expect(container(dbOf(p), 'db').image).toBe('registry.example.org/mirror/uyuni/server-postgresql:2026.08');
  });

  it('replaces <repository>/<name> by a component image and the global tag by a component tag ("should override image")', () => {
    const p = install({ images: { components: { server: { image: 'my-custom-registry/uyuni-server', tag: '5.0.0' }, db: { tag: '2026.09' } } } });
    expect(uyuniOf(p).image).toBe('my-custom-registry/uyuni-server:5.0.0');
    expect(container(dbOf(p), 'db').image).toBe('registry.opensuse.org/uyuni/server-postgresql:2026.09');
  });

  it('applies the pull policy (default IfNotPresent) to every container', () => {
    for (const c of [...podSpec(serverOf(install())).initContainers, uyuniOf(install()), container(dbOf(install()), 'db')]) {
      expect(c.imagePullPolicy).toBe('IfNotPresent');
    }
    expect(uyuniOf(install({ images: { pullPolicy: 'Always' } })).imagePullPolicy).toBe('Always');
  });

  it('adds imagePullSecrets only when a registry secret is set ("should use the registry credentials if set")', () => {
    expect(podSpec(serverOf(install())).imagePullSecrets).toBeUndefined();
    expect(podSpec(dbOf(install())).imagePullSecrets).toBeUndefined();
    const p = install({ images: { pullSecret: 'mycreds' } });
    expect(podSpec(serverOf(p)).imagePullSecrets).toEqual([{ name: 'mycreds' }]);
    expect(podSpec(dbOf(p)).imagePullSecrets).toEqual([{ name: 'mycreds' }]);
  });

  it('rejects an empty repository, as the helper fails with "The repository value is required!"', () => {
    expect(() => synthYaml(defaultConfigWith({ images: { registry: '' } }))).toThrow(/images\.registry/);
  });
});

describe('server-helm optional components: hub.yaml @ c19024a5, coco.yaml @ c19024a5, tftp.yaml @ c19024a5 (image names)', () => {
  const p = install({ hubApi: { replicas: 1 }, coco: { replicas: 1 }, tftp: { enabled: true } });
  const imageOfDeployment = (name: string) => podSpec(p.find('Deployment', name)).containers[0].image;

  it('runs the hub XML-RPC API from server-hub-xmlrpc-api', () => {
    expect(imageOfDeployment('uyuni-hub-xmlrpc')).toBe('registry.opensuse.org/uyuni/server-hub-xmlrpc-api:2026.08');
  });

  it('runs the attestation from server-attestation', () => {
    expect(imageOfDeployment('uyuni-coco-attestation')).toBe('registry.opensuse.org/uyuni/server-attestation:2026.08');
  });

  it('runs TFTP from shared-tftpd', () => {
    expect(imageOfDeployment('tftp')).toBe('registry.opensuse.org/uyuni/shared-tftpd:2026.08');
  });

  it('honours a component tag for them too', () => {
    const q = install({ hubApi: { replicas: 1 }, images: { components: { hubApi: { tag: '1.2.3' } } } });
    expect(podSpec(q.find('Deployment', 'uyuni-hub-xmlrpc')).containers[0].image).toBe('registry.opensuse.org/uyuni/server-hub-xmlrpc-api:1.2.3');
  });
});

// --- the server Deployment ------------------------------------------------------------------

describe('server-helm templates/server.yaml @ 18abb310 (Deployment uyuni)', () => {
  const p = install();
  const d = serverOf(p);
  const c = uyuniOf(p);

  it('is an apps/v1 Deployment uyuni labelled component server, part-of uyuni, selected by both', () => {
    expect(d.apiVersion).toBe('apps/v1');
    expect(d.metadata.namespace).toBe(NS);
    expect(d.metadata.labels).toMatchObject({ 'app.kubernetes.io/component': 'server', 'app.kubernetes.io/part-of': 'uyuni' });
    expect(d.spec.selector.matchLabels).toEqual({ 'app.kubernetes.io/component': 'server', 'app.kubernetes.io/part-of': 'uyuni' });
    expect(d.spec.template.metadata.labels).toMatchObject(d.spec.selector.matchLabels);
  });

  it('runs one replica with the Recreate strategy', () => {
    expect(d.spec.replicas).toBe(1);
    expect(d.spec.strategy).toEqual({ type: 'Recreate' });
  });

  it('has no hostname, subdomain, hostAliases, hostNetwork nor pod-level securityContext', () => {
    const spec = podSpec(d);
    for (const key of ['hostname', 'subdomain', 'hostAliases', 'hostNetwork', 'securityContext']) expect(spec).not.toHaveProperty(key);
  });

  it('has one container uyuni from the server image, without command or args (the image CMD /docker-entrypoint-init runs)', () => {
    expect(podSpec(d).containers.map((x: any) => x.name)).toEqual(['uyuni']);
    expect(c.image).toBe('registry.opensuse.org/uyuni/server:2026.08');
    expect(c).not.toHaveProperty('command');
    expect(c).not.toHaveProperty('args');
  });

  it('sets the environment in the chart\'s order and with its values (default values)', () => {
    expect(envLines(c)).toEqual([
      'container=oci',
      'TZ=Etc/UTC',
      'ADMIN_USER<-secret:admin-credentials/username',
      'ADMIN_PASS<-secret:admin-credentials/password',
      'MANAGER_USER<-secret:db-credentials/username',
      'MANAGER_PASS<-secret:db-credentials/password',
      'REPORT_DB_USER<-secret:reportdb-credentials/username',
      'REPORT_DB_PASS<-secret:reportdb-credentials/password',
      'MANAGER_DB_NAME=susemanager',
      'MANAGER_DB_HOST=db',
      'MANAGER_DB_CA_CERT=/etc/pki/trust/anchors/DB-RHN-ORG-TRUSTED-SSL-CERT',
      'MANAGER_DB_PORT=5432',
      'EXTERNALDB_PROVIDER',
      'ISS_PARENT',
      'REPORT_DB_NAME=reportdb',
      'REPORT_DB_HOST=reportdb',
      'REPORT_DB_CA_CERT=/etc/pki/trust/anchors/DB-RHN-ORG-TRUSTED-SSL-CERT',
      'REPORT_DB_PORT=5432',
      'MANAGER_ADMIN_EMAIL<-configmap:uyuni-config/email',
      'MANAGER_MAIL_FROM<-configmap:uyuni-config/email',
      'UYUNI_HOSTNAME<-configmap:uyuni-config/fqdn',
    ]);
  });

  it('writes the ports as strings and leaves EXTERNALDB_PROVIDER and ISS_PARENT without a value', () => {
    const byName = Object.fromEntries(c.env.map((e: any) => [e.name, e]));
    expect(byName.MANAGER_DB_PORT.value).toStrictEqual('5432');
    expect(byName.REPORT_DB_PORT.value).toStrictEqual('5432');
    expect(byName.EXTERNALDB_PROVIDER).toEqual({ name: 'EXTERNALDB_PROVIDER' });
    expect(byName.ISS_PARENT).toEqual({ name: 'ISS_PARENT' });
  });

  it('reads the credentials from non-optional Secret keys (optional: false)', () => {
    for (const e of c.env.filter((x: any) => x.valueFrom?.secretKeyRef)) expect(e.valueFrom.secretKeyRef.optional ?? false).toBe(false);
  });

  it('puts MIRROR_PATH after TZ, then DEBUG_JAVA, SCC_USER/SCC_PASS and SYSTEMD_LOG_* at the end, with tty, when configured', () => {
    const q = install({
      debugJava: true,
      server: { mirror: { claimName: 'mirror-claim' }, sccSecret: 'myscccreds', systemdLogLevel: 'debug' },
    });
    const lines = envLines(uyuniOf(q));
    expect(lines.slice(0, 3)).toEqual(['container=oci', 'TZ=Etc/UTC', 'MIRROR_PATH=/mirror']);
    expect(lines.slice(lines.indexOf('UYUNI_HOSTNAME<-configmap:uyuni-config/fqdn'))).toEqual([
      'UYUNI_HOSTNAME<-configmap:uyuni-config/fqdn',
      'DEBUG_JAVA=true',
      'SCC_USER<-secret:myscccreds/username',
      'SCC_PASS<-secret:myscccreds/password',
      'SYSTEMD_LOG_TARGET=console',
      'SYSTEMD_LOG_LEVEL=debug',
    ]);
    expect(uyuniOf(q).tty).toBe(true);
    expect(c).not.toHaveProperty('tty');
  });

  it('sets none of NO_SSL, UYUNI_FQDN, MANAGER_ENABLE_TFTP, DEBUG_LONG_START, RUN_REINDEX, RUN_SCHEMA_UPDATE, MIGRATION', () => {
    const every = install({ debugJava: true, tftp: { enabled: true }, server: { sccSecret: 'scc', systemdLogLevel: 'info' } });
    for (const name of ['NO_SSL', 'UYUNI_FQDN', 'MANAGER_ENABLE_TFTP', 'DEBUG_LONG_START', 'RUN_REINDEX', 'RUN_SCHEMA_UPDATE', 'MIGRATION']) {
      expect(uyuniOf(every).env.map((e: any) => e.name)).not.toContain(name);
      expect(uyuniOf(p).env.map((e: any) => e.name)).not.toContain(name);
    }
  });

  it('stops the services before the pod goes: preStop /bin/sh -c "spacewalk-service stop"', () => {
    expect(c.lifecycle).toEqual({ preStop: { exec: { command: ['/bin/sh', '-c', 'spacewalk-service stop'] } } });
  });

  it('gives the stop 180 s, as uyuni-tools serviceTemplate.go\'s TimeoutStopSec=180 (the chart leaves 30 s; decision n)', () => {
    expect(podSpec(d).terminationGracePeriodSeconds).toBe(180);
  });

  it('has the startup probe /usr/bin/startup-check.sh every 10 s, timeout 5 s, 3600 failures (max 10 h)', () => {
    expect(c.startupProbe).toEqual({ exec: { command: ['/usr/bin/startup-check.sh'] }, periodSeconds: 10, timeoutSeconds: 5, failureThreshold: 3600 });
  });

  it('has the liveness probe /usr/bin/liveness-check.sh every 60 s, timeout 5 s, 5 failures', () => {
    expect(c.livenessProbe).toEqual({ exec: { command: ['/usr/bin/liveness-check.sh'] }, timeoutSeconds: 5, failureThreshold: 5, periodSeconds: 60 });
  });

  it('has the readiness probe GET /rhn/manager/api/api/getVersion on 80 over HTTP, every 10 s after 120 s', () => {
    expect(c.readinessProbe).toEqual({
      httpGet: { path: '/rhn/manager/api/api/getVersion', port: 80, scheme: 'HTTP' },
      periodSeconds: 10,
      successThreshold: 1,
      initialDelaySeconds: 120,
    });
  });

  it('opens the container ports 80, 4505, 4506, 25151, 9100 and the monitoring ports 5556, 5557, 9187, 9800, numbers only', () => {
    expect(containerPorts(c)).toEqual([80, 4505, 4506, 5556, 5557, 9100, 9187, 9800, 25151]);
    for (const port of c.ports) expect(Object.keys(port)).toEqual(['containerPort']);
  });

  it('adds the Java debug ports 8001, 8002, 8003 with debugJava (exposeJavaDebug)', () => {
    expect(containerPorts(uyuniOf(install({ debugJava: true })))).toEqual([80, 4505, 4506, 5556, 5557, 8001, 8002, 8003, 9100, 9187, 9800, 25151]);
  });

  it('drops the monitoring ports with monitoring: false (enableMonitoring: false), keeping 9100', () => {
    expect(containerPorts(uyuniOf(install({ monitoring: false })))).toEqual([80, 4505, 4506, 9100, 25151]);
  });

  it('never opens 443, 69 or 5432 on the server, whatever is enabled', () => {
    const every = install({ debugJava: true, tftp: { enabled: true }, hubApi: { replicas: 1 } });
    for (const q of [p, every]) {
      for (const port of [443, 69, 5432]) expect(containerPorts(uyuniOf(q))).not.toContain(port);
    }
  });

  it('mounts every volume of the chart at its path, in the chart\'s order, with the CA files as read-only subPath ca.crt', () => {
    expect(c.volumeMounts.map(mountLine)).toEqual(SERVER_MOUNTS);
  });

  it('mounts neither /root nor /var/lib/pgsql (no root claim, PostgreSQL runs in Deployment db)', () => {
    const paths = c.volumeMounts.map((m: any) => m.mountPath.replace(/\/$/, ''));
    expect(paths).not.toContain('/root');
    expect(paths.filter((x: string) => x.startsWith('/var/lib/pgsql'))).toEqual([]);
  });

  it('backs each claim mount by the PVC of the same name', () => {
    for (const name of SERVER_CLAIMS) expect(volume(d, name)).toEqual({ name, persistentVolumeClaim: { claimName: name } });
  });

  it('mounts Secret uyuni-cert at /etc/pki/ with tls.crt -> tls/certs/spacewalk.crt and tls.key -> tls/private/spacewalk.key mode 0400', () => {
    expect(volume(d, 'tls')).toEqual({
      name: 'tls',
      secret: {
        secretName: 'uyuni-cert',
        defaultMode: 420,
        items: [
          { key: 'tls.crt', path: 'tls/certs/spacewalk.crt' },
          { key: 'tls.key', path: 'tls/private/spacewalk.key', mode: 256 },
        ],
      },
    });
  });

  it('gives the CA volumes ca-cert and db-ca-cert key ca.crt, mode 420 (ours: from the issued Secrets, decision b)', () => {
    expect(volume(d, 'ca-cert')).toEqual({ name: 'ca-cert', secret: { secretName: 'uyuni-cert', defaultMode: 420, items: [{ key: 'ca.crt', path: 'ca.crt' }] } });
    expect(volume(d, 'db-ca-cert')).toEqual({ name: 'db-ca-cert', secret: { secretName: 'db-cert', defaultMode: 420, items: [{ key: 'ca.crt', path: 'ca.crt' }] } });
  });

  it('has /run as a Memory emptyDir of 256Mi and no other tmpfs, no /tmp volume', () => {
    expect(volume(d, 'run')).toEqual({ name: 'run', emptyDir: { medium: 'Memory', sizeLimit: '256Mi' } });
    expect(podSpec(d).volumes.filter((v: any) => v.emptyDir?.medium === 'Memory').map((v: any) => v.name)).toEqual(['run']);
    expect(c.volumeMounts.map((m: any) => m.mountPath)).not.toContain('/tmp');
  });

  it('gives /sys/fs/cgroup an emptyDir, never the host\'s cgroup (the entrypoint mounts cgroup2 there)', () => {
    expect(volume(d, 'sys-fs-cgroup')).toEqual({ name: 'sys-fs-cgroup', emptyDir: {} });
    expect(podSpec(d).volumes.filter((v: any) => v.hostPath)).toEqual([]);
  });

  it('mounts a mirror claim or node path at /mirror', () => {
    const claim = serverOf(install({ server: { mirror: { claimName: 'mirror-claim' } } }));
    expect(volume(claim, 'mirror')).toEqual({ name: 'mirror', persistentVolumeClaim: { claimName: 'mirror-claim' } });
    expect(container(claim, 'uyuni').volumeMounts.map(mountLine)).toEqual([...SERVER_MOUNTS, 'mirror -> /mirror']);
    const node = serverOf(install({ server: { mirror: { hostPath: '/srv/mirror' } } }));
    expect(volume(node, 'mirror').hostPath.path).toBe('/srv/mirror');
  });

  it('appends server.extraVolumes and server.extraVolumeMounts ("should render extra server volumes and volume mounts")', () => {
    const q = serverOf(install({
      server: {
        extraVolumes: [{ name: 'uyuni-bench-source', persistentVolumeClaim: { claimName: 'uyuni-bench-source' } }],
        extraVolumeMounts: [{ name: 'uyuni-bench-source', mountPath: '/uyuni-bench-source', readOnly: true }],
      },
    }));
    expect(podSpec(q).volumes.at(-1)).toEqual({ name: 'uyuni-bench-source', persistentVolumeClaim: { claimName: 'uyuni-bench-source' } });
    expect(container(q, 'uyuni').volumeMounts.at(-1)).toEqual({ name: 'uyuni-bench-source', mountPath: '/uyuni-bench-source', readOnly: true });
  });
});

describe('server-helm tests/security_test.yaml @ f5217a8e and templates/server.yaml @ 18abb310 (confinement of container uyuni)', () => {
  const ctx = (server: Record<string, unknown>) => uyuniOf(install({ server })).securityContext;

  it('renders the minimal options by default: SYS_ADMIN, SELinux level s0, no spc_t, no AppArmor, not privileged', () => {
    expect(ctx({})).toEqual({ capabilities: { add: ['SYS_ADMIN'] }, seLinuxOptions: { level: 's0' } });
  });

  it('sets SELinux type spc_t with superPrivileged', () => {
    expect(ctx({ superPrivileged: true })).toMatchObject({ capabilities: { add: ['SYS_ADMIN'] }, seLinuxOptions: { level: 's0', type: 'spc_t' } });
    expect(ctx({ superPrivileged: true }).privileged ?? false).toBe(false);
  });

  it('sets the SELinux type server.selinuxType (e.g. uyuni_container_t)', () => {
    expect(ctx({ selinuxType: 'uyuni_container_t' })).toEqual({ capabilities: { add: ['SYS_ADMIN'] }, seLinuxOptions: { level: 's0', type: 'uyuni_container_t' } });
  });

  // The chart writes securityContext.appArmorProfile, a Kubernetes 1.30 field; ours is the pod
  // annotation that 1.28 reads (decision l). Both name the same profile.
  const AA = 'container.apparmor.security.beta.kubernetes.io/uyuni';
  const podAnnotations = (server: Record<string, unknown>) => serverOf(install({ server })).spec.template.metadata.annotations;

  it('sets AppArmor Unconfined with superPrivileged ("should render the super privileged options"), as the 1.28 pod annotation (decision l)', () => {
    expect(podAnnotations({ superPrivileged: true })).toEqual({ [AA]: 'unconfined' });
    expect(ctx({ superPrivileged: true })).not.toHaveProperty('appArmorProfile');
  });

  it('sets the Localhost profile server.apparmorProfile ("should render the AppArmor profile"), as the 1.28 pod annotation (decision l)', () => {
    expect(podAnnotations({ apparmorProfile: 'test-prof' })).toEqual({ [AA]: 'localhost/test-prof' });
    expect(ctx({ apparmorProfile: 'test-prof' })).not.toHaveProperty('appArmorProfile');
  });

  it('sets no AppArmor profile by default or with only an SELinux type', () => {
    expect(podAnnotations({})).toBeUndefined();
    expect(podAnnotations({ selinuxType: 'uyuni_container_t' })).toBeUndefined();
  });

  it('does not set spc_t with only an AppArmor profile', () => {
    expect(ctx({ apparmorProfile: 'test-prof' }).seLinuxOptions).toEqual({ level: 's0' });
  });

  it('refuses superPrivileged together with an AppArmor profile or SELinux type (superPrivileged sets both)', () => {
    expect(() => synthYaml(defaultConfigWith({ server: { superPrivileged: true, apparmorProfile: 'p' } }))).toThrow(/superPrivileged/);
  });
});

describe('server-helm templates/server.yaml @ 18abb310 (init containers of Deployment uyuni)', () => {
  const d = serverOf(install());
  const initVolumes = container(d, 'init-volumes');
  const dbWaiter = container(d, 'db-waiter');
  const script = (c: any): string => c.command[c.command.length - 1];

  it('runs init-volumes, then db-waiter, and no setup-waiter', () => {
    expect(podSpec(d).initContainers.map((c: any) => c.name)).toEqual(['init-volumes', 'db-waiter']);
  });

  it('runs both from the server image as sh -c <script>', () => {
    for (const c of [initVolumes, dbWaiter]) {
      expect(c.image).toBe('registry.opensuse.org/uyuni/server:2026.08');
      expect(c.command[0]).toBe('sh');
      expect(c.command[c.command.length - 2]).toBe('-c');
    }
  });

  it('seeds exactly the chart\'s paths (not var-spacewalk, ca-certs, run-salt-master; no /root, no /var/lib/pgsql)', () => {
    const paths = initVolumes.env.find((e: any) => e.name === 'VOLUME_PATHS').value.split(' ').map((x: string) => x.replace(/\/$/, ''));
    expect([...paths].sort()).toEqual([...SEEDED_PATHS].sort());
  });

  it('mounts every server claim at /mnt<path>, var-spacewalk, ca-certs and run-salt-master included', () => {
    expect(initVolumes.volumeMounts.map(mountLine)).toEqual(SERVER_MOUNTS.slice(0, 25).map((m) => m.replace(' -> ', ' -> /mnt')));
  });

  it('gives each claim the owner and mode of the image path, and the image content when empty', () => {
    expect(script(initVolumes)).toContain('chown --reference="$path" "$target"');
    expect(script(initVolumes)).toContain('chmod --reference="$path" "$target"');
    // The chart's test is `ls -A`; ours differs on purpose: a claim with nothing but an ext4
    // volume's lost+found is empty too (docs/flows.md, "ext4 volumes").
    expect(script(initVolumes)).toMatch(/find "\$target" -mindepth 1 -maxdepth 1 ! -name lost\+found[\s\S]*cp -a "\$path\/\." "\$target\/"/);
  });

  it('runs init-volumes with SELinux level s0', () => {
    expect(initVolumes.securityContext).toEqual({ seLinuxOptions: { level: 's0' } });
  });

  it('gives db-waiter the endpoints from ConfigMap uyuni-config and the user names from the credential Secrets, in order', () => {
    expect(envLines(dbWaiter)).toEqual([
      'MANAGER_DB_HOST<-configmap:uyuni-config/db_host',
      'MANAGER_DB_PORT<-configmap:uyuni-config/db_port',
      'MANAGER_DB_NAME<-configmap:uyuni-config/db_name',
      'MANAGER_USER<-secret:db-credentials/username',
      'REPORT_DB_HOST<-configmap:uyuni-config/reportdb_host',
      'REPORT_DB_PORT<-configmap:uyuni-config/reportdb_port',
      'REPORT_DB_NAME<-configmap:uyuni-config/reportdb_name',
      'REPORT_DB_USER<-secret:reportdb-credentials/username',
    ]);
  });

  it('waits with pg_isready -U -h -p -d for the product database, then the report database', () => {
    const text = script(dbWaiter);
    expect(text).toMatch(/until pg_isready -U "\$2" -h "\$3" -p "\$4" -d "\$5"/);
    const product = text.indexOf('wait_for "product database" "$MANAGER_USER" "$MANAGER_DB_HOST" "$MANAGER_DB_PORT" "$MANAGER_DB_NAME"');
    const report = text.indexOf('wait_for "report database" "$REPORT_DB_USER" "$REPORT_DB_HOST" "$REPORT_DB_PORT" "$REPORT_DB_NAME"');
    expect(product).toBeGreaterThan(0);
    expect(report).toBeGreaterThan(product);
  });
});

// --- ConfigMap, claims, database -----------------------------------------------------------

describe('R2026.8 (server-helm 2026.8.0 rendered) ConfigMap uyuni-config', () => {
  const cm = install().find('ConfigMap', 'uyuni-config');

  it('holds fqdn, email and the database endpoints db:5432/susemanager and reportdb:5432/reportdb, ports as strings', () => {
    expect(cm.data).toEqual({
      fqdn: FQDN,
      email: `root@${FQDN}`,
      db_host: 'db',
      db_port: '5432',
      db_name: 'susemanager',
      reportdb_host: 'reportdb',
      reportdb_port: '5432',
      reportdb_name: 'reportdb',
    });
  });

  it('takes email from server.email (the chart\'s server.email; our default is the image\'s root@<fqdn>)', () => {
    expect(install({ server: { email: 'admin@uyuni.lab.org' } }).find('ConfigMap', 'uyuni-config').data.email).toBe('admin@uyuni.lab.org');
  });

  it('is labelled part-of uyuni, in the release namespace', () => {
    expect(cm.metadata.namespace).toBe(NS);
    expect(cm.metadata.labels?.['app.kubernetes.io/part-of']).toBe('uyuni');
  });
});

describe('server-helm templates/pvcs.yaml @ 96c86b96 and _helpers.tpl @ a850e9da (uyuni.pgPVCName), claim list of R2026.8', () => {
  const p = install({ volumes: { overrides: undefined } });
  const pvcs = all(p, 'PersistentVolumeClaim');
  const pvc = (name: string) => p.find('PersistentVolumeClaim', name);

  it('claims exactly the R2026.8 list: with ca-certs, without root, the database as var-pgsql18', () => {
    expect(pvcs.map((x) => x.metadata.name).sort()).toEqual(Object.keys(CLAIM_SIZES).sort());
    expect(names(p, 'PersistentVolumeClaim')).not.toContain('root');
    expect(names(p, 'PersistentVolumeClaim')).not.toContain('var-pgsql');
  });

  it('requests the chart\'s default size of each claim', () => {
    expect(Object.fromEntries(pvcs.map((x) => [x.metadata.name, x.spec.resources.requests.storage]))).toEqual(CLAIM_SIZES);
  });

  it('makes every claim ReadWriteOnce, labelled part-of uyuni', () => {
    for (const x of pvcs) {
      expect(x.spec.accessModes).toEqual(['ReadWriteOnce']);
      expect(x.metadata.labels?.['app.kubernetes.io/part-of']).toBe('uyuni');
    }
  });

  it('uses the global storage class, and "-" as storageClassName ""', () => {
    expect(pvc('srv-www').spec.storageClassName).toBe('standard');
    const none = install({ volumes: { storageClass: '-' } });
    expect(none.find('PersistentVolumeClaim', 'srv-www').spec.storageClassName).toBe('');
    expect(install({ volumes: { storageClass: undefined } }).find('PersistentVolumeClaim', 'srv-www').spec).not.toHaveProperty('storageClassName');
  });

  it('applies a claim\'s own size, storageClass ("-" too), labels, annotations, volumeName and selector', () => {
    const q = install({
      volumes: {
        overrides: {
          'var-spacewalk': {
            size: '1Ti', storageClass: 'fast', labels: { tier: 'data' }, annotations: { 'example.org/backup': 'daily' },
            volumeName: 'pv-spacewalk', selector: { matchLabels: { disk: 'big' } },
          },
          'var-pgsql18': { storageClass: '-' },
        },
      },
    });
    const x = q.find('PersistentVolumeClaim', 'var-spacewalk');
    expect(x.spec).toMatchObject({ resources: { requests: { storage: '1Ti' } }, storageClassName: 'fast', volumeName: 'pv-spacewalk', selector: { matchLabels: { disk: 'big' } } });
    expect(x.metadata.labels).toMatchObject({ tier: 'data', 'app.kubernetes.io/part-of': 'uyuni' });
    expect(upstreamAnnotations(x)).toEqual({ 'example.org/backup': 'daily' });
    expect(q.find('PersistentVolumeClaim', 'var-pgsql18').spec.storageClassName).toBe('');
  });
});

describe('server-helm templates/db.yaml @ 0f3c1b8a (Deployment db, identical in R2026.8)', () => {
  const d = dbOf(install());
  const c = container(d, 'db');

  it('is Deployment db labelled component db, part-of uyuni, one replica, Recreate', () => {
    expect(d.metadata.labels).toMatchObject({ 'app.kubernetes.io/component': 'db', 'app.kubernetes.io/part-of': 'uyuni' });
    expect(d.spec.selector.matchLabels).toEqual({ 'app.kubernetes.io/component': 'db', 'app.kubernetes.io/part-of': 'uyuni' });
    expect(d.spec.replicas).toBe(1);
    expect(d.spec.strategy).toEqual({ type: 'Recreate' });
  });

  it('shuts PostgreSQL down fast before the image\'s SIGTERM (a smart shutdown), within 180 s as uyuni-tools pgsqlServiceTemplate.go @ 071f7715 TimeoutStopSec=180 (decision n)', () => {
    expect(podSpec(d).terminationGracePeriodSeconds).toBe(180);
    expect(c.lifecycle.preStop.exec.command).toEqual(['/bin/sh', '-c', expect.stringContaining('stop -m fast'), 'db-stop', '/var/lib/pgsql/data']);
  });

  it('has one container db from server-postgresql, without command, PGDATA or POSTGRES_DB', () => {
    expect(podSpec(d).containers.map((x: any) => x.name)).toEqual(['db']);
    expect(c.image).toBe('registry.opensuse.org/uyuni/server-postgresql:2026.08');
    expect(c).not.toHaveProperty('command');
    expect(c).not.toHaveProperty('args');
    expect(c.env.map((e: any) => e.name)).not.toContain('PGDATA');
    expect(c.env.map((e: any) => e.name)).not.toContain('POSTGRES_DB');
  });

  it('sets TZ and the admin, product and report credentials from their Secrets', () => {
    expect(envLines(c)).toEqual([
      'TZ=Etc/UTC',
      'POSTGRES_USER<-secret:db-admin-credentials/username',
      'POSTGRES_PASSWORD<-secret:db-admin-credentials/password',
      'MANAGER_USER<-secret:db-credentials/username',
      'MANAGER_PASS<-secret:db-credentials/password',
      'REPORT_DB_USER<-secret:reportdb-credentials/username',
      'REPORT_DB_PASS<-secret:reportdb-credentials/password',
    ]);
    expect(envLines(container(dbOf(install({ timezone: 'Europe/Berlin' })), 'db'))[0]).toBe('TZ=Europe/Berlin');
  });

  it('mounts claim var-pgsql18 (pod volume var-pgsql) at /var/lib/pgsql/data and Secret db-cert at /etc/pki', () => {
    expect(c.volumeMounts.map(mountLine)).toEqual(['var-pgsql -> /var/lib/pgsql/data', 'db-cert -> /etc/pki/']);
    expect(volume(d, 'var-pgsql')).toEqual({ name: 'var-pgsql', persistentVolumeClaim: { claimName: 'var-pgsql18' } });
  });

  it('maps db-cert to tls/certs/spacewalk.crt, tls/private/pg-spacewalk.key (0400) and trust/anchors/LOCAL-RHN-ORG-TRUSTED-SSL-CERT', () => {
    expect(volume(d, 'db-cert').secret).toEqual({
      secretName: 'db-cert',
      defaultMode: 420,
      items: [
        { key: 'tls.crt', path: 'tls/certs/spacewalk.crt' },
        { key: 'tls.key', path: 'tls/private/pg-spacewalk.key', mode: 256 },
        { key: 'ca.crt', path: 'trust/anchors/LOCAL-RHN-ORG-TRUSTED-SSL-CERT' },
      ],
    });
  });

  it('runs the pod with fsGroup 999 (the image\'s postgres group)', () => {
    expect(podSpec(d).securityContext).toEqual({ fsGroup: 999 });
  });

  it('adds, beyond the chart, container port 5432 and a readiness probe /usr/bin/healthcheck.sh (decision d)', () => {
    expect(c.ports).toEqual([{ containerPort: 5432 }]);
    expect(c.readinessProbe.exec).toEqual({ command: ['/usr/bin/healthcheck.sh'] });
    expect(c).not.toHaveProperty('livenessProbe');
    expect(c).not.toHaveProperty('startupProbe');
  });

  it('is the only database: an external database (db.enable: false, "not supported yet") is refused (decision j)', () => {
    expect(() => synthYaml(defaultConfigWith({ db: { enable: false } }))).toThrow(/db\.enable: removed: PostgreSQL always runs in Deployment db/);
  });
});

// --- first setup ----------------------------------------------------------------------------

describe('server-postgresql-image root/docker-entrypoint-upgdb.d/01-pg_hba.sh @ 5387ff36 and uyuni-entrypoint.sh @ 60ccd48c (db.podsCIDR, decision m)', () => {
  // The stored script's facts: PGDATA defaults to /var/lib/pgsql/data; pg_hba.conf starts with
  // `include_if_exists pg_hba_custom.conf` ("To add custom rules, use pg_hba_custom.conf"); on
  // Kubernetes it refuses plain text from `.kube-system.svc.cluster.local` (Traefik) before it
  // allows its own pod network (the db pod's /16) with scram-sha-256; no variable of ours is read.
  const IMAGE_PGDATA = '/var/lib/pgsql/data';
  const CUSTOM_FILE = 'pg_hba_custom.conf';
  const TRAEFIK_RULES = ['hostssl reportdb all .kube-system.svc.cluster.local scram-sha-256', 'host all all .kube-system.svc.cluster.local reject'];
  const d = dbOf(install({ db: { podsCIDR: '10.8.0.0/14' } }));
  const init = container(d, 'pods-cidr');
  const script = init.command[2] as string;

  it('passes the network to no image script: the db container has no PODS_CIDR, the init container pods-cidr writes it', () => {
    expect(envLines(container(d, 'db')).some((l) => l.startsWith('PODS_CIDR'))).toBe(false);
    expect(envLines(init)).toEqual([`PGDATA=${IMAGE_PGDATA}`, 'PODS_CIDR=10.8.0.0/14']);
  });

  it('writes into the file pg_hba.conf includes, in the image\'s PGDATA, before the image\'s entrypoint starts PostgreSQL', () => {
    expect(script).toContain(`file=$data/${CUSTOM_FILE}`);
    expect(init.volumeMounts.map(mountLine)).toEqual([`var-pgsql -> ${IMAGE_PGDATA}`]);
    expect(podSpec(d).initContainers.map((c: any) => c.name)).toEqual(['data-dir', 'pods-cidr']);
    expect(init.image).toBe(container(d, 'db').image);
  });

  it('keeps the image\'s order: Traefik refused plain text before the pod network is allowed with scram-sha-256', () => {
    const rules = [...TRAEFIK_RULES, 'host all all $PODS_CIDR scram-sha-256'];
    const at = rules.map((r) => script.indexOf(r));
    expect(at.every((i) => i > 0)).toBe(true);
    expect([...at].sort((a, b) => a - b)).toEqual(at);
  });
});

describe('server-image root/docker-entrypoint-init.d/00-mgrSetup.sh @ 1a7da357 and R2026.8 (setup at the first start, no Job)', () => {
  const p = install();

  it('has no setup Job and no Job at all in the install plan', () => {
    expect(all(p, 'Job')).toEqual([]);
    expect(p.plan.steps.map((s) => s.name)).toEqual(['namespace', 'volumes', 'tls', 'services', 'database', 'ingress', 'server']);
  });

  it('gives the server container the mandatory UYUNI_HOSTNAME, MANAGER_PASS, REPORT_DB_PASS and ADMIN_PASS, and container=oci for the no-SSL setup', () => {
    const env = uyuniOf(p).env.map((e: any) => e.name);
    expect(env).toEqual(expect.arrayContaining(['UYUNI_HOSTNAME', 'MANAGER_PASS', 'REPORT_DB_PASS', 'ADMIN_PASS', 'container']));
  });

  it('keeps the completion marker\'s directory /var/spacewalk on claim var-spacewalk', () => {
    expect(uyuniOf(p).volumeMounts).toContainEqual({ name: 'var-spacewalk', mountPath: '/var/spacewalk' });
  });

  it('waits for the server rollout in the last step, 36000 s (the startup probe\'s 10 h), and refuses less (decision e)', () => {
    const server = p.step('server');
    expect(server).toBe(p.plan.steps.at(-1));
    expect(server.timeoutSeconds).toBe(36000);
    expect(server.waits).toContainEqual({ object: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'uyuni', namespace: NS }, for: 'rollout' });
    expect(() => synthYaml(defaultConfigWith({ timeouts: { serverStartSeconds: 3600 } }))).toThrow(/serverStartSeconds/);
  });
});

describe('server-helm README.md (newest version) and uyuni-charts server-selfsigned/templates/secrets.yaml @ fbbe779 (Secrets the chart expects)', () => {
  const p = install();

  it.each(['db-admin-credentials', 'db-credentials', 'reportdb-credentials', 'admin-credentials'])(
    'requires the basic-auth Secret %s with keys username and password (made when missing)',
    (name) => {
      const r = requirement(p, name);
      expect(r).toMatchObject({ kind: 'Secret', namespace: NS, keys: ['username', 'password'], ifMissing: 'generate', secretType: 'kubernetes.io/basic-auth' });
    },
  );

  it('requires the user\'s Secret named by server.sccSecret with username and password, never made up', () => {
    expect(requirement(install({ server: { sccSecret: 'myscccreds' } }), 'myscccreds')).toMatchObject({ kind: 'Secret', keys: ['username', 'password'], ifMissing: 'fail' });
  });
});

// --- TLS ------------------------------------------------------------------------------------

describe('uyuni-charts server-selfsigned/templates/certificates.yaml @ fbbe779 (cert-manager objects)', () => {
  const p = install({ tls: { ca: { email: 'admin@example.com' } } });
  const cert = (name: string) => p.find('Certificate', name);

  it('makes a self-signed Issuer uyuni-root-issuer', () => {
    expect(p.find('Issuer', 'uyuni-root-issuer').spec).toEqual({ selfSigned: {} });
  });

  it('makes the CA Certificate uyuni-ca: isCA, subject, e-mail, FQDN as commonName and dnsName, ECDSA 256 rotated always, from uyuni-root-issuer', () => {
    expect(cert('uyuni-ca').spec).toMatchObject({
      isCA: true,
      subject: { countries: ['DE'], provinces: ['Bayern'], localities: ['Nuernberg'], organizations: ['Uyuni'], organizationalUnits: ['Uyuni'] },
      emailAddresses: ['admin@example.com'],
      commonName: FQDN,
      dnsNames: [FQDN],
      secretName: 'uyuni-ca',
      privateKey: { algorithm: 'ECDSA', size: 256, rotationPolicy: 'Always' },
      issuerRef: { name: 'uyuni-root-issuer', kind: 'Issuer', group: 'cert-manager.io' },
    });
  });

  it('makes Certificate uyuni-cert: Secret uyuni-cert labelled part-of uyuni, server auth, RSA 2048 PKCS1 rotated always, the FQDN, from uyuni-issuer', () => {
    const spec = cert('uyuni-cert').spec;
    expect(spec).toMatchObject({
      secretName: 'uyuni-cert',
      secretTemplate: { labels: { 'app.kubernetes.io/part-of': 'uyuni' } },
      isCA: false,
      usages: ['server auth'],
      privateKey: { algorithm: 'RSA', encoding: 'PKCS1', size: 2048, rotationPolicy: 'Always' },
      dnsNames: [FQDN],
    });
    expect(spec.issuerRef.name).toBe('uyuni-issuer');
    expect(spec).not.toHaveProperty('commonName');
  });

  it('makes Certificate db-cert: Secret db-cert, the CA subject, commonName reportdb, dnsNames db, reportdb and the FQDN, server auth, RSA 2048 PKCS1', () => {
    const spec = cert('db-cert').spec;
    expect(spec).toMatchObject({
      secretName: 'db-cert',
      secretTemplate: { labels: { 'app.kubernetes.io/part-of': 'uyuni' } },
      isCA: false,
      subject: { countries: ['DE'], provinces: ['Bayern'], localities: ['Nuernberg'], organizations: ['Uyuni'], organizationalUnits: ['Uyuni'] },
      commonName: 'reportdb',
      usages: ['server auth'],
      privateKey: { algorithm: 'RSA', encoding: 'PKCS1', size: 2048, rotationPolicy: 'Always' },
      dnsNames: ['db', 'reportdb', FQDN],
    });
    expect(spec.issuerRef.name).toBe('uyuni-issuer');
  });

  it('puts the CA e-mail address on db-cert too', () => {
    expect(cert('db-cert').spec.emailAddresses).toEqual(['admin@example.com']);
  });

  it('chains them in the release namespace: Issuer uyuni-root-issuer -> Certificate uyuni-ca -> Issuer uyuni-issuer (ca.secretName uyuni-ca), no ClusterIssuer (decision c)', () => {
    expect(p.find('Issuer', 'uyuni-issuer').spec).toEqual({ ca: { secretName: 'uyuni-ca' } });
    expect(names(p, 'ClusterIssuer')).toEqual([]);
    for (const o of p.objects.filter((x) => x.apiVersion.startsWith('cert-manager.io/'))) expect(o.metadata.namespace).toBe(NS);
    for (const name of ['uyuni-cert', 'db-cert']) expect(cert(name).spec.issuerRef).toEqual({ name: 'uyuni-issuer', kind: 'Issuer', group: 'cert-manager.io' });
  });

  it('states the lifetimes instead of cert-manager\'s defaults: leaves 8760h, renew 720h before, CA 87600h (decision c)', () => {
    expect(cert('uyuni-ca').spec).toMatchObject({ duration: '87600h', renewBefore: '720h' });
    for (const name of ['uyuni-cert', 'db-cert']) expect(cert(name).spec).toMatchObject({ duration: '8760h', renewBefore: '720h' });
  });

  it('makes no trust-manager Bundle and no CA ConfigMap; the pods read ca.crt from uyuni-cert and db-cert (decision b)', () => {
    expect(p.objects.filter((o) => o.apiVersion.startsWith('trust.cert-manager.io/'))).toEqual([]);
    expect(has(p, 'ConfigMap', 'uyuni-ca') || has(p, 'ConfigMap', 'db-ca')).toBe(false);
  });

  it('issues from the user\'s Secret uyuni-ca in migrated mode (no root issuer, no CA Certificate)', () => {
    const m = synth(MIGRATION).migrate;
    expect(names(m, 'Issuer')).toEqual(['uyuni-issuer']);
    expect(names(m, 'Certificate')).toEqual(['uyuni-cert', 'db-cert']);
    expect(requirement(m, 'uyuni-ca')).toMatchObject({ kind: 'Secret', keys: ['tls.crt', 'tls.key'], ifMissing: 'fail' });
  });

  it('makes no cert-manager object in third-party mode and requires uyuni-cert and db-cert with tls.crt, tls.key and ca.crt', () => {
    const q = install({ tls: { mode: 'third-party' } });
    expect(q.objects.filter((o) => o.apiVersion.startsWith('cert-manager.io/'))).toEqual([]);
    for (const name of ['uyuni-cert', 'db-cert']) expect(requirement(q, name)).toMatchObject({ keys: ['tls.crt', 'tls.key', 'ca.crt'], ifMissing: 'fail' });
  });
});

// --- Services and exposure ------------------------------------------------------------------

describe('server-helm templates/services.yaml @ a54a8f03 and tests/services_test.yaml @ 12c2a853 (Services)', () => {
  const p = install();
  const svc = (q: SynthesizedPlan, name: string) => q.find('Service', name);

  it('renders cobbler, db, reportdb, salt, taskomatic-internal, tomcat-internal and web by default, all ClusterIP', () => {
    expect(names(p, 'Service').sort()).toEqual(['cobbler', 'db', 'reportdb', 'salt', 'taskomatic-internal', 'tomcat-internal', 'web']);
    for (const s of all(p, 'Service')) expect(s.spec.type).toBe('ClusterIP');
  });

  it('gives each its port names and numbers', () => {
    expect(Object.fromEntries(all(p, 'Service').map((s) => [s.metadata.name, servicePorts(s)]))).toEqual({
      cobbler: ['cobbler 25151/TCP->25151'],
      db: ['pgsql 5432/TCP->5432'],
      reportdb: ['pgsql 5432/TCP->5432'],
      salt: ['publish 4505/TCP->4505', 'request 4506/TCP->4506'],
      'taskomatic-internal': ['jmx 5557/TCP->5557', 'mtrx 9800/TCP->9800'],
      'tomcat-internal': ['node-exporter 9100/TCP->9100', 'jmx 5556/TCP->5556', 'pgsql-exporter 9187/TCP->9187'],
      web: ['http 80/TCP->80'],
    });
  });

  it('selects the server pods, and the db pods for db and reportdb, by component and part-of; labels the same', () => {
    for (const s of all(p, 'Service')) {
      const component = ['db', 'reportdb'].includes(s.metadata.name) ? 'db' : 'server';
      expect(s.spec.selector).toEqual({ 'app.kubernetes.io/component': component, 'app.kubernetes.io/part-of': 'uyuni' });
      expect(s.metadata.labels).toMatchObject(s.spec.selector);
    }
  });

  it('adds search (debug 8002), taskomatic (debug 8001) and tomcat (debug 8003) with debugJava', () => {
    const q = install({ debugJava: true });
    expect(servicePorts(svc(q, 'search'))).toEqual(['debug 8002/TCP->8002']);
    expect(servicePorts(svc(q, 'taskomatic'))).toEqual(['debug 8001/TCP->8001']);
    expect(servicePorts(svc(q, 'tomcat'))).toEqual(['debug 8003/TCP->8003']);
    expect(has(p, 'Service', 'search')).toBe(false);
  });

  it('drops taskomatic-internal and the jmx/pgsql-exporter ports of tomcat-internal with monitoring: false', () => {
    const q = install({ monitoring: false });
    expect(has(q, 'Service', 'taskomatic-internal')).toBe(false);
    expect(servicePorts(svc(q, 'tomcat-internal'))).toEqual(['node-exporter 9100/TCP->9100']);
  });

  it('writes the chart\'s node ports with type NodePort: salt 30005/30006, reportdb 30032, debug 30001-30003', () => {
    const q = install({
      debugJava: true,
      services: { salt: { type: 'NodePort' }, reportdb: { type: 'NodePort' }, search: { type: 'NodePort' }, taskomatic: { type: 'NodePort' }, tomcat: { type: 'NodePort' } },
    });
    const nodePorts = (name: string) => svc(q, name).spec.ports.map((x: any) => x.nodePort);
    for (const name of ['salt', 'reportdb', 'search', 'taskomatic', 'tomcat']) expect(svc(q, name).spec.type).toBe('NodePort');
    expect(nodePorts('salt')).toEqual([30005, 30006]);
    expect(nodePorts('reportdb')).toEqual([30032]);
    expect([nodePorts('taskomatic'), nodePorts('search'), nodePorts('tomcat')]).toEqual([[30001], [30002], [30003]]);
    expect(svc(p, 'salt').spec.ports.map((x: any) => x.nodePort)).toEqual([undefined, undefined]);
  });

  it('takes configured node ports by port name', () => {
    const q = install({ services: { salt: { type: 'NodePort', nodePorts: { publish: 31505, request: 31506 } } } });
    expect(svc(q, 'salt').spec.ports.map((x: any) => x.nodePort)).toEqual([31505, 31506]);
  });

  it('sets externalTrafficPolicy Local on reportdb as a LoadBalancer', () => {
    const q = install({ services: { reportdb: { type: 'LoadBalancer' } } });
    expect(svc(q, 'reportdb').spec).toMatchObject({ type: 'LoadBalancer', externalTrafficPolicy: 'Local' });
  });

  it('renders tftp with tftp.enabled: 69/UDP, always LoadBalancer, ClientIP affinity, externalTrafficPolicy Local, selecting component tftp', () => {
    const s = svc(install({ tftp: { enabled: true } }), 'tftp');
    expect(servicePorts(s)).toEqual(['tftp 69/UDP->69']);
    expect(s.spec).toMatchObject({ type: 'LoadBalancer', sessionAffinity: 'ClientIP', externalTrafficPolicy: 'Local' });
    expect(s.spec.selector).toEqual({ 'app.kubernetes.io/component': 'tftp', 'app.kubernetes.io/part-of': 'uyuni' });
    expect(has(p, 'Service', 'tftp')).toBe(false);
  });

  it('renders no tftp Service with tftp.hostNetwork, and runs the tftp pod in the node network', () => {
    const q = install({ tftp: { enabled: true, hostNetwork: true } });
    expect(has(q, 'Service', 'tftp')).toBe(false);
    expect(podSpec(q.find('Deployment', 'tftp'))).toMatchObject({ hostNetwork: true, dnsPolicy: 'ClusterFirstWithHostNet' });
  });

  it('renders hub-xmlrpc (hub 2830) selecting component hub-xmlrpc when the hub API runs', () => {
    const s = svc(install({ hubApi: { replicas: 1 } }), 'hub-xmlrpc');
    expect(servicePorts(s)).toEqual(['hub 2830/TCP->2830']);
    expect(s.spec.selector['app.kubernetes.io/component']).toBe('hub-xmlrpc');
  });

  it('exposes 443 nowhere: TLS ends at the ingress', () => {
    const q = install({ debugJava: true, tftp: { enabled: true }, hubApi: { replicas: 1 } });
    for (const s of all(q, 'Service')) expect(s.spec.ports.map((x: any) => x.port)).not.toContain(443);
  });
});

describe('server-helm templates/tftp.yaml @ c19024a5 (Deployment tftp)', () => {
  const d = install({ tftp: { enabled: true } }).find('Deployment', 'tftp');

  it('runs tftp_wrapper.py with --httpHost web.<ns>.svc, --proxyFqdn and --serverFqdn the FQDN, on 69/UDP', () => {
    const c = podSpec(d).containers[0];
    expect(c.command).toEqual(['/usr/bin/tftp_wrapper.py', '--httpHost', `web.${NS}.svc`, '--proxyFqdn', FQDN, '--serverFqdn', FQDN]);
    expect(c.ports).toEqual([{ containerPort: 69, protocol: 'UDP' }]);
    expect(d.spec.selector.matchLabels['app.kubernetes.io/component']).toBe('tftp');
  });

  it('is off by default ("Disable TFTP by default", d1dbf8c3)', () => {
    expect(has(install(), 'Deployment', 'tftp')).toBe(false);
  });
});

describe('server-helm templates/traefik-routes.yaml @ 2b781fde (Traefik objects)', () => {
  const p = install();
  const mw = (name: string) => p.find('Middleware', name);

  it('renders Middleware uyuni-https-redirect: redirectScheme https, permanent', () => {
    expect(mw('uyuni-https-redirect').spec).toEqual({ redirectScheme: { scheme: 'https', permanent: true } });
  });

  it('renders Middleware uyuni-strip-prefixes for the exporter and saline prefixes', () => {
    expect(mw('uyuni-strip-prefixes').spec).toEqual({
      stripPrefix: { prefixes: ['/postgresql-exporter', '/node-exporter', '/tasko-exporter', '/tasko-jmx', '/tomcat-jmx', '/saline'] },
    });
  });

  it('routes entry point salt-publish to salt:4505 and salt-request to salt:4506 for every SNI, annotated with the ingress class', () => {
    for (const [name, entryPoint, port] of [['salt-publish-route', 'salt-publish', 4505], ['salt-request-route', 'salt-request', 4506]] as const) {
      const r = p.find('IngressRouteTCP', name);
      expect(r.apiVersion).toBe('traefik.io/v1alpha1');
      expect(r.spec).toEqual({ entryPoints: [entryPoint], routes: [{ match: 'HostSNI(`*`)', services: [{ name: 'salt', port }] }] });
      expect(upstreamAnnotations(r)).toEqual({ 'kubernetes.io/ingress.class': 'traefik' });
    }
  });

  it('renders only the salt TCP routes by default: no reportdb-pgsql-route (bsc#1270038), no cobbler or other old k3s routes (decision i)', () => {
    expect(names(p, 'IngressRouteTCP')).toEqual(['salt-publish-route', 'salt-request-route']);
  });

  it('adds tomcat-debug-route (tomcat:8003), search-debug-route (search:8002), tasko-debug-route (taskomatic:8001) with debugJava', () => {
    const q = install({ debugJava: true });
    const target = (name: string) => {
      const r = q.find('IngressRouteTCP', name);
      return `${r.spec.entryPoints[0]} ${r.spec.routes[0].services[0].name}:${r.spec.routes[0].services[0].port}`;
    };
    expect(['tomcat-debug-route', 'search-debug-route', 'tasko-debug-route'].map(target)).toEqual([
      'tomcat-debug tomcat:8003', 'search-debug search:8002', 'tasko-debug taskomatic:8001',
    ]);
  });

  it('renders no salt TCP route when salt is a NodePort, but keeps the Middlewares', () => {
    const q = install({ services: { salt: { type: 'NodePort' } } });
    expect(names(q, 'IngressRouteTCP')).toEqual([]);
    expect(names(q, 'Middleware')).toEqual(['uyuni-https-redirect', 'uyuni-strip-prefixes']);
  });

  it('renders no Traefik object with ingress.type nginx', () => {
    const q = install({ ingress: { type: 'nginx' }, services: { salt: { type: 'LoadBalancer' } } });
    expect(q.objects.filter((o) => o.apiVersion.startsWith('traefik.io/'))).toEqual([]);
  });

  it('annotates the routes with ingress.className (ingress.class)', () => {
    expect(upstreamAnnotations(install({ ingress: { className: 'traefik-internal' } }).find('IngressRouteTCP', 'salt-publish-route')))
      .toEqual({ 'kubernetes.io/ingress.class': 'traefik-internal' });
  });
});

describe('server-helm templates/ingress.yaml as rendered in R2026.8, tests/ingress_test.yaml @ 017664fc and @ cb584fee (Ingresses)', () => {
  const p = install();
  const ing = (q: SynthesizedPlan, name: string) => q.find('Ingress', name);
  const strip = `${NS}-uyuni-strip-prefixes@kubernetescrd`;

  it('renders uyuni-ingress-ssl, exporters-ingress-ssl, uyuni-ingress-ssl-redirect and uyuni-ingress-nossl with Traefik', () => {
    expect(names(p, 'Ingress')).toEqual(['uyuni-ingress-ssl', 'exporters-ingress-ssl', 'uyuni-ingress-ssl-redirect', 'uyuni-ingress-nossl']);
  });

  it('gives uyuni-ingress-ssl the FQDN, TLS from uyuni-cert, / Prefix to web:80, class traefik and the websecure router annotations', () => {
    const i = ing(p, 'uyuni-ingress-ssl');
    expect(i.spec.ingressClassName).toBe('traefik');
    expect(i.spec.tls).toEqual([{ hosts: [FQDN], secretName: 'uyuni-cert' }]);
    expect(i.spec.rules.map((r: any) => r.host)).toEqual([FQDN]);
    expect(ingressPaths(i)).toEqual(['/ Prefix web:80']);
    expect(traefikAnnotations(i)).toEqual({
      [`${T}router.tls`]: 'true',
      [`${T}router.tls.domains.n.main`]: FQDN,
      [`${T}router.entrypoints`]: 'websecure',
      [`${T}router.priority`]: '1',
      [`${T}router.middlewares`]: strip,
    });
  });

  it('gives exporters-ingress-ssl the exporter paths over websecure, priority 100, TLS from uyuni-cert', () => {
    const i = ing(p, 'exporters-ingress-ssl');
    expect(ingressPaths(i)).toEqual(EXPORTER_PATHS);
    expect(i.spec.tls).toEqual([{ hosts: [FQDN], secretName: 'uyuni-cert' }]);
    expect(traefikAnnotations(i)).toMatchObject({ [`${T}router.entrypoints`]: 'websecure', [`${T}router.priority`]: '100', [`${T}router.middlewares`]: strip });
  });

  it('gives uyuni-ingress-ssl-redirect entry point web, priority 1, the https-redirect middleware and / Prefix to web:80', () => {
    const i = ing(p, 'uyuni-ingress-ssl-redirect');
    expect(traefikAnnotations(i)).toEqual({
      [`${T}router.entrypoints`]: 'web',
      [`${T}router.priority`]: '1',
      [`${T}router.middlewares`]: `${NS}-uyuni-https-redirect@kubernetescrd`,
    });
    expect(ingressPaths(i)).toEqual(['/ Prefix web:80']);
    expect(i.spec).not.toHaveProperty('tls');
  });

  it('adds /hub/rpc/api -> hub-xmlrpc:2830 to uyuni-ingress-ssl-redirect when the hub API runs ("should contain the hub paths when enabled")', () => {
    expect(ingressPaths(ing(install({ hubApi: { replicas: 1 } }), 'uyuni-ingress-ssl-redirect'))).toEqual(['/ Prefix web:80', '/hub/rpc/api Prefix hub-xmlrpc:2830']);
  });

  it('renders hubapi-ingress-ssl routing /hub/rpc/api over HTTPS to hub-xmlrpc:2830 when the hub API runs', () => {
    const i = ing(install({ hubApi: { replicas: 1 } }), 'hubapi-ingress-ssl');
    expect(ingressPaths(i)).toEqual(['/hub/rpc/api Prefix hub-xmlrpc:2830']);
    expect(traefikAnnotations(i)).toMatchObject({ [`${T}router.entrypoints`]: 'websecure', [`${T}router.priority`]: '100' });
  });

  it('gives uyuni-ingress-nossl router.tls "false", entry point web, priority 100, strip-prefixes, and the plain-HTTP paths plus the exporters', () => {
    const i = ing(p, 'uyuni-ingress-nossl');
    expect(traefikAnnotations(i)).toEqual({
      [`${T}router.tls`]: 'false',
      [`${T}router.entrypoints`]: 'web',
      [`${T}router.priority`]: '100',
      [`${T}router.middlewares`]: strip,
    });
    expect(ingressPaths(i)).toEqual([...NOSSL_PATHS.map((x) => `${x} Prefix web:80`), ...EXPORTER_PATHS]);
    expect(i.spec).not.toHaveProperty('tls');
  });

  it('routes /cobbler_api nowhere: the image answers it from localhost only (10-cobbler_api_localhost.sh @ a4e5bb57), the chart removed it (no_cobbler_api @ eeede693, CVE-2026-71400)', () => {
    for (const q of [p, install({ ingress: { type: 'nginx' }, services: { salt: { type: 'LoadBalancer' } } }), install({ hubApi: { replicas: 1 } })]) {
      const paths = all(q, 'Ingress').flatMap(ingressPaths);
      expect(paths.length).toBeGreaterThan(0);
      expect(paths.filter((x) => x.startsWith('/cobbler_api'))).toEqual([]);
    }
    // The rest of R2026.8's plain-HTTP list stays, /cobbler (the kickstart tree) among it.
    expect(ingressPaths(ing(p, 'uyuni-ingress-nossl'))).toEqual(expect.arrayContaining(['/cobbler Prefix web:80', '/cblr Prefix web:80']));
  });

  it('uses pathType Prefix with plain paths only (no regular expressions) in every Ingress', () => {
    const q = install({ hubApi: { replicas: 1 } });
    for (const i of all(q, 'Ingress')) {
      for (const path of i.spec.rules.flatMap((r: any) => r.http.paths)) {
        expect(path.pathType).toBe('Prefix');
        expect(path.path).toMatch(/^\/[A-Za-z0-9_/-]*$/);
      }
    }
  });

  it('drops the exporter paths and exporters-ingress-ssl with monitoring: false ("should not contain the monitoring paths when disabled")', () => {
    const q = install({ monitoring: false });
    expect(has(q, 'Ingress', 'exporters-ingress-ssl')).toBe(false);
    expect(ingressPaths(ing(q, 'uyuni-ingress-nossl'))).toEqual(NOSSL_PATHS.map((x) => `${x} Prefix web:80`));
  });

  it('writes nginx.ingress.kubernetes.io/ssl-redirect: "false" on uyuni-ingress-nossl with ingress.type nginx ("should switch to nginx annotations")', () => {
    const q = install({ ingress: { type: 'nginx' }, services: { salt: { type: 'LoadBalancer' } } });
    expect(upstreamAnnotations(ing(q, 'uyuni-ingress-nossl'))).toEqual({ 'nginx.ingress.kubernetes.io/ssl-redirect': 'false' });
    expect(names(q, 'Ingress')).toEqual(['uyuni-ingress-ssl', 'exporters-ingress-ssl', 'uyuni-ingress-nossl']);
    for (const i of all(q, 'Ingress')) {
      expect(traefikAnnotations(i)).toEqual({});
      expect(i.spec.ingressClassName).toBe('nginx');
    }
  });

  it('renders the ingress class name when provided ("should render the ingress class name when provided")', () => {
    const q = install({ ingress: { className: 'nginx-internal' } });
    for (const i of all(q, 'Ingress')) expect(i.spec.ingressClassName).toBe('nginx-internal');
  });

  it('renders custom annotations per Ingress ("should render custom annotations for all ingress types")', () => {
    const q = install({
      ingress: {
        annotations: {
          ssl: { 'cert-manager.io/cluster-issuer': 'uyuni-issuer', 'external-dns.alpha.kubernetes.io/ttl': '60' },
          sslRedirect: { 'example.com/foo': '100' },
          nossl: { 'custom.annotation/test': 'nossl-only' },
          exporters: { 'custom.annotation/test': 'exporters-only' },
        },
      },
    });
    expect(ing(q, 'uyuni-ingress-ssl').metadata.annotations).toMatchObject({ 'cert-manager.io/cluster-issuer': 'uyuni-issuer', 'external-dns.alpha.kubernetes.io/ttl': '60' });
    expect(ing(q, 'uyuni-ingress-ssl-redirect').metadata.annotations).toMatchObject({ 'example.com/foo': '100' });
    expect(ing(q, 'uyuni-ingress-nossl').metadata.annotations).toMatchObject({ 'custom.annotation/test': 'nossl-only' });
    expect(ing(q, 'exporters-ingress-ssl').metadata.annotations).toMatchObject({ 'custom.annotation/test': 'exporters-only' });
    expect(ing(q, 'uyuni-ingress-ssl').metadata.annotations).not.toHaveProperty('custom.annotation/test');
  });

  it('renders no Ingress with ingress.type none', () => {
    const q = install({ ingress: { type: 'none' }, services: { salt: { type: 'LoadBalancer' } } });
    expect(all(q, 'Ingress')).toEqual([]);
  });
});

// --- upgrade --------------------------------------------------------------------------------

describe('uyuni-tools @ c09ccfba mgradm/shared/utils/exec.go SanityCheck (the upgrade\'s gates)', () => {
  const u = synth(UPGRADE).upgrade;
  const stop = u.step('stop-server');

  it('inspects the data and the new images in Jobs while the old server runs, before anything is stopped (decision f)', () => {
    const order = u.plan.steps.map((s) => s.name);
    expect(order.slice(0, 3)).toEqual(['inspect', 'inspect-db', 'stop-server']);
    expect(u.step('inspect').factsFrom?.name).toBe('uyuni-inspect');
    expect(u.step('inspect-db').factsFrom?.name).toBe('uyuni-inspect-db');
    expect(u.step('inspect').actions).toEqual([]);
  });

  it('refuses a release downgrade and a switch between Uyuni and SUSE Manager', () => {
    expect(stop.gates).toContainEqual(expect.objectContaining({ type: 'compare-versions', left: { fact: 'uyuni_release' }, op: '>=', right: { fact: 'current_release' } }));
    expect(stop.gates).toContainEqual(expect.objectContaining({ type: 'equals', left: { fact: 'product' }, right: { fact: 'current_product' } }));
  });

  it('refuses a PostgreSQL downgrade', () => {
    expect(stop.gates).toContainEqual(expect.objectContaining({ type: 'compare-versions', left: { fact: 'image_pg_version' }, op: '>=', right: { fact: 'current_pg_version' } }));
  });

  it('stops the server and its helpers and waits until their pods are gone, then the database (startstop.go StopServices; decision n)', () => {
    expect(stop.actions.map((a) => `${a.type} ${a.object.name}${a.type === 'scale' ? ` ${a.replicas}` : ''}`)).toEqual([
      'delete uyuni-stop-server', 'scale uyuni 0', 'scale uyuni-coco-attestation 0', 'scale uyuni-hub-xmlrpc 0', 'scale tftp 0',
    ]);
    expect(stop.waits.map((w) => `${w.object.kind}/${w.object.name} ${w.for}`)).toContain('Job/uyuni-stop-server complete');
    const names = u.plan.steps.map((x) => x.name);
    expect(names.indexOf('stop-db')).toBe(names.indexOf('stop-server') + 1);
    expect(u.step('stop-db').actions.map((a) => `${a.type} ${a.object.name}`)).toEqual(['delete uyuni-stop-db', 'scale db']);
    expect(u.step('stop-db').waits.map((w) => `${w.object.kind}/${w.object.name} ${w.for}`)).toEqual(['Job/uyuni-stop-db complete']);
  });

  it('reads the release init-volumes recorded under /etc/rhn/uyuni-cdk on claim etc-rhn (decision g)', () => {
    const job = u.find('Job', 'uyuni-inspect');
    expect(envLines(podSpec(job).containers[0])).toContain('RELEASE_DIR=/etc/rhn/uyuni-cdk');
    expect(podSpec(job).containers[0].volumeMounts[0]).toEqual({ name: 'etc-rhn', mountPath: '/etc/rhn', readOnly: true });
    expect(podSpec(job).containers[0].volumeMounts.every((m: any) => m.readOnly)).toBe(true);
    expect(envLines(container(serverOf(install()), 'init-volumes'))).toContain('RELEASE_DIR=/etc/rhn/uyuni-cdk');
  });
});

describe('server-database-migration-image root/docker-entrypoint-initdb.d/00-pgsqlVersionUpgrade.sh @ 90890532 (Job uyuni-db-migrate)', () => {
  const u = synth(UPGRADE).upgrade;
  const job = u.find('Job', 'uyuni-db-migrate');
  const c = podSpec(job).containers[0];

  it('runs the server-database-migration image as root', () => {
    expect(c.image).toBe('registry.opensuse.org/uyuni/server-database-migration:2026.08');
    expect(c.securityContext).toMatchObject({ runAsUser: 0, runAsGroup: 0 });
  });

  it('upgrades /migration/source (the old claim var-pgsql) into /migration/target (the new claim var-pgsql18)', () => {
    expect(envLines(c)).toEqual(expect.arrayContaining(['SOURCE_LINK=/migration/source', 'TARGET=/migration/target', 'OLD_DATA=/migration/old']));
    expect(c.volumeMounts).toEqual(expect.arrayContaining([
      { name: 'var-pgsql', mountPath: '/migration/old' },
      { name: 'var-pgsql18', mountPath: '/migration/target' },
    ]));
    expect(volume(job, 'var-pgsql').persistentVolumeClaim.claimName).toBe('var-pgsql');
    expect(volume(job, 'var-pgsql18').persistentVolumeClaim.claimName).toBe('var-pgsql18');
  });

  it('runs the image\'s own script, NEW_VERSION 18, with POSTGRES_LANG en_US.UTF-8', () => {
    expect(c.command[c.command.length - 1]).toContain('/docker-entrypoint-initdb.d/00-pgsqlVersionUpgrade.sh');
    expect(envLines(c)).toEqual(expect.arrayContaining(['OLD_PG_VERSION=16', 'NEW_PG_VERSION=18', 'POSTGRES_LANG=en_US.UTF-8']));
  });

  it('gives it the db certificate and key the old cluster\'s configuration names', () => {
    expect(volume(job, 'db-cert').secret).toMatchObject({ secretName: 'db-cert' });
    expect(c.command[c.command.length - 1]).toContain('tls/certs/spacewalk.crt');
    expect(c.command[c.command.length - 1]).toContain('tls/private/pg-spacewalk.key');
  });

  it('creates only the new claim var-pgsql18 and keeps var-pgsql: nothing deletes it (decision f)', () => {
    expect(names(u, 'PersistentVolumeClaim')).toEqual(['var-pgsql18']);
    expect(u.plan.steps.flatMap((s) => s.actions).filter((a) => a.type === 'delete' && !['uyuni-stop-server', 'uyuni-stop-db'].includes(a.object.name))).toEqual([]);
  });

  it('copies (the image\'s pg_upgrade has no --link), so it needs no PostgreSQL major upgrade step when the data is 18 already', () => {
    const same = synth({ upgrade: { postgresql: { from: 18 } } }).upgrade;
    expect(same.plan.steps.map((s) => s.name)).not.toContain('db-upgrade');
    expect(same.plan.steps.map((s) => s.name)).not.toContain('db-finalize');
  });
});

describe('server-image root/docker-entrypoint-init.d/90-pgsqlFinalize.sh @ 17708150 (Job uyuni-db-finalize)', () => {
  const u = synth(UPGRADE).upgrade;
  const m = synth(MIGRATION).migrate;
  const finalizeEnv = (q: SynthesizedPlan) => envLines(podSpec(q.find('Job', 'uyuni-db-finalize')).containers[0]);

  it('runs the finalize once as a Job, with the MANAGER_DB_NAME its collation check reads and none of the switches of @ d701b96b', () => {
    for (const q of [u, m]) {
      expect(finalizeEnv(q)).toContain('MANAGER_DB_NAME=susemanager');
      expect(finalizeEnv(q).filter((l) => /^(RUN_REINDEX|RUN_SCHEMA_UPDATE|MIGRATION)=/.test(l))).toEqual([]);
    }
  });

  it('rewrites the distributions\' paths itself for a migration (the MIGRATION block is gone from the image since @ 17708150)', () => {
    expect(finalizeEnv(m)).toContain('MIGRATION_DIR=/var/lib/uyuni-tools');
    expect(finalizeEnv(u).some((l) => l.startsWith('MIGRATION_DIR='))).toBe(false);
    const job = podSpec(m.find('Job', 'uyuni-db-finalize')).containers[0];
    const script: string = job.command[job.command.length - 1];
    expect(script).toContain('UPDATE rhnKickstartableTree t SET base_path = d.new_path');
    expect(script).toContain("'update_system_overview'");
  });

  it('sets none of RUN_REINDEX, RUN_SCHEMA_UPDATE, MIGRATION on Deployment uyuni (as the chart)', () => {
    for (const q of [u, m]) {
      for (const name of ['RUN_REINDEX', 'RUN_SCHEMA_UPDATE', 'MIGRATION']) expect(uyuniOf(q).env.map((e: any) => e.name)).not.toContain(name);
    }
  });

  it('runs it after the database and before the server, and keeps the Job (no ttlSecondsAfterFinished)', () => {
    const order = u.plan.steps.map((s) => s.name);
    expect(order.indexOf('db-finalize')).toBeGreaterThan(order.indexOf('database'));
    expect(order.indexOf('db-finalize')).toBeLessThan(order.indexOf('server'));
    expect(u.find('Job', 'uyuni-db-finalize').spec).not.toHaveProperty('ttlSecondsAfterFinished');
  });

  it('runs it in the server image with the server\'s claims and the db-waiter first', () => {
    const job = u.find('Job', 'uyuni-db-finalize');
    expect(podSpec(job).containers[0].image).toBe('registry.opensuse.org/uyuni/server:2026.08');
    expect(podSpec(job).initContainers.map((x: any) => x.name)).toEqual(['db-waiter']);
    expect(podSpec(job).containers[0].volumeMounts.map(mountLine)).toEqual(SERVER_MOUNTS);
  });
});

// --- migration ------------------------------------------------------------------------------

describe('uyuni-tools @ c09ccfba mgradm/cmd/migrate/kubernetes and migrateScriptTemplate.go (Job uyuni-data-sync)', () => {
  const m = synth(MIGRATION).migrate;
  const job = m.find('Job', 'uyuni-data-sync');
  const c = podSpec(job).containers[0];
  const script: string = c.command[c.command.length - 1];

  it('copies in Job uyuni-data-sync from the server image, as root', () => {
    expect(c.image).toBe('registry.opensuse.org/uyuni/server:2026.08');
    expect(c.securityContext).toMatchObject({ runAsUser: 0 });
  });

  it('mounts the server claims, the old database claim var-pgsql and migration-data at /var/lib/uyuni-tools; ca-certs only for the custom CAs', () => {
    const mounts = c.volumeMounts.map(mountLine);
    const claims = SERVER_MOUNTS.slice(0, 25).map((x) => x.replace(' -> ', ' -> /mnt'));
    expect(mounts).toEqual(expect.arrayContaining([...claims, 'var-pgsql -> /mnt/var/lib/pgsql', 'migration-data -> /var/lib/uyuni-tools']));
    // ca-certs is not copied (upstream empties /etc/pki/trust/anchors/ for Kubernetes): the script puts the custom CAs there
    expect(mounts.filter((x: string) => x.startsWith('ca-certs '))).toEqual(['ca-certs -> /mnt/etc/pki/trust/anchors/']);
    const env = envLines(c);
    expect(env).toContain('ANCHORS_DIR=/mnt/etc/pki/trust/anchors/');
    expect(env.find((e) => e.startsWith('VOLUME_PATHS='))!.split(/[= ]/)).not.toContain('/etc/pki/trust/anchors/');
  });

  it('copies the custom CA certificates of /usr/share/pki/trust/anchors and /etc/pki/trust/anchors, not the server\'s own CA', () => {
    expect(script).toContain('for dir in /usr/share/pki/trust/anchors /etc/pki/trust/anchors; do');
    expect(script).toContain("--exclude='/LOCAL-RHN-ORG-TRUSTED-SSL-CERT*'");
    expect(script).toContain('cp "$file" "$ANCHORS_DIR/"');
  });

  it('excludes upstream\'s list from the copy, and the package-owned configuration files that are not config(noreplace)', () => {
    for (const pattern of [
      "'/var/cache/zypp/**'", "'/var/cache/rhn/reposync/**'", '/root/.mgr-sync', '/etc/sysconfig/tomcat', '/etc/tomcat/tomcat.conf',
      '/etc/sysconfig/rhn/reportdb-schema-upgrade', '/etc/sysconfig/rhn/schema-upgrade', '/var/log/lastlog', "'/etc/systemd/**'",
      "'/etc/salt/master.d/py2*-compat-salt.conf'", '/etc/apache2/vhosts.d/cobbler.conf',
    ]) expect(script).toContain(`echo ${pattern}`);
    expect(script).toContain('rpm -qa --qf "[%{FILEFLAGS:fflags}|%{FILENAMES}\\n]"');
    expect(script).toContain('case $flags in *n*) continue ;; esac');
  });

  it('moves the auto-installable distributions of rhnKickstartableTree to /srv/www/distributions/<org>-<label>', () => {
    expect(script).toContain("SELECT MIN(CONCAT(org_id,'-',label)) AS target, base_path FROM rhnKickstartableTree GROUP BY base_path");
    expect(script).toContain('dist_root=/srv/www/distributions');
    expect(script).toContain('$MIGRATION_DIR/distributions.csv');
  });

  it('takes the ssh key from Secret uyuni-migration-key (key, key.pub; key 0600) and config, known_hosts from ConfigMap uyuni-migration-ssh, under /root/.ssh', () => {
    expect(volume(job, 'ssh-key').secret).toMatchObject({ secretName: 'uyuni-migration-key', items: [{ key: 'key', path: 'key', mode: 0o600 }, { key: 'key.pub', path: 'key.pub', mode: 0o644 }] });
    expect(volume(job, 'ssh-config').configMap).toMatchObject({ name: 'uyuni-migration-ssh', items: [{ key: 'config', path: 'config' }, { key: 'known_hosts', path: 'known_hosts' }] });
    expect(c.volumeMounts.filter((x: any) => x.name.startsWith('ssh-')).map(mountLine)).toEqual([
      'ssh-key -> /root/.ssh/key [key] (ro)', 'ssh-key -> /root/.ssh/key.pub [key.pub] (ro)',
      'ssh-config -> /root/.ssh/config [config] (ro)', 'ssh-config -> /root/.ssh/known_hosts [known_hosts] (ro)',
    ]);
    expect(requirement(m, 'uyuni-migration-key')).toMatchObject({ kind: 'Secret', keys: ['key', 'key.pub'], ifMissing: 'fail' });
    expect(requirement(m, 'uyuni-migration-ssh')).toMatchObject({ kind: 'ConfigMap', keys: ['config', 'known_hosts'], ifMissing: 'fail' });
  });

  it('points rhn.conf at db and reportdb and marks the copy as set up in /var/spacewalk/.MANAGER_SETUP_COMPLETE', () => {
    expect(script).toContain('set_conf db_host db');
    expect(script).toContain('set_conf report_db_host reportdb');
    expect(script).toContain('marker=$TARGET_ROOT/var/spacewalk/.MANAGER_SETUP_COMPLETE');
    expect(script).toContain('touch "$marker"');
  });

  it('copies ahead like migrate --prepare (Job uyuni-data-presync, PREPARE=true): nothing stopped, no database, no credentials', () => {
    const presync = synth(MIGRATION)['migrate-prepare'];
    expect(presync.plan.steps.map((s) => s.name)).toEqual(['namespace', 'volumes', 'data-presync']);
    const pre = podSpec(presync.find('Job', 'uyuni-data-presync')).containers[0];
    expect(envLines(pre)).toContain('PREPARE=true');
    expect(envLines(c)).toContain('PREPARE=false');
    expect(pre.command[pre.command.length - 1]).toBe(script);
    expect(script).toMatch(/if \[ "\$prepare" = false \]; then\n\s+say "stopping spacewalk-service on \$SOURCE_FQDN"/);
    expect(script).toContain('if [ "$path" = /var/lib/pgsql ] && [ "$prepare" = true ]; then');
    expect(presync.step('data-presync').requires.map((r) => r.name)).toEqual(['uyuni-migration-key', 'uyuni-migration-ssh']);
  });

  it('records timezone, hub XML-RPC, Java debugging and TFTP of the old server, and checks the configuration against them', () => {
    for (const fact of ['timezone', 'has_hub', 'debug_java', 'tftp_enabled']) expect(script).toContain(`echo "${fact}=$${fact}"`);
    const gates = m.step('import-secrets').gates;
    const equals = (fact: string) => gates.find((g) => g.type === 'equals' && 'fact' in g.left && g.left.fact === fact);
    expect(equals('timezone')).toMatchObject({ right: { value: 'Etc/UTC' } });
    expect(equals('has_hub')).toMatchObject({ right: { value: 'false' } });
    expect(equals('debug_java')).toMatchObject({ right: { value: 'false' } });
    expect(equals('tftp_enabled')).toMatchObject({ right: { value: 'false' } });
  });

  it('makes db-credentials and reportdb-credentials from the old rhn.conf in Job uyuni-import-secrets, never generated: the migrated database keeps its users (decision h)', () => {
    // the data sync keeps the four values in a 0600 file of migration-data, never in the facts
    expect(script).toContain('for key in db_user db_password report_db_user report_db_password; do');
    expect(script).toContain('chmod 0600 "$MIGRATION_DIR/secrets.new"');
    const importer = podSpec(m.find('Job', 'uyuni-import-secrets'));
    expect(importer.serviceAccountName).toBe('uyuni-migration-importer');
    expect(importer.containers[0].volumeMounts.map(mountLine)).toEqual(['migration-data -> /var/lib/uyuni-tools (ro)']);
    const database = m.step('database');
    for (const name of ['db-credentials', 'reportdb-credentials']) {
      const r = database.requires.find((x) => x.name === name);
      expect(r).toMatchObject({ ifMissing: 'fail', keys: ['username', 'password'] });
      expect(r?.generate).toBeUndefined();
      expect(r?.message).toContain('Job uyuni-import-secrets');
    }
    expect(m.step('data-sync').requires.map((r) => r.name)).toEqual(['uyuni-migration-key', 'uyuni-migration-ssh', 'uyuni-ca-password']);
  });

  it('takes the old CA only when /root/ssl-build signed the deployed one, its key decrypted with the CA password in the cluster', () => {
    expect(script).toContain('ca_fingerprint_match=true');
    expect(script).toContain('fetch /etc/pki/tls/certs/spacewalk.crt "$ca/spacewalk.crt" 0644');
    expect(m.step('import-secrets').gates).toContainEqual(expect.objectContaining({ type: 'equals', left: { fact: 'ca_fingerprint_match' }, right: { value: 'true' } }));
    const env = envLines(podSpec(m.find('Job', 'uyuni-import-secrets')).containers[0]);
    expect(env).toEqual(expect.arrayContaining(['IMPORT_CA=true', 'CA_PASSWORD<-secret:uyuni-ca-password/password']));
    expect(requirement(m, 'uyuni-ca').message).toContain('Job uyuni-import-secrets');
  });

  it('starts no server before its data is upgraded: Deployment uyuni comes last, after db-upgrade and db-finalize', () => {
    const order = m.plan.steps.map((s) => s.name);
    expect(order).toEqual([
      'namespace', 'volumes', 'stop-server', 'stop-db', 'data-sync', 'inspect', 'inspect-db', 'import-secrets', 'tls', 'db-upgrade',
      'services', 'database', 'db-finalize', 'ingress', 'server', 'cleanup',
    ]);
  });
});

// --- proxy ----------------------------------------------------------------------------------

describe('proxy-helm templates/deployment.yaml @ 1ad19a5d and services @ fea31ed6 (plan proxy)', () => {
  const p = synth({ proxy: { fqdn: 'proxy.example.com' }, plans: ['proxy'] }).proxy;

  it('runs proxy-httpd, proxy-salt-broker, proxy-squid, proxy-ssh and proxy-tftpd from the configured registry and tag', () => {
    // TFTP runs in its own Deployment uyuni-proxy-tftp (proxy-helm tftp.yaml @ 90890532).
    const images = ['uyuni-proxy', 'uyuni-proxy-tftp'].flatMap((d) => podSpec(p.find('Deployment', d)).containers.map((c: any) => c.image));
    expect(images).toEqual(['httpd', 'salt-broker', 'squid', 'ssh', 'tftpd'].map((n) => `registry.opensuse.org/uyuni/proxy-${n}:2026.08`));
  });

  it('renders Services web (80, 443), salt (4505, 4506), ssh (8022 -> 22) and tftp (69/UDP)', () => {
    const ports = Object.fromEntries(all(p, 'Service').map((s) => [s.metadata.name, s.spec.ports.map((x: any) => `${x.port}/${x.protocol}->${x.targetPort}`)]));
    expect(ports).toEqual({
      web: ['80/TCP->80', '443/TCP->443'],
      salt: ['4505/TCP->4505', '4506/TCP->4506'],
      ssh: ['8022/TCP->22'],
      tftp: ['69/UDP->69'],
    });
  });

  it('claims the squid cache as PVC squid-cache', () => {
    expect(names(p, 'PersistentVolumeClaim')).toEqual(['squid-cache']);
  });
});
