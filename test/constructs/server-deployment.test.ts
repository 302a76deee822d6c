import { Testing } from 'cdk8s';
import { readScript } from '../../src/constructs/script-job';
import { ServerDeployment, ServerDeploymentProps } from '../../src/constructs/server-deployment';
import { SERVER_VOLUMES, VolumeSpec } from '../../src/model/volumes';
import { K8sObject, validateObject } from '../helpers/validate';

const IMAGE = { image: 'registry.opensuse.org/uyuni/server:2026.08', pullPolicy: 'IfNotPresent' };
/** Two claims: one init-volumes seeds, one it only mounts. */
const VOLUMES: VolumeSpec[] = [
  { name: 'var-log', mountPath: '/var/log', size: '2Gi', owner: 'server' },
  { name: 'var-spacewalk', mountPath: '/var/spacewalk', size: '100Gi', owner: 'server', seed: false },
];
const MINIMAL: ServerDeploymentProps = { namespace: 'uyuni', image: IMAGE, timezone: 'Etc/UTC', volumes: VOLUMES, releaseDir: '/etc/rhn/uyuni-cdk' };

const synth = (props: Partial<ServerDeploymentProps> = {}): K8sObject => {
  const chart = Testing.chart();
  new ServerDeployment(chart, 'Server', { ...MINIMAL, ...props });
  const objects: K8sObject[] = Testing.synth(chart);
  objects.forEach(validateObject);
  expect(objects.map((o) => `${o.kind}/${o.metadata.name}`)).toEqual(['Deployment/uyuni']);
  return objects[0];
};
const pod = (props: Partial<ServerDeploymentProps> = {}) => synth(props).spec.template.spec;
const main = (props: Partial<ServerDeploymentProps> = {}) => {
  const p = pod(props);
  expect(p.containers.map((c: any) => c.name)).toEqual(['uyuni']);
  return p.containers[0];
};
const envNames = (c: any): string[] => c.env.map((e: any) => e.name);
const envNamed = (c: any, name: string) => c.env.find((e: any) => e.name === name);
const secretEnv = (name: string, secret: string, key: string) => ({ name, valueFrom: { secretKeyRef: { name: secret, key } } });
const configEnv = (name: string, key: string) => ({ name, valueFrom: { configMapKeyRef: { name: 'uyuni-config', key } } });
const mountsOf = (c: any): string[] => c.volumeMounts.map((m: any) => `${m.name}:${m.mountPath}`);

/**
 * The environment without any option: the baseline each option's test compares with. Which
 * variables that is, and their order, are upstream facts (test/upstream-contract.test.ts).
 */
const defaultEnv = (): string[] => envNames(main());
const DB_CA = '/etc/pki/trust/anchors/DB-RHN-ORG-TRUSTED-SSL-CERT';

/** The mounts after the claims: CA files, certificate and key, /run, the cgroup directory. */
const FIXED_MOUNTS = [
  { name: 'ca-cert', mountPath: '/etc/pki/trust/anchors/LOCAL-RHN-ORG-TRUSTED-SSL-CERT', subPath: 'ca.crt', readOnly: true },
  { name: 'ca-cert', mountPath: '/usr/share/susemanager/salt/certs/RHN-ORG-TRUSTED-SSL-CERT', subPath: 'ca.crt', readOnly: true },
  { name: 'ca-cert', mountPath: '/srv/www/htdocs/pub/RHN-ORG-TRUSTED-SSL-CERT', subPath: 'ca.crt', readOnly: true },
  { name: 'db-ca-cert', mountPath: DB_CA, subPath: 'ca.crt', readOnly: true },
  { name: 'tls', mountPath: '/etc/pki/' },
  { name: 'run', mountPath: '/run' },
  { name: 'sys-fs-cgroup', mountPath: '/sys/fs/cgroup' },
];

/** Replaces the inlined scripts (tested in test/scripts.test.ts) by their names, for a readable snapshot. */
const withoutScripts = (objects: K8sObject[]) => JSON.parse(JSON.stringify(objects)
  .replace(JSON.stringify(readScript('init-volumes.sh')), '"<init-volumes.sh>"')
  .replace(JSON.stringify(readScript('db-waiter.sh')), '"<db-waiter.sh>"'));

