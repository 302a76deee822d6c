import * as fs from 'fs';
import * as path from 'path';
import { PLAN_FORMAT_VERSION } from '../src/plan/types';
import {
  defaultConfigWith, envOf, podSpec, ROOT, SynthesizedPlan, synthYaml,
} from './helpers/synth';
import { K8sObject, validateObject } from './helpers/validate';
import { archiveCommand } from '../src/model/db';

/** Kinds without a schema model (CRDs of Traefik): checked by their own construct tests. */
const UNMODELLED = new Set(['traefik.io/v1alpha1 Middleware', 'traefik.io/v1alpha1 IngressRouteTCP']);

/**
 * The install plan of the committed configuration with changes on top. Every object of every
 * plan built here is validated against its schema; only Traefik's CRD kinds have none.
 */
const install = (changes: Record<string, unknown> = {}): SynthesizedPlan => {
  const plan = synthYaml(defaultConfigWith(changes)).install;
  for (const o of plan.objects) {
    if (UNMODELLED.has(`${o.apiVersion} ${o.kind}`)) continue;
    validateObject(o);
  }
  return plan;
};
/** The configuration error a change causes (synth refuses it). */
const configError = (changes: Record<string, unknown>): string => {
  try {
    synthYaml(defaultConfigWith(changes));
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error('the configuration was accepted');
};

const byKind = (p: SynthesizedPlan, kind: string) => p.objects.filter((o) => o.kind === kind);
const names = (objects: K8sObject[]) => objects.map((o) => o.metadata.name);
const has = (p: SynthesizedPlan, kind: string, name: string) => p.objects.some((o) => o.kind === kind && o.metadata.name === name);
const stepObjects = (p: SynthesizedPlan, step: string) => p.files[p.step(step).file].map((o) => `${o.kind}/${o.metadata.name}`);
/** Every text the plan consists of: the step files and uyuni.plan. */
const planText = (p: SynthesizedPlan) => [...Object.values(p.text), JSON.stringify(p.plan)].join('\n');
const server = (p: SynthesizedPlan) => p.find('Deployment', 'uyuni');
const mainContainer = (p: SynthesizedPlan) => podSpec(server(p)).containers[0];
const containerPorts = (o: K8sObject) => podSpec(o).containers[0].ports.map((x: any) => `${x.containerPort}/${x.protocol ?? 'TCP'}`).sort();
/** A Service as the chart's table describes it: type, the component it selects, its ports. */
const serviceShape = (svc: K8sObject) => ({
  type: svc.spec.type,
  component: svc.spec.selector['app.kubernetes.io/component'],
  ports: svc.spec.ports.map((p: any) => `${p.name} ${p.port}/${p.protocol}->${p.targetPort}`),
});
const services = (p: SynthesizedPlan) => Object.fromEntries(byKind(p, 'Service').map((s) => [s.metadata.name, serviceShape(s)]));

const SERVER_STEPS = ['namespace', 'volumes', 'tls', 'services', 'database', 'ingress', 'server'];

/** The chart's 25 server claims (server-helm 2026.08) with their default sizes, and PostgreSQL 18's. */
const CHART_CLAIMS: Record<string, string> = {
  'var-cobbler': '10Mi',
  'var-search': '10Gi',
  'var-salt': '10Mi',
  'var-cache': '10Gi',
  'var-spacewalk': '100Gi',
  'var-log': '2Gi',
  'srv-salt': '10Mi',
  'srv-www': '100Gi',
  'srv-tftpboot': '300Mi',
  'srv-formulametadata': '10Mi',
  'srv-pillar': '10Mi',
  'srv-susemanager': '1Mi',
  'srv-spacewalk': '10Mi',
  'ca-certs': '10Mi',
  'run-salt-master': '10Mi',
  'etc-apache2': '1Mi',
  'etc-systemd-multi': '1Mi',
  'etc-systemd-sockets': '1Mi',
  'etc-salt': '1Mi',
  'etc-tomcat': '1Mi',
  'etc-cobbler': '1Mi',
  'etc-sysconfig': '20Mi',
  'etc-postfix': '1Mi',
  'etc-sssd': '1Mi',
  'etc-rhn': '1Mi',
  'var-pgsql18': '50Gi',
};

/** The Services of the default configuration (docs/upstream.md: monitoring on, no debug, hub API or TFTP). */
const DEFAULT_SERVICES = {
  cobbler: { type: 'ClusterIP', component: 'server', ports: ['cobbler 25151/TCP->25151'] },
  db: { type: 'ClusterIP', component: 'db', ports: ['pgsql 5432/TCP->5432'] },
  reportdb: { type: 'ClusterIP', component: 'db', ports: ['pgsql 5432/TCP->5432'] },
  salt: { type: 'ClusterIP', component: 'server', ports: ['publish 4505/TCP->4505', 'request 4506/TCP->4506'] },
  'taskomatic-internal': { type: 'ClusterIP', component: 'server', ports: ['jmx 5557/TCP->5557', 'mtrx 9800/TCP->9800'] },
  'tomcat-internal': {
    type: 'ClusterIP', component: 'server', ports: ['node-exporter 9100/TCP->9100', 'jmx 5556/TCP->5556', 'pgsql-exporter 9187/TCP->9187'],
  },
  web: { type: 'ClusterIP', component: 'server', ports: ['http 80/TCP->80'] },
};

/** The server container's ports of the chart (§2.2) by default: no 443, 69 or 5432. */
const DEFAULT_SERVER_PORTS = ['80', '4505', '4506', '25151', '9100', '5556', '5557', '9187', '9800'];
const tcp = (ports: string[]) => ports.map((p) => `${p}/TCP`).sort();

/** A salt Service that needs no Traefik route. */
const SALT_LB = { services: { salt: { type: 'LoadBalancer' } } };

describe('the install plan of the default configuration', () => {
  const plan = install();

  it('runs the steps namespace, volumes, tls, services, database, ingress, server, one file each', () => {
    expect(plan.plan.formatVersion).toBe(PLAN_FORMAT_VERSION);
    expect(plan.plan.name).toBe('install');
    expect(plan.plan.steps.map((s) => s.name)).toEqual(SERVER_STEPS);
    expect(plan.plan.steps.map((s) => s.file)).toEqual(SERVER_STEPS.map((s, i) => `${String(i).padStart(4, '0')}-${s}.k8s.yaml`));
    expect(Object.keys(plan.files)).toEqual(plan.plan.steps.map((s) => s.file));
  });

  it('lists in uyuni.plan exactly the objects of each step file, in file order', () => {
    for (const step of plan.plan.steps) {
      const inFile = plan.files[step.file].map((o) => ({
        apiVersion: o.apiVersion, kind: o.kind, name: o.metadata.name, ...(o.metadata.namespace ? { namespace: o.metadata.namespace } : {}),
      }));
      expect({ step: step.name, objects: step.objects }).toEqual({ step: step.name, objects: inFile });
    }
  });

  it('puts each object into its step', () => {
    expect(stepObjects(plan, 'namespace')).toEqual(['Namespace/uyuni']);
    expect(stepObjects(plan, 'volumes')).toEqual(Object.keys(CHART_CLAIMS).map((c) => `PersistentVolumeClaim/${c}`));
    expect(stepObjects(plan, 'tls')).toEqual([
      'Issuer/uyuni-root-issuer', 'Certificate/uyuni-ca', 'Issuer/uyuni-issuer', 'Certificate/uyuni-cert', 'Certificate/db-cert',
    ]);
    // uyuni-config before the first pod that reads it (the db-waiter of the server)
    expect(stepObjects(plan, 'services')).toEqual([...Object.keys(DEFAULT_SERVICES).map((s) => `Service/${s}`), 'ConfigMap/uyuni-config']);
    expect(stepObjects(plan, 'database')).toEqual(['Deployment/db']);
    expect(stepObjects(plan, 'ingress')).toEqual([
      'Middleware/uyuni-https-redirect', 'Middleware/uyuni-strip-prefixes',
      'IngressRouteTCP/salt-publish-route', 'IngressRouteTCP/salt-request-route',
      'Ingress/uyuni-ingress-ssl', 'Ingress/exporters-ingress-ssl', 'Ingress/uyuni-ingress-ssl-redirect', 'Ingress/uyuni-ingress-nossl',
    ]);
    expect(stepObjects(plan, 'server')).toEqual(['Deployment/uyuni']);
  });

  it('waits for each object by its kind', () => {
    const byKindWait: Record<string, string> = {
      Namespace: 'exists',
      PersistentVolumeClaim: 'bound',
      Issuer: 'ready',
      Certificate: 'ready',
      Service: 'exists',
      Deployment: 'rollout',
      Middleware: 'exists',
      IngressRouteTCP: 'exists',
      Ingress: 'exists',
      ConfigMap: 'exists',
    };
    for (const step of plan.plan.steps) {
      expect(step.waits).toEqual(step.objects.map((object) => ({ object, for: byKindWait[object.kind] })));
    }
    expect(Object.keys(byKindWait).sort()).toEqual([...new Set(plan.objects.map((o) => o.kind))].sort());
  });

  it('gives the server start the 10 hours of its startup probe, the database its own timeout, every other step the default', () => {
    const timeouts = Object.fromEntries(plan.plan.steps.map((s) => [s.name, s.timeoutSeconds]));
    expect(timeouts).toEqual({ namespace: 600, volumes: 600, tls: 600, services: 600, database: 3600, ingress: 600, server: 36000 });
    expect(plan.plan.deadlineSeconds).toBe(7 * 86400);
  });

  it('requires the database credentials before the database and the admin credentials before the server, generated when missing', () => {
    const requires = Object.fromEntries(plan.plan.steps.map((s) => [s.name, s.requires.map((r) => r.name)]));
    expect(requires).toEqual({
      namespace: [], volumes: [], tls: [], services: [],
      database: ['db-admin-credentials', 'db-credentials', 'reportdb-credentials'],
      ingress: [],
      server: ['admin-credentials'],
    });
    const users: Record<string, string> = {
      'db-admin-credentials': 'postgres', 'db-credentials': 'spacewalk', 'reportdb-credentials': 'pythia_susemanager', 'admin-credentials': 'admin',
    };
    for (const r of plan.plan.steps.flatMap((s) => s.requires)) {
      expect(r).toMatchObject({ kind: 'Secret', namespace: 'uyuni', keys: ['username', 'password'], ifMissing: 'generate' });
      expect(r.generate).toEqual({ username: { literal: users[r.name] }, password: { random: { length: 32 } } });
    }
  });

  it('writes no Secret and no secret value: every password comes from a Secret at run time', () => {
    expect(byKind(plan, 'Secret')).toEqual([]);
    expect(planText(plan)).not.toMatch(/kind: Secret\b/);
    const pods = [...byKind(plan, 'Deployment')].map(podSpec);
    const envs = pods.flatMap((p) => [...(p.initContainers ?? []), ...p.containers]).flatMap((c: any) => c.env ?? []);
    const secretish = envs.filter((e: any) => /pass|_user$/i.test(e.name));
    expect(secretish.length).toBeGreaterThan(0);
    for (const e of secretish) {
      expect(e).not.toHaveProperty('value');
      expect(e.valueFrom.secretKeyRef).toEqual({ name: expect.stringMatching(/-credentials$/), key: expect.stringMatching(/^(username|password)$/) });
    }
  });

  it('contains no mgr-setup, no setup Job, no NO_SSL or UYUNI_FQDN and no host cgroup anywhere', () => {
    const text = planText(plan);
    for (const word of ['mgr-setup', 'NO_SSL', 'UYUNI_FQDN', 'DEBUG_LONG_START', 'setup-waiter', 'uyuni-setup', 'hostPath']) {
      expect({ word, found: text.includes(word) }).toEqual({ word, found: false });
    }
    expect(byKind(plan, 'Job')).toEqual([]);
    expect(text).not.toMatch(/hostPath:\s*\n\s*path: \/sys\/fs\/cgroup/);
  });

  it('claims exactly the chart\'s 25 server claims and var-pgsql18, ReadWriteOnce, in the configured class', () => {
    const pvcs = byKind(plan, 'PersistentVolumeClaim');
    expect(names(pvcs)).toEqual(Object.keys(CHART_CLAIMS));
    for (const pvc of pvcs) {
      expect(pvc.spec.accessModes).toEqual(['ReadWriteOnce']);
      expect(pvc.spec.storageClassName).toBe('standard');
      expect(pvc.spec.resources.requests.storage).toBe(CHART_CLAIMS[pvc.metadata.name]);
    }
    for (const gone of ['root', 'var-pgsql', 'etc-tls']) expect(has(plan, 'PersistentVolumeClaim', gone)).toBe(false);
  });

  it('makes the Services of the chart\'s table', () => {
    expect(services(plan)).toEqual(DEFAULT_SERVICES);
    for (const svc of byKind(plan, 'Service')) {
      for (const p of svc.spec.ports) expect(p).not.toHaveProperty('nodePort');
      expect(svc.spec).not.toHaveProperty('externalTrafficPolicy');
    }
  });

  it('opens the chart\'s container ports on the server and 5432 on the database', () => {
    expect(containerPorts(server(plan))).toEqual(tcp(DEFAULT_SERVER_PORTS));
    expect(containerPorts(plan.find('Deployment', 'db'))).toEqual(['5432/TCP']);
  });

  it('chains the generated CA through cert-manager', () => {
    expect(plan.find('Issuer', 'uyuni-root-issuer').spec).toEqual({ selfSigned: {} });
    expect(plan.find('Certificate', 'uyuni-ca').spec).toMatchObject({
      isCA: true, commonName: 'uyuni.example.com', secretName: 'uyuni-ca', duration: '87600h',
      subject: { countries: ['DE'], provinces: ['Bayern'], localities: ['Nuernberg'], organizations: ['Uyuni'], organizationalUnits: ['Uyuni'] },
    });
    expect(plan.find('Issuer', 'uyuni-issuer').spec).toEqual({ ca: { secretName: 'uyuni-ca' } });
    expect(plan.find('Certificate', 'uyuni-cert').spec).toMatchObject({ dnsNames: ['uyuni.example.com'], duration: '8760h', renewBefore: '720h' });
    expect(plan.find('Certificate', 'db-cert').spec).toMatchObject({ commonName: 'reportdb', dnsNames: ['db', 'reportdb', 'uyuni.example.com'] });
  });

  it('routes HTTP(S) through Traefik, salt through IngressRouteTCP, in the plan\'s namespace', () => {
    expect(plan.find('IngressRouteTCP', 'salt-publish-route').spec.routes[0].services).toEqual([{ name: 'salt', port: 4505 }]);
    expect(plan.find('IngressRouteTCP', 'salt-request-route').spec.routes[0].services).toEqual([{ name: 'salt', port: 4506 }]);
    for (const ingress of byKind(plan, 'Ingress')) expect(ingress.spec.ingressClassName).toBe('traefik');
    expect(plan.find('Ingress', 'uyuni-ingress-ssl').metadata.annotations!['traefik.ingress.kubernetes.io/router.middlewares'])
      .toBe('uyuni-uyuni-strip-prefixes@kubernetescrd');
  });

  it('configures the server through ConfigMap uyuni-config: the FQDN and root@<fqdn> as the image would', () => {
    expect(plan.find('ConfigMap', 'uyuni-config').data).toMatchObject({ fqdn: 'uyuni.example.com', email: 'root@uyuni.example.com' });
  });

  it('runs the current images of the configured registry and tag', () => {
    const images = (o: K8sObject) => [...(podSpec(o).initContainers ?? []), ...podSpec(o).containers].map((c: any) => c.image);
    expect(images(server(plan))).toEqual(Array(3).fill('registry.opensuse.org/uyuni/server:2026.08'));
    // data-dir (an ext4 volume's lost+found), pods-cidr (db.podsCIDR) and db: all the server-postgresql image
    expect(images(plan.find('Deployment', 'db'))).toEqual(Array(3).fill('registry.opensuse.org/uyuni/server-postgresql:2026.08'));
  });

  it('runs the server as the chart: one replica, recreated, no command, container=oci and UYUNI_HOSTNAME from uyuni-config', () => {
    const dep = server(plan);
    expect(dep.spec.replicas).toBe(1);
    expect(dep.spec.strategy).toEqual({ type: 'Recreate' });
    const c = mainContainer(plan);
    expect(c).not.toHaveProperty('command');
    expect(envOf(dep)).toMatchObject({ container: 'oci', TZ: 'Etc/UTC', MANAGER_DB_HOST: 'db', REPORT_DB_HOST: 'reportdb' });
    expect(c.env).toContainEqual({ name: 'UYUNI_HOSTNAME', valueFrom: { configMapKeyRef: { name: 'uyuni-config', key: 'fqdn' } } });
    expect(podSpec(dep).initContainers.map((x: any) => x.name)).toEqual(['init-volumes', 'db-waiter']);
    expect(podSpec(dep).volumes).toContainEqual({ name: 'sys-fs-cgroup', emptyDir: {} });
  });

  it('labels every object part-of uyuni, managed-by uyuni-cdk, with a component, the plan and its step', () => {
    for (const step of plan.plan.steps) {
      for (const o of plan.files[step.file]) {
        expect(o.metadata.labels).toMatchObject({
          'app.kubernetes.io/part-of': 'uyuni',
          'app.kubernetes.io/managed-by': 'uyuni-cdk',
          'app.kubernetes.io/component': expect.any(String),
          'uyuni-cdk.io/plan': 'install',
          'uyuni-cdk.io/step': step.name,
        });
      }
    }
  });

  it('puts every namespaced object in the configured namespace, so each file applies on its own', () => {
    for (const [file, objects] of Object.entries(plan.files)) {
      expect(objects.length).toBeGreaterThan(0);
      for (const o of objects) {
        if (o.kind === 'Namespace') expect(o.metadata.namespace).toBeUndefined();
        else expect({ file, ns: o.metadata.namespace }).toEqual({ file, ns: 'uyuni' });
      }
    }
  });

  it('validates every object against its schema; only Traefik\'s CRD kinds have none', () => {
    for (const o of plan.objects) {
      if (UNMODELLED.has(`${o.apiVersion} ${o.kind}`)) expect(() => validateObject(o)).toThrow(/no schema model/);
      else expect(() => validateObject(o)).not.toThrow();
    }
  });
});

describe('the install plan follows the configuration', () => {
  describe('timeouts', () => {
    it('gives the server step a longer timeout when configured', () => {
      expect(install({ timeouts: { serverStartSeconds: 43200 } }).step('server').timeoutSeconds).toBe(43200);
      expect(install({ timeouts: { dbStartSeconds: 7200, defaultStepSeconds: 900 } }).plan.steps.map((s) => s.timeoutSeconds))
        .toEqual([900, 900, 900, 900, 7200, 900, 36000]);
    });

    it('refuses a server timeout below the startup probe\'s 10 hours', () => {
      expect(configError({ timeouts: { serverStartSeconds: 35999 } })).toMatch(/timeouts\.serverStartSeconds: must be at least 36000/);
    });
  });

  describe('credentials', () => {
    it('requires the named SCC Secret before the server step, without generating it', () => {
      const p = install({ server: { sccSecret: 'scc-credentials' } });
      const [admin, scc, ...rest] = p.step('server').requires;
      expect(rest).toEqual([]);
      expect(admin.name).toBe('admin-credentials');
      expect(scc).toMatchObject({ kind: 'Secret', name: 'scc-credentials', namespace: 'uyuni', keys: ['username', 'password'], ifMissing: 'fail' });
      expect(scc.generate).toBeUndefined();
      expect(scc.message).toContain('server.sccSecret');
      expect(scc.message).toContain('kubectl -n uyuni create secret generic scc-credentials');
      expect(mainContainer(p).env).toContainEqual({ name: 'SCC_PASS', valueFrom: { secretKeyRef: { name: 'scc-credentials', key: 'password' } } });
    });
  });

  describe('volumes', () => {
    it('writes the chart\'s default sizes and leaves the class to the cluster without any volume settings', () => {
      const p = install({ volumes: { storageClass: undefined, overrides: undefined } });
      const pvcs = byKind(p, 'PersistentVolumeClaim');
      expect(Object.fromEntries(pvcs.map((o) => [o.metadata.name, o.spec.resources.requests.storage]))).toEqual(CHART_CLAIMS);
      for (const pvc of pvcs) expect(pvc.spec).not.toHaveProperty('storageClassName');
    });

    it('writes every setting of volumes.overrides.<claim> on that claim only', () => {
      const selector = { matchLabels: { disk: 'nvme' } };
      const p = install({
        volumes: {
          overrides: {
            'srv-www': {
              size: '500Gi', storageClass: 'fast-ssd', labels: { tier: 'www' }, annotations: { 'backup/policy': 'daily' }, volumeName: 'pv-www', selector,
            },
            'var-pgsql18': { size: '80Gi', storageClass: '-' },
          },
        },
      });
      const www = p.find('PersistentVolumeClaim', 'srv-www');
      expect(www.spec).toMatchObject({ storageClassName: 'fast-ssd', volumeName: 'pv-www', selector, resources: { requests: { storage: '500Gi' } } });
      expect(www.metadata.labels).toMatchObject({ tier: 'www', 'app.kubernetes.io/part-of': 'uyuni' });
      expect(www.metadata.annotations).toEqual({ 'backup/policy': 'daily', 'argocd.argoproj.io/sync-wave': expect.any(String) });
      const pg = p.find('PersistentVolumeClaim', 'var-pgsql18');
      expect(pg.spec.resources.requests.storage).toBe('80Gi');
      expect(pg.spec).toHaveProperty('storageClassName', '');
      const log = p.find('PersistentVolumeClaim', 'var-log');
      expect(log.spec).toEqual({ accessModes: ['ReadWriteOnce'], storageClassName: 'standard', resources: { requests: { storage: '2Gi' } } });
      expect(log.metadata.annotations).toEqual({ 'argocd.argoproj.io/sync-wave': expect.any(String) });
      expect(log.metadata.labels).not.toHaveProperty('tier');
    });

    it('turns dynamic provisioning off for every claim with volumes.storageClass "-"', () => {
      for (const pvc of byKind(install({ volumes: { storageClass: '-' } }), 'PersistentVolumeClaim')) {
        expect(pvc.spec).toHaveProperty('storageClassName', '');
      }
    });

    it('refuses overrides of claims the chart no longer has', () => {
      for (const claim of ['root', 'etc-tls']) {
        expect(configError({ volumes: { overrides: { [claim]: { size: '1Gi' } } } })).toContain(`volumes.overrides.${claim}: no such claim`);
      }
    });
  });

  describe('Services', () => {
    it('adds search, taskomatic and tomcat with debugJava, their ports and their Traefik routes', () => {
      const p = install({ debugJava: true });
      expect(services(p)).toEqual({
        ...DEFAULT_SERVICES,
        search: { type: 'ClusterIP', component: 'server', ports: ['debug 8002/TCP->8002'] },
        taskomatic: { type: 'ClusterIP', component: 'server', ports: ['debug 8001/TCP->8001'] },
        tomcat: { type: 'ClusterIP', component: 'server', ports: ['debug 8003/TCP->8003'] },
      });
      expect(names(byKind(p, 'Service'))).toEqual(['cobbler', 'db', 'reportdb', 'salt', 'search', 'taskomatic', 'tomcat', 'taskomatic-internal', 'tomcat-internal', 'web']);
      expect(containerPorts(server(p))).toEqual(tcp([...DEFAULT_SERVER_PORTS, '8001', '8002', '8003']));
      expect(envOf(server(p)).DEBUG_JAVA).toBe('true');
      expect(names(byKind(p, 'IngressRouteTCP'))).toEqual(['salt-publish-route', 'salt-request-route', 'tomcat-debug-route', 'search-debug-route', 'tasko-debug-route']);
    });

    it('drops the exporters with monitoring off', () => {
      const p = install({ monitoring: false });
      const { 'taskomatic-internal': _gone, ...rest } = DEFAULT_SERVICES;
      expect(services(p)).toEqual({ ...rest, 'tomcat-internal': { type: 'ClusterIP', component: 'server', ports: ['node-exporter 9100/TCP->9100'] } });
      expect(containerPorts(server(p))).toEqual(tcp(['80', '4505', '4506', '25151', '9100']));
      expect(has(p, 'Ingress', 'exporters-ingress-ssl')).toBe(false);
    });

    it('adds Service hub-xmlrpc and Deployment uyuni-hub-xmlrpc with hubApi, routed at /hub/rpc/api', () => {
      const p = install({ hubApi: { replicas: 2 } });
      expect(services(p)['hub-xmlrpc']).toEqual({ type: 'ClusterIP', component: 'hub-xmlrpc', ports: ['hub 2830/TCP->2830'] });
      expect(stepObjects(p, 'server')).toEqual(['Deployment/uyuni', 'Deployment/uyuni-hub-xmlrpc']);
      const hub = p.find('Deployment', 'uyuni-hub-xmlrpc');
      expect(hub.spec.replicas).toBe(2);
      expect(containerPorts(hub)).toEqual(['2830/TCP']);
      expect(containerPorts(server(p))).toEqual(tcp(DEFAULT_SERVER_PORTS));
      const redirect = p.find('Ingress', 'uyuni-ingress-ssl-redirect').spec.rules[0].http.paths.map((x: any) => x.path);
      expect(redirect).toContain('/hub/rpc/api');
    });

    it('adds Deployment uyuni-coco-attestation with coco', () => {
      const p = install({ coco: { replicas: 1 } });
      expect(stepObjects(p, 'server')).toEqual(['Deployment/uyuni', 'Deployment/uyuni-coco-attestation']);
      expect(services(p)).toEqual(DEFAULT_SERVICES);
    });

    it('serves TFTP from Deployment tftp behind a LoadBalancer Service with tftp.enabled', () => {
      const p = install({ tftp: { enabled: true } });
      expect(services(p).tftp).toEqual({ type: 'LoadBalancer', component: 'tftp', ports: ['tftp 69/UDP->69'] });
      expect(p.find('Service', 'tftp').spec).toMatchObject({ sessionAffinity: 'ClientIP', externalTrafficPolicy: 'Local' });
      expect(stepObjects(p, 'server')).toEqual(['Deployment/uyuni', 'Deployment/tftp']);
      const tftp = p.find('Deployment', 'tftp');
      expect(containerPorts(tftp)).toEqual(['69/UDP']);
      expect(podSpec(tftp)).not.toHaveProperty('hostNetwork');
      expect(podSpec(tftp).containers[0].command).toEqual([
        '/usr/bin/tftp_wrapper.py', '--httpHost', 'web.uyuni.svc', '--proxyFqdn', 'uyuni.example.com', '--serverFqdn', 'uyuni.example.com',
      ]);
      expect(containerPorts(server(p))).toEqual(tcp(DEFAULT_SERVER_PORTS));
    });

    it('runs TFTP in the node\'s network without a Service with tftp.hostNetwork', () => {
      const p = install({ tftp: { enabled: true, hostNetwork: true } });
      expect(has(p, 'Service', 'tftp')).toBe(false);
      expect(podSpec(p.find('Deployment', 'tftp'))).toMatchObject({ hostNetwork: true, dnsPolicy: 'ClusterFirstWithHostNet' });
    });

    it('has no TFTP by default', () => {
      const p = install();
      expect(has(p, 'Deployment', 'tftp')).toBe(false);
      expect(has(p, 'Service', 'tftp')).toBe(false);
    });

    it('exposes a Service as NodePort with the chart\'s or the configured node ports', () => {
      const p = install({ services: { salt: { type: 'NodePort', nodePorts: { publish: 31505 } }, reportdb: { type: 'NodePort' } } });
      expect(p.find('Service', 'salt').spec.ports.map((x: any) => x.nodePort)).toEqual([31505, 30006]);
      expect(p.find('Service', 'reportdb').spec.ports.map((x: any) => x.nodePort)).toEqual([30032]);
    });

    it('writes the annotations of a Service', () => {
      const p = install({ services: { salt: { type: 'LoadBalancer', annotations: { 'metallb.universe.tf/allow-shared-ip': 'uyuni' } } } });
      expect(p.find('Service', 'salt').metadata.annotations).toEqual({ 'metallb.universe.tf/allow-shared-ip': 'uyuni', 'argocd.argoproj.io/sync-wave': expect.any(String) });
    });
  });

  describe('ingress', () => {
    it('routes salt itself, without IngressRouteTCP, when the salt Service is a LoadBalancer or a NodePort', () => {
      for (const type of ['LoadBalancer', 'NodePort']) {
        const p = install({ services: { salt: { type } } });
        expect(byKind(p, 'IngressRouteTCP')).toEqual([]);
        expect(names(byKind(p, 'Middleware'))).toEqual(['uyuni-https-redirect', 'uyuni-strip-prefixes']);
        expect(byKind(p, 'Ingress')).toHaveLength(4);
        expect(p.find('Service', 'salt').spec.type).toBe(type);
      }
      expect(install(SALT_LB).find('Service', 'salt').spec.externalTrafficPolicy).toBe('Local');
    });

    it('writes Ingresses for ingress-nginx without any Traefik object', () => {
      const p = install({ ingress: { type: 'nginx' }, ...SALT_LB });
      expect(p.objects.filter((o) => o.apiVersion.startsWith('traefik.io'))).toEqual([]);
      expect(planText(p)).not.toContain('traefik');
      expect(names(byKind(p, 'Ingress'))).toEqual(['uyuni-ingress-ssl', 'exporters-ingress-ssl', 'uyuni-ingress-nossl']);
      for (const ingress of byKind(p, 'Ingress')) expect(ingress.spec.ingressClassName).toBe('nginx');
      expect(p.find('Ingress', 'uyuni-ingress-nossl').metadata.annotations).toEqual({ 'nginx.ingress.kubernetes.io/ssl-redirect': 'false', 'argocd.argoproj.io/sync-wave': expect.any(String) });
    });

    it('writes the configured ingress class', () => {
      for (const ingress of byKind(install({ ingress: { className: 'public' } }), 'Ingress')) expect(ingress.spec.ingressClassName).toBe('public');
    });

    it('refuses nginx or none with salt on a ClusterIP Service, which nothing would route', () => {
      for (const type of ['nginx', 'none']) {
        expect(configError({ ingress: { type } })).toContain(`services.salt.type: must be LoadBalancer or NodePort with ingress.type ${type}`);
      }
    });

    it('has no ingress step with ingress.type none', () => {
      const p = install({ ingress: { type: 'none' }, ...SALT_LB });
      expect(p.plan.steps.map((s) => s.name)).toEqual(SERVER_STEPS.filter((s) => s !== 'ingress'));
      expect(p.objects.filter((o) => o.kind === 'Ingress' || o.apiVersion.startsWith('traefik.io'))).toEqual([]);
    });
  });

  describe('TLS', () => {
    it('issues from the migrated CA without generating one, requiring its Secret', () => {
      const p = install({ tls: { mode: 'migrated' } });
      expect(stepObjects(p, 'tls')).toEqual(['Issuer/uyuni-issuer', 'Certificate/uyuni-cert', 'Certificate/db-cert']);
      expect(p.step('tls').requires).toEqual([expect.objectContaining({ kind: 'Secret', name: 'uyuni-ca', keys: ['tls.crt', 'tls.key'], ifMissing: 'fail' })]);
    });

    it('makes no cert-manager object with third-party certificates, and requires the user\'s Secrets before the Services', () => {
      const p = install({ tls: { mode: 'third-party' } });
      expect(p.objects.filter((o) => o.apiVersion.startsWith('cert-manager.io'))).toEqual([]);
      expect(p.plan.steps.map((s) => s.name)).toEqual(SERVER_STEPS.filter((s) => s !== 'tls'));
      expect(p.step('services').requires.map((r) => `${r.kind}/${r.name}/${r.ifMissing}/${r.keys.join(',')}`)).toEqual([
        'Secret/uyuni-cert/fail/tls.crt,tls.key,ca.crt', 'Secret/db-cert/fail/tls.crt,tls.key,ca.crt',
      ]);
    });
  });

  describe('images', () => {
    const imageOf = (o: K8sObject) => podSpec(o).containers[0].image;
    const both = { tftp: { enabled: true }, hubApi: { replicas: 1 }, coco: { replicas: 1 } };
    const others = (p: SynthesizedPlan) => ['db', 'tftp', 'uyuni-hub-xmlrpc', 'uyuni-coco-attestation'].map((n) => imageOf(p.find('Deployment', n)));
    const DEFAULT_OTHERS = [
      'registry.opensuse.org/uyuni/server-postgresql:2026.08',
      'registry.opensuse.org/uyuni/shared-tftpd:2026.08',
      'registry.opensuse.org/uyuni/server-hub-xmlrpc-api:2026.08',
      'registry.opensuse.org/uyuni/server-attestation:2026.08',
    ];
    const serverImages = (p: SynthesizedPlan) => [...podSpec(server(p)).initContainers, ...podSpec(server(p)).containers].map((c: any) => c.image);

    it('runs every component from the registry and tag by default', () => {
      const p = install(both);
      expect(serverImages(p)).toEqual(Array(3).fill('registry.opensuse.org/uyuni/server:2026.08'));
      expect(others(p)).toEqual(DEFAULT_OTHERS);
    });

    it('overrides the tag of the server only with images.components.server.tag', () => {
      const p = install({ ...both, images: { components: { server: { tag: '2026.09' } } } });
      expect(serverImages(p)).toEqual(Array(3).fill('registry.opensuse.org/uyuni/server:2026.09'));
      expect(others(p)).toEqual(DEFAULT_OTHERS);
    });

    it('overrides the image of the server only with images.components.server.image', () => {
      const p = install({ ...both, images: { components: { server: { image: 'registry.example.org/custom/server' } } } });
      expect(serverImages(p)).toEqual(Array(3).fill('registry.example.org/custom/server:2026.08'));
      expect(others(p)).toEqual(DEFAULT_OTHERS);
    });

    it('overrides the database image only with images.components.db', () => {
      const p = install({ images: { components: { db: { image: 'registry.example.org/pg', tag: '18.1' } } } });
      expect(imageOf(p.find('Deployment', 'db'))).toBe('registry.example.org/pg:18.1');
      expect(serverImages(p)).toEqual(Array(3).fill('registry.opensuse.org/uyuni/server:2026.08'));
    });

    it('references the image pull secret by name in every pod', () => {
      const p = install({ ...both, images: { pullSecret: 'regcred', pullPolicy: 'Always' } });
      const deployments = byKind(p, 'Deployment');
      expect(deployments).toHaveLength(5);
      for (const d of deployments) {
        expect(podSpec(d).imagePullSecrets).toEqual([{ name: 'regcred' }]);
        for (const c of [...(podSpec(d).initContainers ?? []), ...podSpec(d).containers]) expect(c.imagePullPolicy).toBe('Always');
      }
    });
  });

  describe('the server', () => {
    it('takes the administrator\'s address from server.email', () => {
      expect(install({ server: { email: 'ops@example.com' } }).find('ConfigMap', 'uyuni-config').data.email).toBe('ops@example.com');
    });

    it('maps the server settings onto the server pod', () => {
      const p = install({
        timezone: 'Europe/Berlin',
        server: {
          selinuxType: 'uyuni_container_t',
          systemdLogLevel: 'debug',
          mirror: { claimName: 'mirror-claim' },
          extraVolumes: [{ name: 'trust', configMap: { name: 'trust-anchors' } }],
          extraVolumeMounts: [{ name: 'trust', mountPath: '/usr/share/pki/trust/anchors/custom' }],
        },
      });
      const c = mainContainer(p);
      expect(envOf(server(p))).toMatchObject({ TZ: 'Europe/Berlin', MIRROR_PATH: '/mirror', SYSTEMD_LOG_LEVEL: 'debug' });
      expect(c.tty).toBe(true);
      expect(c.securityContext.seLinuxOptions).toEqual({ level: 's0', type: 'uyuni_container_t' });
      expect(podSpec(server(p)).volumes.slice(-2)).toEqual([
        { name: 'mirror', persistentVolumeClaim: { claimName: 'mirror-claim' } }, { name: 'trust', configMap: { name: 'trust-anchors' } },
      ]);
      expect(c.volumeMounts.slice(-2)).toEqual([{ name: 'mirror', mountPath: '/mirror' }, { name: 'trust', mountPath: '/usr/share/pki/trust/anchors/custom' }]);
      expect(envOf(p.find('Deployment', 'db')).TZ).toBe('Europe/Berlin');
    });

    it('passes server.extraVolumes through as written', () => {
      const scratch = { name: 'scratch', emptyDir: { medium: 'Memory', sizeLimit: '1Gi' } };
      const p = install({ server: { extraVolumes: [scratch], extraVolumeMounts: [{ name: 'scratch', mountPath: '/scratch' }] } });
      expect(podSpec(server(p)).volumes.at(-1)).toEqual(scratch);
    });

    it('runs super-privileged (spc_t) when server.superPrivileged', () => {
      expect(mainContainer(install({ server: { superPrivileged: true } })).securityContext.seLinuxOptions).toEqual({ level: 's0', type: 'spc_t' });
    });
  });

  describe('db.podsCIDR (M4: server-helm README db.podsCIDR, bsc#1270038)', () => {
    const db = (p: SynthesizedPlan) => p.find('Deployment', 'db');
    /** The env of the db pod's init container that writes the rule (src/scripts/db-pods-cidr.sh). */
    const cidrOf = (p: SynthesizedPlan): string | undefined => {
      const init = (podSpec(db(p)).initContainers ?? []).find((c: any) => c.name === 'pods-cidr');
      return init?.env.find((e: any) => e.name === 'PODS_CIDR')?.value;
    };

    it('writes the upstream default 10.42.0.0/16 into pg_hba_custom.conf from init container pods-cidr, after data-dir', () => {
      const spec = podSpec(db(install()));
      expect(spec.initContainers.map((c: any) => c.name)).toEqual(['data-dir', 'pods-cidr']);
      const init = spec.initContainers[1];
      expect(init.command).toEqual(['sh', '-c', expect.stringContaining('pg_hba_custom.conf')]);
      expect(init.env).toEqual([{ name: 'PGDATA', value: '/var/lib/pgsql/data' }, { name: 'PODS_CIDR', value: '10.42.0.0/16' }]);
      expect(init.volumeMounts).toEqual([{ name: 'var-pgsql', mountPath: '/var/lib/pgsql/data' }]);
      expect(init.image).toBe(spec.containers[0].image);
      expect(cidrOf(install())).toBe('10.42.0.0/16');
    });

    it('no longer passes PODS_CIDR to the database container, which no image script reads', () => {
      expect(envOf(db(install()))).not.toHaveProperty('PODS_CIDR');
    });

    it('writes a configured IPv4 or IPv6 pod network, in the upgrade plan too', () => {
      expect(cidrOf(install({ db: { podsCIDR: '10.8.0.0/14' } }))).toBe('10.8.0.0/14');
      expect(cidrOf(install({ db: { podsCIDR: 'fd00:10:42::/56' } }))).toBe('fd00:10:42::/56');
      const upgrade = synthYaml(defaultConfigWith({ upgrade: { postgresql: { from: 18 } }, db: { podsCIDR: '2001:db8::/48' } })).upgrade;
      expect(cidrOf(upgrade)).toBe('2001:db8::/48');
    });

    it.each([
      ['10.42.0.0', 'must be a network in CIDR notation'],
      ['10.42.0.0/33', 'must have a prefix length of at most 32 for an IPv4 network'],
      ['10.42.1.0/16', 'must be the network address of the range (no host bits set after /16)'],
      ['256.1.0.0/16', 'must be a network in CIDR notation'],
      ['010.42.0.0/16', 'must be a network in CIDR notation'],
      ['fd00::1::/64', 'must be a network in CIDR notation'],
      ['fd00:10:42::1/56', 'must be the network address of the range (no host bits set after /56)'],
      ['fd00::/129', 'must have a prefix length of at most 128 for an IPv6 network'],
      ['::ffff:10.42.0.0/200', 'must have a prefix length of at most 128 for an IPv6 network'],
      ['10.42.0.0/16; DROP', 'must be a network in CIDR notation'],
    ])('refuses db.podsCIDR %s, naming the field', (value, message) => {
      expect(configError({ db: { podsCIDR: value } })).toContain(`db.podsCIDR: ${message}`);
    });

    it('accepts the whole address space, IPv4-mapped and full IPv6 forms', () => {
      for (const v of ['0.0.0.0/0', '::/0', '::ffff:10.42.0.0/112', '2001:0db8:0000:0000:0000:0000:0000:0000/32', '192.168.1.128/25']) {
        expect(cidrOf(install({ db: { podsCIDR: v } }))).toBe(v);
      }
    });

    it('still refuses an external database: db.enable, db.internal and db.report', () => {
      expect(configError({ db: { enable: false } })).toContain('db.enable: removed: PostgreSQL always runs in Deployment db');
      expect(configError({ db: { internal: { host: 'pg.example.com' } } })).toContain('db.internal: removed: PostgreSQL always runs in Deployment db');
    });
  });

  describe('db.archiving (uyuni-tools b6ad4452 mgradm/cmd/backup/db/enable.go, shared/utils/volumes.go)', () => {
    const db = (p: SynthesizedPlan) => p.find('Deployment', 'db');
    const on = () => install({ db: { archiving: { enabled: true, size: '20Gi' } } });

    it('is off by default: no WAL claim, no archiving init container, no archive mount', () => {
      const p = install();
      expect(p.objects.some((o) => o.kind === 'PersistentVolumeClaim' && o.metadata.name === 'var-pgsql-walbackup')).toBe(false);
      expect(podSpec(db(p)).initContainers.map((c: any) => c.name)).not.toContain('archiving');
      expect(JSON.stringify(podSpec(db(p)))).not.toContain('walbackup');
    });

    it('adds upstream\'s claim var-pgsql-walbackup of db.archiving.size and mounts it at /var/lib/pgsql/backup in the db pod', () => {
      const p = on();
      expect(p.find('PersistentVolumeClaim', 'var-pgsql-walbackup').spec.resources.requests.storage).toBe('20Gi');
      const spec = podSpec(db(p));
      expect(spec.volumes).toContainEqual({ name: 'var-pgsql-walbackup', persistentVolumeClaim: { claimName: 'var-pgsql-walbackup' } });
      expect(spec.containers[0].volumeMounts).toContainEqual({ name: 'var-pgsql-walbackup', mountPath: '/var/lib/pgsql/backup' });
    });

    it('sets archive_mode on, wal_level replica and our archive_command in postgresql.conf from init container archiving', () => {
      const spec = podSpec(db(on()));
      expect(spec.initContainers.map((c: any) => c.name)).toEqual(['data-dir', 'pods-cidr', 'archiving']);
      const init = spec.initContainers[2];
      expect(init.command).toEqual(['sh', '-c', expect.stringContaining('postgresql.conf')]);
      const env = Object.fromEntries(init.env.map((e: any) => [e.name, e.value]));
      expect(env.ARCHIVE_DIR).toBe('/var/lib/pgsql/backup');
      expect(env.ARCHIVE_SETTINGS.split('\n')).toEqual([
        'wal_level = replica',
        'archive_mode = on',
        `archive_command = '${archiveCommand('/var/lib/pgsql/backup')}'`,
      ]);
      expect(archiveCommand('/var/lib/pgsql/backup')).toContain('/var/lib/pgsql/backup/%f');
      // Only sh, coreutils and sed, what the image's openSUSE postgres base has (no diffutils, no
      // awk); no `$`, which Kubernetes would read as a reference in an env value.
      const words = archiveCommand().split(/[\s;|&]+/).filter((w) => /^[a-z][a-z0-9]*$/.test(w));
      expect([...new Set(words)].sort()).toEqual(['cp', 'else', 'fi', 'if', 'mv', 'sed', 'sha1sum', 'then']);
      expect(archiveCommand()).not.toContain('$');
      expect(init.volumeMounts).toEqual([
        { name: 'var-pgsql', mountPath: '/var/lib/pgsql/data' },
        { name: 'var-pgsql-walbackup', mountPath: '/var/lib/pgsql/backup' },
      ]);
    });

    it('runs container archive-status beside PostgreSQL: the archive read-only, the administrator\'s credentials, the database on 127.0.0.1', () => {
      expect(podSpec(db(install())).containers.map((c: any) => c.name)).toEqual(['db']);
      const spec = podSpec(db(on()));
      expect(spec.containers.map((c: any) => c.name)).toEqual(['db', 'archive-status']);
      const c = spec.containers[1];
      expect(c.command).toEqual(['sh', '-c', expect.stringContaining('pg_stat_archiver')]);
      expect(c.volumeMounts).toEqual([{ name: 'var-pgsql-walbackup', mountPath: '/var/lib/pgsql/backup', readOnly: true }]);
      const env = Object.fromEntries(c.env.map((e: any) => [e.name, e.value ?? e.valueFrom.secretKeyRef.name]));
      expect(env).toEqual({
        PGHOST: '127.0.0.1', PGPORT: '5432', ARCHIVE_DIR: '/var/lib/pgsql/backup', STATUS_INTERVAL: '60',
        POSTGRES_USER: 'db-admin-credentials', POSTGRES_PASSWORD: 'db-admin-credentials',
      });
    });

    it('makes the WAL claim in the upgrade plan too, before the database starts', () => {
      const upgrade = synthYaml(defaultConfigWith({ upgrade: { postgresql: { from: 18 } }, db: { archiving: { enabled: true } } })).upgrade;
      expect(upgrade.find('PersistentVolumeClaim', 'var-pgsql-walbackup').spec.resources.requests.storage).toBe('50Gi');
      const names = upgrade.plan.steps.map((s) => s.name);
      expect(names.indexOf('volumes')).toBeLessThan(names.indexOf('database'));
    });

    it('refuses a size that is not a quantity, naming the field', () => {
      expect(configError({ db: { archiving: { enabled: true, size: 'big' } } })).toContain('db.archiving.size: must be a Kubernetes quantity');
    });

    it('lets the pod network open replication connections (plan db-basebackup\'s pg_basebackup) only with archiving', () => {
      const init = (p: SynthesizedPlan) => podSpec(db(p)).initContainers.find((c: any) => c.name === 'pods-cidr');
      expect(init(install()).env.map((e: any) => e.name)).not.toContain('REPLICATION');
      expect(init(on()).env).toContainEqual({ name: 'REPLICATION', value: 'on' });
    });

    it('writes plan db-basebackup with archiving (uyuni-tools rebase.go @ 2f9b128d): one Job, as PostgreSQL\'s user, on the archive claim, from Service db', () => {
      const out = synthYaml(defaultConfigWith({ db: { archiving: { enabled: true } } }));
      expect(Object.keys(synthYaml(defaultConfigWith({}))).filter((k) => k !== 'root')).not.toContain('db-basebackup');
      const p = out['db-basebackup'];
      expect(p.plan.steps.map((x) => x.name)).toEqual(['prepare', 'basebackup']);
      expect(p.plan.selector['app.kubernetes.io/part-of']).toBe('uyuni-db-archive');
      const job = p.find('Job', 'uyuni-db-basebackup');
      const spec = job.spec.template.spec;
      expect(spec.containers[0].command).toEqual(['sh', '-c', expect.stringContaining('pg_basebackup')]);
      expect(spec.containers[0].securityContext).toMatchObject({ runAsUser: 999, runAsGroup: 999 });
      expect(spec.volumes).toEqual([{ name: 'var-pgsql-walbackup', persistentVolumeClaim: { claimName: 'var-pgsql-walbackup' } }]);
      const env = Object.fromEntries(spec.containers[0].env.map((e: any) => [e.name, e.value ?? e.valueFrom.secretKeyRef.name]));
      expect(env).toMatchObject({ PGHOST: 'db', PGPORT: '5432', ARCHIVE_DIR: '/var/lib/pgsql/backup', POSTGRES_USER: 'db-admin-credentials' });
    });

    it('writes plan db-pitr only with db.archiving.restoreTo: clean stops, the restore (listed as deleting the database), the database, its recovery, the server', () => {
      expect(Object.keys(synthYaml(defaultConfigWith({ db: { archiving: { enabled: true } } })))).not.toContain('db-pitr');
      const p = synthYaml(defaultConfigWith({ db: { archiving: { enabled: true, restoreTo: '2026-12-03T11:00:00Z' } } }))['db-pitr'];
      expect(p.plan.steps.map((x) => x.name)).toEqual(['prepare', 'stop-server', 'stop-db', 'pitr-restore', 'start-db', 'recovery', 'start-server']);
      const restore = p.plan.steps.find((x) => x.name === 'pitr-restore')!;
      expect(restore.destroysData).toContain('everything written after 2026-12-03T11:00:00Z is lost');
      const spec = p.find('Job', 'uyuni-db-pitr-restore').spec.template.spec;
      expect(Object.fromEntries(spec.containers[0].env.map((e: any) => [e.name, e.value]))).toEqual({
        PGDATA: '/var/lib/pgsql/data', ARCHIVE_DIR: '/var/lib/pgsql/backup', TARGET_TIME: '2026-12-03T11:00:00Z',
      });
      expect(spec.containers[0].volumeMounts).toContainEqual({ name: 'var-pgsql-walbackup', mountPath: '/var/lib/pgsql/backup', readOnly: true });
      expect(p.plan.steps.find((x) => x.name === 'start-db')!.actions).toEqual([{ type: 'scale', object: expect.objectContaining({ name: 'db' }), replicas: 1 }]);
    });

    it('refuses a restoreTo that is not a time with its zone, naming the field', () => {
      expect(configError({ db: { archiving: { enabled: true, restoreTo: '2026-12-03 11:00' } } })).toContain('db.archiving.restoreTo: must be a time with its zone');
      expect(configError({ db: { archiving: { enabled: true, restoreTo: '2026-12-03T11:00:00' } } })).toContain('db.archiving.restoreTo: must be a time with its zone');
    });

    it('refuses plan db-basebackup without archiving, naming the field', () => {
      expect(configError({ plans: ['install', 'db-basebackup'] })).toContain('plans[1]: db-basebackup needs db.archiving.enabled: true');
    });
  });

  it('puts everything into the configured namespace and names its Middlewares after it', () => {
    const p = install({ namespace: 'mlm' });
    expect(p.find('Namespace', 'mlm').metadata.namespace).toBeUndefined();
    for (const o of p.objects.filter((x) => x.kind !== 'Namespace')) expect(o.metadata.namespace).toBe('mlm');
    expect(p.plan.steps.flatMap((s) => s.requires).every((r) => r.namespace === 'mlm')).toBe(true);
    expect(p.find('Ingress', 'uyuni-ingress-ssl-redirect').metadata.annotations!['traefik.ingress.kubernetes.io/router.middlewares'])
      .toBe('mlm-uyuni-https-redirect@kubernetescrd');
    expect(podSpec(p.find('Deployment', 'uyuni')).containers[0].env).toContainEqual({ name: 'REPORT_DB_HOST', value: 'reportdb' });
  });
});

describe('the committed default configuration', () => {
  it('is a file at the project root', () => {
    expect(fs.existsSync(path.join(ROOT, 'uyuni.yaml'))).toBe(true);
  });
});
