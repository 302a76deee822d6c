import { Testing } from 'cdk8s';
import { CocoDeployment, CocoDeploymentProps } from '../../src/constructs/coco-deployment';
import { K8sObject, validateObject } from '../helpers/validate';

const IMAGE = { image: 'registry.opensuse.org/uyuni/server-attestation:2026.08', pullPolicy: 'IfNotPresent' };
const MINIMAL: CocoDeploymentProps = { namespace: 'uyuni', image: IMAGE, replicas: 1, timezone: 'Etc/UTC' };

const synth = (props: Partial<CocoDeploymentProps> = {}): K8sObject => {
  const chart = Testing.chart();
  new CocoDeployment(chart, 'Coco', { ...MINIMAL, ...props });
  const objects: K8sObject[] = Testing.synth(chart);
  objects.forEach(validateObject);
  expect(objects.map((o) => `${o.kind}/${o.metadata.name}`)).toEqual(['Deployment/uyuni-coco-attestation']);
  return objects[0];
};
const container = (props: Partial<CocoDeploymentProps> = {}) => synth(props).spec.template.spec.containers[0];

describe('CocoDeployment', () => {
  it('matches the snapshot of the default props', () => {
    const chart = Testing.chart();
    new CocoDeployment(chart, 'Coco', MINIMAL);
    expect(Testing.synth(chart)).toMatchSnapshot();
  });

  it('is Deployment uyuni-coco-attestation (component coco)', () => {
    const dep = synth();
    expect(dep.metadata).toEqual({
      name: 'uyuni-coco-attestation',
      namespace: 'uyuni',
      labels: { 'app.kubernetes.io/part-of': 'uyuni', 'app.kubernetes.io/component': 'coco', 'app.kubernetes.io/managed-by': 'uyuni-cdk' },
    });
    expect(dep.spec.selector).toEqual({ matchLabels: { 'app.kubernetes.io/part-of': 'uyuni', 'app.kubernetes.io/component': 'coco' } });
    expect(CocoDeployment.NAME).toBe('uyuni-coco-attestation');
  });

  it('runs the replicas given', () => {
    expect(synth({ replicas: 2 }).spec.replicas).toBe(2);
  });

  it('connects to the product database as its user, credentials from db-credentials', () => {
    const c = container({ timezone: 'Europe/Berlin' });
    expect(c.name).toBe('coco');
    expect([c.image, c.imagePullPolicy]).toEqual([IMAGE.image, IMAGE.pullPolicy]);
    expect(c.env).toEqual([
      { name: 'database_connection', value: 'jdbc:postgresql://db:5432/susemanager' },
      { name: 'database_user', valueFrom: { secretKeyRef: { name: 'db-credentials', key: 'username' } } },
      { name: 'database_password', valueFrom: { secretKeyRef: { name: 'db-credentials', key: 'password' } } },
      { name: 'TZ', value: 'Europe/Berlin' },
    ]);
  });

  it('forbids privilege escalation and opens no port', () => {
    const c = container();
    expect(c.securityContext).toEqual({ allowPrivilegeEscalation: false });
    expect(c).not.toHaveProperty('ports');
  });

  it('pulls with the image pull secrets when there are some, and without by default', () => {
    expect(synth().spec.template.spec).not.toHaveProperty('imagePullSecrets');
    expect(synth({ image: { ...IMAGE, pullSecrets: [{ name: 'regcred' }] } }).spec.template.spec.imagePullSecrets).toEqual([{ name: 'regcred' }]);
  });
});
