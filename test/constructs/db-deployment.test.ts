import { Testing } from 'cdk8s';
import { DbDeployment, DbDeploymentProps } from '../../src/constructs/db-deployment';
import { K8sObject, validateObject } from '../helpers/validate';

const IMAGE = { image: 'registry.opensuse.org/uyuni/server-postgresql:2026.08', pullPolicy: 'IfNotPresent' };
const MINIMAL: DbDeploymentProps = { namespace: 'uyuni', image: IMAGE, timezone: 'Etc/UTC' };

const synth = (props: Partial<DbDeploymentProps> = {}): K8sObject => {
  const chart = Testing.chart();
  new DbDeployment(chart, 'Db', { ...MINIMAL, ...props });
  const objects: K8sObject[] = Testing.synth(chart);
  objects.forEach(validateObject);
  expect(objects.map((o) => `${o.kind}/${o.metadata.name}`)).toEqual(['Deployment/db']);
  return objects[0];
};
const pod = (props: Partial<DbDeploymentProps> = {}) => synth(props).spec.template.spec;
const container = (props: Partial<DbDeploymentProps> = {}) => {
  const p = pod(props);
  expect(p.containers.map((c: any) => c.name)).toEqual(['db']);
  return p.containers[0];
};
const secretEnv = (name: string, secret: string, key: string) => ({ name, valueFrom: { secretKeyRef: { name: secret, key } } });

describe('DbDeployment', () => {
  it('matches the snapshot of the default props', () => {
    const chart = Testing.chart();
    new DbDeployment(chart, 'Db', MINIMAL);
    expect(Testing.synth(chart)).toMatchSnapshot();
  });

  it('is Deployment db (component db): one replica, recreated, selected by part-of and component', () => {
    const dep = synth();
    expect(dep.metadata).toEqual({
      name: 'db',
      namespace: 'uyuni',
      labels: { 'app.kubernetes.io/part-of': 'uyuni', 'app.kubernetes.io/component': 'db', 'app.kubernetes.io/managed-by': 'uyuni-cdk' },
    });
    expect(dep.spec.replicas).toBe(1);
    expect(dep.spec.strategy).toEqual({ type: 'Recreate' });
    expect(dep.spec.selector).toEqual({ matchLabels: { 'app.kubernetes.io/part-of': 'uyuni', 'app.kubernetes.io/component': 'db' } });
    expect(dep.spec.template.metadata.labels).toMatchObject(dep.spec.selector.matchLabels);
    expect(DbDeployment.NAME).toBe('db');
  });

  it('runs the image\'s entrypoint (no command) with TZ and the three credential Secrets', () => {
    const c = container({ timezone: 'Europe/Berlin' });
    expect([c.image, c.imagePullPolicy]).toEqual([IMAGE.image, IMAGE.pullPolicy]);
    expect(c).not.toHaveProperty('command');
    expect(c).not.toHaveProperty('args');
    expect(c.env).toEqual([
      { name: 'TZ', value: 'Europe/Berlin' },
      secretEnv('POSTGRES_USER', 'db-admin-credentials', 'username'),
      secretEnv('POSTGRES_PASSWORD', 'db-admin-credentials', 'password'),
      secretEnv('MANAGER_USER', 'db-credentials', 'username'),
      secretEnv('MANAGER_PASS', 'db-credentials', 'password'),
      secretEnv('REPORT_DB_USER', 'reportdb-credentials', 'username'),
      secretEnv('REPORT_DB_PASS', 'reportdb-credentials', 'password'),
    ]);
  });

  it('sets no PGDATA and no POSTGRES_DB (the image\'s defaults)', () => {
    const names = container().env.map((e: any) => e.name);
    expect(names).not.toContain('PGDATA');
    expect(names).not.toContain('POSTGRES_DB');
  });

  it('mounts claim var-pgsql18 as volume var-pgsql at /var/lib/pgsql/data', () => {
    const p = pod();
    expect(p.volumes[0]).toEqual({ name: 'var-pgsql', persistentVolumeClaim: { claimName: 'var-pgsql18' } });
    expect(p.containers[0].volumeMounts[0]).toEqual({ name: 'var-pgsql', mountPath: '/var/lib/pgsql/data' });
  });

  it('mounts the claim given', () => {
    expect(pod({ claim: 'pg-data' }).volumes[0]).toEqual({ name: 'var-pgsql', persistentVolumeClaim: { claimName: 'pg-data' } });
  });

  it('puts db-cert\'s certificate, key (mode 0400) and CA under /etc/pki where the image looks', () => {
    const p = pod();
    expect(p.containers[0].volumeMounts).toEqual([
      { name: 'var-pgsql', mountPath: '/var/lib/pgsql/data' },
      { name: 'db-cert', mountPath: '/etc/pki/' },
    ]);
    expect(p.volumes[1]).toEqual({
      name: 'db-cert',
      secret: {
        secretName: 'db-cert',
        defaultMode: 420,
        items: [
          { key: 'tls.crt', path: 'tls/certs/spacewalk.crt' },
          { key: 'tls.key', path: 'tls/private/pg-spacewalk.key', mode: 256 },
          { key: 'ca.crt', path: 'trust/anchors/LOCAL-RHN-ORG-TRUSTED-SSL-CERT' },
        ],
      },
    });
    expect(p.volumes).toHaveLength(2);
  });

  it('reads the certificate from the Secret given', () => {
    expect(pod({ certSecret: 'my-db-cert' }).volumes[1].secret.secretName).toBe('my-db-cert');
  });

  it('lets the postgres group (999) read the key', () => {
    expect(pod().securityContext).toEqual({ fsGroup: 999 });
  });

  it('is ready when the image\'s healthcheck.sh passes', () => {
    expect(container().readinessProbe).toEqual({ exec: { command: ['/usr/bin/healthcheck.sh'] }, periodSeconds: 10, timeoutSeconds: 10, failureThreshold: 3 });
    expect(container()).not.toHaveProperty('livenessProbe');
    expect(container()).not.toHaveProperty('startupProbe');
  });

  it('has no ports by default, and the given container ports', () => {
    expect(container()).not.toHaveProperty('ports');
    expect(container({ ports: [{ containerPort: 5432 }] }).ports).toEqual([{ containerPort: 5432 }]);
  });

  it('pulls with the image pull secrets when there are some, and without by default', () => {
    expect(pod()).not.toHaveProperty('imagePullSecrets');
    expect(pod({ image: { ...IMAGE, pullSecrets: [{ name: 'regcred' }] } }).imagePullSecrets).toEqual([{ name: 'regcred' }]);
  });
});