describe('ServerDeployment', () => {
  it('matches the snapshot of the default props', () => {
    const chart = Testing.chart();
    new ServerDeployment(chart, 'Server', MINIMAL);
    expect(withoutScripts(Testing.synth(chart))).toMatchSnapshot();
  });

  describe('the Deployment', () => {
    it('is uyuni (component server) with one replica, recreated, selected by part-of and component', () => {
      const dep = synth();
      expect(dep.apiVersion).toBe('apps/v1');
      expect(dep.metadata).toEqual({
        name: 'uyuni',
        namespace: 'uyuni',
        labels: { 'app.kubernetes.io/part-of': 'uyuni', 'app.kubernetes.io/component': 'server', 'app.kubernetes.io/managed-by': 'uyuni-cdk' },
      });
      expect(dep.spec.replicas).toBe(1);
      expect(dep.spec.strategy).toEqual({ type: 'Recreate' });
      expect(dep.spec.selector).toEqual({ matchLabels: { 'app.kubernetes.io/part-of': 'uyuni', 'app.kubernetes.io/component': 'server' } });
      expect(dep.spec.template.metadata.labels).toMatchObject(dep.spec.selector.matchLabels);
    });

    it('writes the replicas given (0 stops the server)', () => {
      expect(synth({ replicas: 0 }).spec.replicas).toBe(0);
    });

    it('has no pod securityContext, hostname, subdomain, hostAliases or hostNetwork', () => {
      const p = pod();
      for (const key of ['securityContext', 'hostname', 'subdomain', 'hostAliases', 'hostNetwork']) expect(p).not.toHaveProperty(key);
    });

    it('pulls with the image pull secrets when there are some, and without by default', () => {
      expect(pod()).not.toHaveProperty('imagePullSecrets');
      const p = pod({ image: { ...IMAGE, pullPolicy: 'Always', pullSecrets: [{ name: 'regcred' }] } });
      expect(p.imagePullSecrets).toEqual([{ name: 'regcred' }]);
      for (const c of [...p.initContainers, ...p.containers]) expect([c.image, c.imagePullPolicy]).toEqual([IMAGE.image, 'Always']);
    });

    it('exposes its name and container name', () => {
      expect(ServerDeployment.NAME).toBe('uyuni');
      expect(ServerDeployment.CONTAINER).toBe('uyuni');
    });
  });

  describe('the main container', () => {
    it('runs the image\'s own entrypoint: no command, no args', () => {
      const c = main();
      expect(c.image).toBe(IMAGE.image);
      expect(c.imagePullPolicy).toBe('IfNotPresent');
      expect(c).not.toHaveProperty('command');
      expect(c).not.toHaveProperty('args');
    });

    it('configures the image through container=oci, TZ and UYUNI_HOSTNAME, the databases by name, host, CA and port', () => {
      const c = main({ timezone: 'Europe/Berlin' });
      expect(c.env.filter((e: any) => 'value' in e)).toEqual([
        { name: 'container', value: 'oci' },
        { name: 'TZ', value: 'Europe/Berlin' },
        { name: 'MANAGER_DB_NAME', value: 'susemanager' },
        { name: 'MANAGER_DB_HOST', value: 'db' },
        { name: 'MANAGER_DB_CA_CERT', value: DB_CA },
        { name: 'MANAGER_DB_PORT', value: '5432' },
        { name: 'REPORT_DB_NAME', value: 'reportdb' },
        { name: 'REPORT_DB_HOST', value: 'reportdb' },
        { name: 'REPORT_DB_CA_CERT', value: DB_CA },
        { name: 'REPORT_DB_PORT', value: '5432' },
      ]);
    });

    it('reads the credentials from the basic-auth Secrets and the name and mail address from ConfigMap uyuni-config', () => {
      const c = main();
      expect(c.env.filter((e: any) => e.valueFrom)).toEqual([
        secretEnv('ADMIN_USER', 'admin-credentials', 'username'),
        secretEnv('ADMIN_PASS', 'admin-credentials', 'password'),
        secretEnv('MANAGER_USER', 'db-credentials', 'username'),
        secretEnv('MANAGER_PASS', 'db-credentials', 'password'),
        secretEnv('REPORT_DB_USER', 'reportdb-credentials', 'username'),
        secretEnv('REPORT_DB_PASS', 'reportdb-credentials', 'password'),
        configEnv('MANAGER_ADMIN_EMAIL', 'email'),
        configEnv('MANAGER_MAIL_FROM', 'email'),
        configEnv('UYUNI_HOSTNAME', 'fqdn'),
      ]);
    });

    it('sets EXTERNALDB_PROVIDER and ISS_PARENT without a value', () => {
      const c = main();
      expect(envNamed(c, 'EXTERNALDB_PROVIDER')).toEqual({ name: 'EXTERNALDB_PROVIDER' });
      expect(envNamed(c, 'ISS_PARENT')).toEqual({ name: 'ISS_PARENT' });
    });

    it('never sets NO_SSL, UYUNI_FQDN, DEBUG_LONG_START or MANAGER_ENABLE_TFTP, whatever the options', () => {
      const all = main({ debugJava: true, sccSecret: 'scc', systemdLogLevel: 'debug', mirror: { claimName: 'mirror' } });
      for (const c of [main(), all]) {
        for (const name of ['NO_SSL', 'UYUNI_FQDN', 'DEBUG_LONG_START', 'MANAGER_ENABLE_TFTP']) expect(envNames(c)).not.toContain(name);
      }
    });

    it('sets DEBUG_JAVA=true only with debugJava, after UYUNI_HOSTNAME', () => {
      expect(envNames(main({ debugJava: false }))).toEqual(defaultEnv());
      const c = main({ debugJava: true });
      expect(envNames(c)).toEqual([...defaultEnv(), 'DEBUG_JAVA']);
      expect(envNamed(c, 'DEBUG_JAVA')).toEqual({ name: 'DEBUG_JAVA', value: 'true' });
    });

    it('reads SCC_USER and SCC_PASS from the sccSecret, only when one is named', () => {
      const c = main({ sccSecret: 'scc-credentials' });
      expect(envNames(c)).toEqual([...defaultEnv(), 'SCC_USER', 'SCC_PASS']);
      expect(c.env.slice(-2)).toEqual([
        secretEnv('SCC_USER', 'scc-credentials', 'username'), secretEnv('SCC_PASS', 'scc-credentials', 'password'),
      ]);
    });

    it('logs systemd to the console at systemdLogLevel, with a tty, only when it is set', () => {
      expect(main()).not.toHaveProperty('tty');
      const c = main({ systemdLogLevel: 'debug' });
      expect(c.tty).toBe(true);
      expect(c.env.slice(-2)).toEqual([{ name: 'SYSTEMD_LOG_TARGET', value: 'console' }, { name: 'SYSTEMD_LOG_LEVEL', value: 'debug' }]);
    });

    it('sets MIRROR_PATH=/mirror right after TZ, only with a mirror', () => {
      for (const mirror of [{ claimName: 'mirror-claim' }, { hostPath: '/srv/mirror' }]) {
        const names = envNames(main({ mirror }));
        expect(names).toEqual(['container', 'TZ', 'MIRROR_PATH', ...defaultEnv().slice(2)]);
      }
      expect(envNamed(main({ mirror: { claimName: 'm' } }), 'MIRROR_PATH')).toEqual({ name: 'MIRROR_PATH', value: '/mirror' });
    });

    it('keeps each option\'s place with every option', () => {
      const c = main({ debugJava: true, sccSecret: 'scc', systemdLogLevel: 'info', mirror: { claimName: 'm' } });
      expect(envNames(c)).toEqual([
        'container', 'TZ', 'MIRROR_PATH', ...defaultEnv().slice(2),
        'DEBUG_JAVA', 'SCC_USER', 'SCC_PASS', 'SYSTEMD_LOG_TARGET', 'SYSTEMD_LOG_LEVEL',
      ]);
    });

    it('stops the services before the pod stops, and nothing else', () => {
      expect(main().lifecycle).toEqual({ preStop: { exec: { command: ['/bin/sh', '-c', 'spacewalk-service stop'] } } });
    });

    it('has no ports by default, and the given container ports (number only; UDP named)', () => {
      expect(main()).not.toHaveProperty('ports');
      expect(main({ ports: [{ containerPort: 80 }, { containerPort: 69, protocol: 'UDP' }] }).ports).toEqual([
        { containerPort: 80 }, { containerPort: 69, protocol: 'UDP' },
      ]);
    });
  });

  describe('confinement', () => {
    const SYS_ADMIN = { capabilities: { add: ['SYS_ADMIN'] } };

    it('adds SYS_ADMIN (for the cgroup2 mount) at SELinux level s0 by default, unprivileged, with the runtime\'s AppArmor profile', () => {
      expect(main().securityContext).toEqual({ ...SYS_ADMIN, seLinuxOptions: { level: 's0' } });
      expect(main({ confinement: {} }).securityContext).toEqual({ ...SYS_ADMIN, seLinuxOptions: { level: 's0' } });
    });

    it('runs as SELinux type spc_t when superPrivileged', () => {
      const sc = main({ confinement: { superPrivileged: true } }).securityContext;
      expect(sc).toMatchObject({ ...SYS_ADMIN, seLinuxOptions: { level: 's0', type: 'spc_t' } });
      expect(sc).not.toHaveProperty('privileged');
    });

    it('uses an SELinux type', () => {
      expect(main({ confinement: { selinuxType: 'uyuni_container_t' } }).securityContext).toEqual({
        ...SYS_ADMIN, seLinuxOptions: { level: 's0', type: 'uyuni_container_t' },
      });
    });

    it('lets superPrivileged win over an SELinux type', () => {
      expect(main({ confinement: { superPrivileged: true, selinuxType: 't' } }).securityContext.seLinuxOptions).toEqual({ level: 's0', type: 'spc_t' });
    });

    // The chart writes securityContext.appArmorProfile (Kubernetes 1.30+); on the 1.28 schema it is
    // the pod annotation (an API server with strict field validation refuses the unknown field).
    const appArmor = (props: Partial<ServerDeploymentProps>) =>
      synth(props).spec.template.metadata.annotations?.['container.apparmor.security.beta.kubernetes.io/uyuni'];

    it('runs AppArmor unconfined when superPrivileged', () => {
      expect(appArmor({ confinement: { superPrivileged: true } })).toBe('unconfined');
      expect(main({ confinement: { superPrivileged: true } }).securityContext.appArmorProfile).toBeUndefined();
    });

    it('uses a Localhost AppArmor profile', () => {
      expect(appArmor({ confinement: { apparmorProfile: 'k8s-systemd-uyuni' } })).toBe('localhost/k8s-systemd-uyuni');
    });

    it('lets superPrivileged win over an AppArmor profile', () => {
      expect(appArmor({ confinement: { superPrivileged: true, apparmorProfile: 'p' } })).toBe('unconfined');
    });

    it('leaves the runtime\'s default profile without either', () => {
      expect(synth({}).spec.template.metadata.annotations).toBeUndefined();
    });
  });

  describe('volumes', () => {
    it('mounts the claims it is given, in their order at their paths, then the CA files, the certificate, /run and the cgroup directory', () => {
      for (const volumes of [SERVER_VOLUMES, [...VOLUMES].reverse()]) {
        const c = main({ volumes });
        expect(mountsOf(c).slice(0, volumes.length)).toEqual(volumes.map((v) => `${v.name}:${v.mountPath}`));
        expect(c.volumeMounts.slice(volumes.length)).toEqual(FIXED_MOUNTS);
      }
    });

    it('backs each claim by the PVC of the same name', () => {
      const volumes = pod({ volumes: VOLUMES }).volumes;
      expect(volumes.slice(0, VOLUMES.length)).toEqual(VOLUMES.map((v) => ({ name: v.name, persistentVolumeClaim: { claimName: v.name } })));
    });

    it('reads the CA certificates from the issued Secrets\' ca.crt', () => {
      const volumes = pod().volumes;
      expect(volumes.find((v: any) => v.name === 'ca-cert')).toEqual({
        name: 'ca-cert', secret: { secretName: 'uyuni-cert', defaultMode: 420, items: [{ key: 'ca.crt', path: 'ca.crt' }] },
      });
      expect(volumes.find((v: any) => v.name === 'db-ca-cert')).toEqual({
        name: 'db-ca-cert', secret: { secretName: 'db-cert', defaultMode: 420, items: [{ key: 'ca.crt', path: 'ca.crt' }] },
      });
    });

    it('puts the server certificate and its key (mode 0400) under /etc/pki/tls', () => {
      expect(pod().volumes.find((v: any) => v.name === 'tls')).toEqual({
        name: 'tls',
        secret: {
          secretName: 'uyuni-cert',
          defaultMode: 420,
          items: [{ key: 'tls.crt', path: 'tls/certs/spacewalk.crt' }, { key: 'tls.key', path: 'tls/private/spacewalk.key', mode: 256 }],
        },
      });
    });

    it('gives /run a 256Mi tmpfs and /sys/fs/cgroup an emptyDir, never the host\'s cgroups', () => {
      const p = pod();
      expect(p.volumes.find((v: any) => v.name === 'run')).toEqual({ name: 'run', emptyDir: { medium: 'Memory', sizeLimit: '256Mi' } });
      expect(p.volumes.find((v: any) => v.name === 'sys-fs-cgroup')).toEqual({ name: 'sys-fs-cgroup', emptyDir: {} });
      expect(p.volumes.filter((v: any) => v.hostPath)).toEqual([]);
    });

    it('has exactly the claims, the CA, certificate, /run and cgroup volumes by default', () => {
      expect(pod().volumes.map((v: any) => v.name)).toEqual(['var-log', 'var-spacewalk', 'ca-cert', 'db-ca-cert', 'tls', 'run', 'sys-fs-cgroup']);
    });

    it('mounts a mirror claim at /mirror', () => {
      const p = pod({ mirror: { claimName: 'mirror-claim' } });
      expect(p.volumes.at(-1)).toEqual({ name: 'mirror', persistentVolumeClaim: { claimName: 'mirror-claim' } });
      expect(p.containers[0].volumeMounts.at(-1)).toEqual({ name: 'mirror', mountPath: '/mirror' });
    });

    it('mounts a mirror node path at /mirror', () => {
      const p = pod({ mirror: { hostPath: '/srv/mirror' } });
      expect(p.volumes.at(-1)).toEqual({ name: 'mirror', hostPath: { path: '/srv/mirror', type: 'Directory' } });
      expect(p.containers[0].volumeMounts.at(-1)).toEqual({ name: 'mirror', mountPath: '/mirror' });
    });

    it('appends the extra volumes and mounts after everything else', () => {
      const extraVolumes = [{ name: 'trust', configMap: { name: 'trust-anchors' } }];
      const extraVolumeMounts = [{ name: 'trust', mountPath: '/usr/share/pki/trust/anchors/custom', readOnly: true }];
      const p = pod({ mirror: { claimName: 'm' }, extraVolumes, extraVolumeMounts });
      expect(p.volumes.slice(-2)).toEqual([{ name: 'mirror', persistentVolumeClaim: { claimName: 'm' } }, ...extraVolumes]);
      expect(p.containers[0].volumeMounts.slice(-2)).toEqual([{ name: 'mirror', mountPath: '/mirror' }, ...extraVolumeMounts]);
      // the init containers keep their own mounts
      for (const init of p.initContainers) expect(JSON.stringify(init)).not.toContain('trust-anchors/custom');
    });
  });

  describe('init containers', () => {
    it('runs init-volumes, then db-waiter, both from the server image', () => {
      const p = pod();
      expect(p.initContainers.map((c: any) => c.name)).toEqual(['init-volumes', 'db-waiter']);
      for (const c of p.initContainers) expect([c.image, c.imagePullPolicy]).toEqual([IMAGE.image, IMAGE.pullPolicy]);
    });

    it('seeds the claims from the image with init-volumes, which sees every claim under /mnt', () => {
      const [init] = pod({ releaseDir: '/etc/rhn/elsewhere' }).initContainers;
      expect(init.command).toEqual(['sh', '-c', readScript('init-volumes.sh')]);
      expect(init.env).toEqual([{ name: 'VOLUME_PATHS', value: '/var/log' }, { name: 'RELEASE_DIR', value: '/etc/rhn/elsewhere' }]);
      expect(init.volumeMounts).toEqual([{ name: 'var-log', mountPath: '/mnt/var/log' }, { name: 'var-spacewalk', mountPath: '/mnt/var/spacewalk' }]);
      expect(init.securityContext).toEqual({ seLinuxOptions: { level: 's0' } });
    });

    it('waits for both databases with db-waiter, configured from uyuni-config and the credential Secrets\' user names', () => {
      const waiter = pod().initContainers[1];
      expect(waiter.command).toEqual(['sh', '-c', readScript('db-waiter.sh')]);
      expect(waiter.env).toEqual([
        configEnv('MANAGER_DB_HOST', 'db_host'),
        configEnv('MANAGER_DB_PORT', 'db_port'),
        configEnv('MANAGER_DB_NAME', 'db_name'),
        secretEnv('MANAGER_USER', 'db-credentials', 'username'),
        configEnv('REPORT_DB_HOST', 'reportdb_host'),
        configEnv('REPORT_DB_PORT', 'reportdb_port'),
        configEnv('REPORT_DB_NAME', 'reportdb_name'),
        secretEnv('REPORT_DB_USER', 'reportdb-credentials', 'username'),
      ]);
      expect(waiter).not.toHaveProperty('volumeMounts');
    });

    it('has no setup-waiter', () => {
      expect(pod({ volumes: SERVER_VOLUMES }).initContainers.map((c: any) => c.name)).not.toContain('setup-waiter');
    });
  });
});
