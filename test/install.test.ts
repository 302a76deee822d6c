import * as fs from 'fs';
import * as path from 'path';
import { SERVER_VOLUMES } from '../src/model/volumes';
import { PLAN_FORMAT_VERSION } from '../src/plan/types';
import { defaultConfigWith, SynthesizedPlan, synthYaml } from './helpers/synth';
import { K8sObject, validateObject } from './helpers/validate';

const install = (changes: Record<string, unknown> = {}): SynthesizedPlan => synthYaml(defaultConfigWith(changes)).install;

const servicePorts = (svc: K8sObject) => svc.spec.ports.map((p: any) => `${p.port}/${p.protocol}`);
const byKind = (p: SynthesizedPlan, kind: string) => p.objects.filter((o) => o.kind === kind);

describe('the install plan of the default configuration', () => {
  const plan = install();

  it('writes ordered step files and a plan index that lists them', () => {
    expect(plan.plan.formatVersion).toBe(PLAN_FORMAT_VERSION);
    expect(plan.plan.steps.map((s) => s.name)).toEqual(['namespace', 'volumes', 'tls', 'services', 'database', 'setup', 'ingress', 'server']);
    expect(Object.keys(plan.files)).toEqual(plan.plan.steps.map((s, i) => `${String(i).padStart(4, '0')}-${s.name}.k8s.yaml`));
  });

  it('lists in plan.json exactly the objects of each step file, in file order', () => {
    for (const step of plan.plan.steps) {
      const inFile = plan.files[step.file].map((o) => `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`);
      expect(step.objects.map((o) => `${o.kind}/${o.namespace ?? ''}/${o.name}`)).toEqual(inFile);
    }
  });

  it('waits for each object by its kind', () => {
    const waits = Object.fromEntries(plan.plan.steps.flatMap((s) => s.waits.map((w) => [`${w.object.kind}/${w.object.name}`, w.for])));
    expect(waits['Job/uyuni-setup']).toBe('complete');
    expect(waits['Deployment/uyuni']).toBe('rollout');
    expect(waits['Deployment/db']).toBe('rollout');
    expect(waits['Certificate/uyuni-cert']).toBe('ready');
    expect(waits['Issuer/uyuni-ca-issuer']).toBe('ready');
    expect(waits['PersistentVolumeClaim/var-pgsql']).toBe('bound');
    expect(waits['Service/web']).toBe('exists');
  });

  it('gives the setup and the server start their own, longer timeouts', () => {
    const step = (n: string) => plan.plan.steps.find((s) => s.name === n)!;
    expect(step('setup').timeoutSeconds).toBe(3600);
    expect(step('server').timeoutSeconds).toBe(1800);
    expect(step('namespace').timeoutSeconds).toBe(600);
  });

  it('splits the Services per logical service, from the port table', () => {
    const services = Object.fromEntries(byKind(plan, 'Service').map((s) => [s.metadata.name, servicePorts(s)]));
    expect(services).toEqual({
      web: ['80/TCP'],
      salt: ['4505/TCP', '4506/TCP'],
      cobbler: ['25151/TCP'],
      db: ['5432/TCP', '9187/TCP'],
      reportdb: ['5432/TCP'],
      taskomatic: ['5556/TCP', '9800/TCP'],
      tomcat: ['5557/TCP'],
      tftp: ['69/UDP'],
    });
  });

  it('serves tftp on 69/UDP, exposed as configured', () => {
    const tftp = plan.find('Service', 'tftp');
    expect(tftp.spec.ports).toEqual([{ name: 'tftp', port: 69, targetPort: 69, protocol: 'UDP' }]);
    expect(tftp.spec.type).toBe('LoadBalancer');
    expect(plan.find('Service', 'web').spec.type).toBe('ClusterIP');
  });

  it('selects the db pods for db and reportdb when the database runs apart', () => {
    expect(plan.find('Service', 'db').spec.selector['app.kubernetes.io/component']).toBe('db');
    expect(plan.find('Service', 'web').spec.selector['app.kubernetes.io/component']).toBe('server');
  });

  it('claims the 27 volumes of the spec, ReadWriteOnce, with their sizes and the configured class', () => {
    const pvcs = byKind(plan, 'PersistentVolumeClaim');
    expect(pvcs).toHaveLength(27);
    for (const spec of SERVER_VOLUMES) {
      const pvc = pvcs.find((p) => p.metadata.name === spec.name)!;
      expect(pvc.spec.accessModes).toEqual(['ReadWriteOnce']);
      expect(pvc.spec.resources.requests.storage).toBe(spec.size);
      expect(pvc.spec.storageClassName).toBe('standard');
    }
    expect(plan.find('PersistentVolumeClaim', 'var-pgsql').spec.resources.requests.storage).toBe('50Gi');
  });

  it('runs one server replica, recreated, with init-volumes first and root made explicit', () => {
    const dep = plan.find('Deployment', 'uyuni');
    expect(dep.spec.replicas).toBe(1);
    expect(dep.spec.strategy).toEqual({ type: 'Recreate' });
    const pod = dep.spec.template.spec;
    expect(pod.initContainers.map((c: any) => c.name)).toEqual(['init-volumes']);
    const init = pod.initContainers[0];
    for (const v of SERVER_VOLUMES.filter((x) => x.name !== 'var-pgsql')) {
      expect(init.volumeMounts).toContainEqual({ name: v.name, mountPath: `/mnt${v.mountPath}` });
    }
    const c = pod.containers[0];
    expect(c.name).toBe('uyuni');
    expect(c.image).toBe('registry.opensuse.org/uyuni/server:2025.10');
    expect(c.imagePullPolicy).toBe('IfNotPresent');
    expect(c.securityContext).toMatchObject({ runAsUser: 0, runAsNonRoot: false, readOnlyRootFilesystem: false });
    expect(pod.securityContext).toMatchObject({ runAsUser: 0, runAsNonRoot: false });
    expect(c.readinessProbe).toMatchObject({ httpGet: { path: '/rhn/manager/api/api/getVersion', port: 80 }, periodSeconds: 30, timeoutSeconds: 20, failureThreshold: 5 });
    expect(c.livenessProbe).toMatchObject({ initialDelaySeconds: 60, periodSeconds: 60 });
    expect(c.env).toContainEqual({ name: 'TZ', value: 'Etc/UTC' });
    expect(pod.volumes).toContainEqual({ name: 'run', emptyDir: { medium: 'Memory', sizeLimit: '256Mi' } });
    expect(pod.volumes).toContainEqual({ name: 'cgroup', hostPath: { path: '/sys/fs/cgroup', type: 'Directory' } });
  });

  it('derives the server container ports from the port table', () => {
    const ports = plan.find('Deployment', 'uyuni').spec.template.spec.containers[0].ports.map((p: any) => `${p.containerPort}/${p.protocol}`);
    expect(ports.sort()).toEqual(['25151/TCP', '4505/TCP', '4506/TCP', '5556/TCP', '5557/TCP', '69/UDP', '80/TCP', '9800/TCP'].sort());
  });

  it('gives the server container the CA certificate but never the CA key', () => {
    const pod = plan.find('Deployment', 'uyuni').spec.template.spec;
    const caVolumes = pod.volumes.filter((v: any) => v.secret?.secretName === 'uyuni-ca');
    expect(caVolumes).toHaveLength(1);
    expect(caVolumes[0].secret.items).toEqual([{ key: 'tls.crt', path: 'ca.crt' }]);
    const mount = pod.containers[0].volumeMounts.find((m: any) => m.name === caVolumes[0].name);
    expect(mount).toEqual({ name: 'ca-cert', mountPath: '/etc/pki/trust/anchors/LOCAL-RHN-ORG-TRUSTED-SSL-CERT', subPath: 'ca.crt', readOnly: true });
    const serverCert = pod.volumes.find((v: any) => v.secret?.secretName === 'uyuni-cert');
    expect(serverCert.secret.items).toContainEqual({ key: 'tls.key', path: 'spacewalk.key', mode: 0o400 });
  });

  it('chains the cert-manager objects from a self-signed issuer through the CA', () => {
    expect(plan.find('Issuer', 'uyuni-issuer').spec).toEqual({ selfSigned: {} });
    const ca = plan.find('Certificate', 'uyuni-ca').spec;
    expect(ca).toMatchObject({ isCA: true, commonName: 'uyuni.example.com', secretName: 'uyuni-ca', privateKey: { algorithm: 'ECDSA', size: 256 } });
    expect(ca.issuerRef).toMatchObject({ name: 'uyuni-issuer', kind: 'Issuer' });
    expect(ca.subject).toMatchObject({ countries: ['DE'], organizations: ['Uyuni'] });
    expect(plan.find('Issuer', 'uyuni-ca-issuer').spec).toEqual({ ca: { secretName: 'uyuni-ca' } });
    const cert = plan.find('Certificate', 'uyuni-cert').spec;
    expect(cert).toMatchObject({ dnsNames: ['uyuni.example.com'], duration: '8760h', renewBefore: '720h', issuerRef: { name: 'uyuni-ca-issuer' } });
    expect(cert.usages).toContain('server auth');
    expect(plan.find('Certificate', 'db-cert').spec.dnsNames).toEqual(['uyuni.example.com', 'db', 'reportdb']);
  });

  it('routes HTTPS and the plain-HTTP paths to web:80', () => {
    const ssl = plan.find('Ingress', 'uyuni-ingress-ssl').spec;
    expect(ssl.ingressClassName).toBe('nginx');
    expect(ssl.tls).toEqual([{ hosts: ['uyuni.example.com'], secretName: 'uyuni-cert' }]);
    expect(ssl.rules[0].http.paths).toEqual([{ path: '/', pathType: 'Prefix', backend: { service: { name: 'web', port: { number: 80 } } } }]);
    const paths = plan.find('Ingress', 'uyuni-ingress-nossl').spec.rules[0].http.paths;
    expect(paths.map((p: any) => p.path)).toContain('/cobbler_api');
    expect(paths.every((p: any) => p.backend.service.name === 'web' && p.pathType === 'Prefix')).toBe(true);
  });

  it('labels every object part-of uyuni, with a component and managed-by', () => {
    for (const o of plan.objects) {
      expect(o.metadata.labels).toMatchObject({ 'app.kubernetes.io/part-of': 'uyuni', 'app.kubernetes.io/managed-by': 'uyuni-cdk' });
      expect(o.metadata.labels!['app.kubernetes.io/component']).toEqual(expect.any(String));
      expect(o.metadata.labels!['uyuni-cdk.io/step']).toEqual(expect.any(String));
    }
  });

  it('writes no Secret and no secret value: credentials are runtime requirements', () => {
    expect(byKind(plan, 'Secret')).toHaveLength(0);
    const requires = plan.plan.steps.flatMap((s) => s.requires);
    expect(requires.map((r) => r.name).sort()).toEqual(['admin-credentials', 'db-admin-credentials', 'db-credentials', 'reportdb-credentials']);
    for (const r of requires) {
      expect(r.ifMissing).toBe('generate');
      expect(r.generate!.password).toEqual({ random: { length: 32 } });
    }
    const setupEnv = plan.find('Job', 'uyuni-setup').spec.template.spec.containers[0].env;
    expect(setupEnv).toContainEqual({ name: 'ADMIN_PASS', valueFrom: { secretKeyRef: { name: 'admin-credentials', key: 'password' } } });
  });

  it('runs the setup as a kept step Job after waiting for the database', () => {
    const job = plan.find('Job', 'uyuni-setup');
    expect(job.spec.backoffLimit).toBe(0);
    expect(job.spec.ttlSecondsAfterFinished).toBeUndefined();
    expect(job.metadata.annotations!['uyuni-cdk.io/spec-hash']).toMatch(/^sha256:[0-9a-f]{64}$/);
    const pod = job.spec.template.spec;
    expect(pod.restartPolicy).toBe('Never');
    expect(pod.containers.map((c: any) => c.name)).toEqual(['runner']);
    expect(pod.containers[0].command.slice(0, 2)).toEqual(['sh', '-c']);
    expect(pod.initContainers.map((c: any) => c.name)).toEqual(['init-volumes', 'wait-for-db']);
    expect(pod.initContainers[1].env).toEqual([{ name: 'DB_HOSTS', value: 'db reportdb' }]);
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

  it('validates every object against the Kubernetes 1.28 and cert-manager schemas', () => {
    for (const o of plan.objects) expect(() => validateObject(o)).not.toThrow();
  });

  it('matches the snapshot', () => {
    expect(plan.text).toMatchSnapshot();
    expect(plan.plan).toMatchSnapshot({ generator: expect.any(String) });
  });
});

describe('the install plan follows the configuration', () => {
  it('leaves tftp out when it is off, and adds the debug ports with debugJava', () => {
    const p = install({ tftp: false, debugJava: true, services: { tftp: undefined } });
    const names = p.objects.filter((o) => o.kind === 'Service').map((o) => o.metadata.name);
    expect(names).not.toContain('tftp');
    expect(servicePorts(p.find('Service', 'search'))).toEqual(['8002/TCP']);
    expect(servicePorts(p.find('Service', 'taskomatic'))).toEqual(['5556/TCP', '9800/TCP', '8001/TCP']);
    expect(servicePorts(p.find('Service', 'tomcat'))).toEqual(['5557/TCP', '8003/TCP']);
  });

  it('adds hub-api and coco Deployments with their replica counts', () => {
    const p = install({ hubApi: { replicas: 2 }, coco: { replicas: 1 } });
    expect(p.find('Deployment', 'uyuni-hub-api').spec.replicas).toBe(2);
    expect(servicePorts(p.find('Service', 'hub-api'))).toEqual(['2830/TCP']);
    expect(p.find('Deployment', 'uyuni-hub-api').spec.template.spec.containers[0].env).toContainEqual({ name: 'HUB_API_URL', value: 'http://web/rpc/api' });
    expect(p.find('Deployment', 'uyuni-coco-attestation').spec.replicas).toBe(1);
    for (const o of p.objects) expect(() => validateObject(o)).not.toThrow();
  });

  it('runs PostgreSQL inside the server when db.separate is off', () => {
    const p = install({ db: { separate: false } });
    expect(p.objects.find((o) => o.kind === 'Deployment' && o.metadata.name === 'db')).toBeUndefined();
    expect(p.find('Service', 'db').spec.selector['app.kubernetes.io/component']).toBe('server');
    const mounts = p.find('Deployment', 'uyuni').spec.template.spec.containers[0].volumeMounts;
    expect(mounts).toContainEqual({ name: 'var-pgsql', mountPath: '/var/lib/pgsql' });
    // The database step has no object: its credential requirements move to the setup step.
    expect(p.plan.steps.map((s) => s.name)).not.toContain('database');
    const setup = p.plan.steps.find((s) => s.name === 'setup')!;
    expect(setup.requires.map((r) => r.name)).toEqual(['db-admin-credentials', 'db-credentials', 'reportdb-credentials', 'admin-credentials']);
  });

  it('writes per-volume sizes and storage classes (group, override, default)', () => {
    const p = install({
      volumes: {
        storageClass: 'slow',
        database: { size: '80Gi', storageClass: 'fast-ssd' },
        overrides: { 'var-log': { size: '5Gi' } },
      },
    });
    expect(p.find('PersistentVolumeClaim', 'var-pgsql').spec).toMatchObject({ storageClassName: 'fast-ssd', resources: { requests: { storage: '80Gi' } } });
    expect(p.find('PersistentVolumeClaim', 'var-log').spec).toMatchObject({ storageClassName: 'slow', resources: { requests: { storage: '5Gi' } } });
    expect(p.find('PersistentVolumeClaim', 'var-cache').spec.storageClassName).toBe('slow');
  });

  it('exposes a Service as NodePort with the configured node ports', () => {
    const p = install({ services: { salt: { type: 'NodePort', nodePorts: { publish: 30505, request: 30506 } } } });
    const salt = p.find('Service', 'salt').spec;
    expect(salt.type).toBe('NodePort');
    expect(salt.ports.map((x: any) => x.nodePort)).toEqual([30505, 30506]);
  });

  it('synthesizes no cert-manager object for third-party certificates, and requires the user\'s', () => {
    const p = install({ tls: { mode: 'third-party' } });
    expect(p.objects.filter((o) => o.apiVersion.startsWith('cert-manager.io'))).toHaveLength(0);
    expect(p.plan.steps.map((s) => s.name)).not.toContain('tls');
    const requires = p.plan.steps.find((s) => s.name === 'services')!.requires;
    expect(requires.map((r) => `${r.kind}/${r.name}/${r.ifMissing}`)).toEqual(['Secret/uyuni-cert/fail', 'ConfigMap/uyuni-ca/fail', 'Secret/db-cert/fail']);
    expect(requires[0].message).toContain('kubectl -n uyuni create secret generic uyuni-cert');
    const ca = p.find('Deployment', 'uyuni').spec.template.spec.volumes.find((v: any) => v.name === 'ca-cert');
    expect(ca).toEqual({ name: 'ca-cert', configMap: { name: 'uyuni-ca', items: [{ key: 'ca.crt', path: 'ca.crt' }] } });
  });

  it('issues from the migrated CA without generating one', () => {
    const p = install({ tls: { mode: 'migrated' } });
    expect(p.objects.filter((o) => o.kind === 'Issuer').map((o) => o.metadata.name)).toEqual(['uyuni-ca-issuer']);
    expect(p.objects.filter((o) => o.kind === 'Certificate').map((o) => o.metadata.name)).toEqual(['uyuni-cert', 'db-cert']);
    expect(p.plan.steps.find((s) => s.name === 'tls')!.requires).toEqual([expect.objectContaining({ kind: 'Secret', name: 'uyuni-ca', keys: ['tls.crt', 'tls.key'], ifMissing: 'fail' })]);
  });

  it('references the image pull secret by name in every pod', () => {
    const p = install({ images: { pullSecret: 'regcred' } });
    const pods = p.objects.filter((o) => o.kind === 'Deployment' || o.kind === 'Job').map((o) => o.spec.template.spec);
    expect(pods.length).toBeGreaterThan(2);
    for (const pod of pods) expect(pod.imagePullSecrets).toEqual([{ name: 'regcred' }]);
  });

  it('mounts a package mirror at /mirror', () => {
    const c = install({ volumes: { mirror: 'mirror-pv' } }).find('Deployment', 'uyuni').spec.template.spec.containers[0];
    expect(c.volumeMounts).toContainEqual({ name: 'mirror', mountPath: '/mirror', readOnly: true });
    expect(c.env).toContainEqual({ name: 'MIRROR_PATH', value: '/mirror' });
  });

  it('changes the setup Job\'s spec hash when its spec changes, and only then', () => {
    const hash = (p: SynthesizedPlan) => p.find('Job', 'uyuni-setup').metadata.annotations!['uyuni-cdk.io/spec-hash'];
    const a = hash(install());
    expect(hash(install())).toBe(a);
    expect(hash(install({ images: { tag: '2025.11' } }))).not.toBe(a);
  });
});

describe('the committed default configuration', () => {
  it('is a file at the project root', () => {
    expect(fs.existsSync(path.join(__dirname, '..', 'uyuni.yaml'))).toBe(true);
  });
});
