import { Testing } from 'cdk8s';
import { HubApiDeployment, HubApiDeploymentProps } from '../../src/constructs/hub-api-deployment';
import { K8sObject, validateObject } from '../helpers/validate';

const IMAGE = { image: 'registry.opensuse.org/uyuni/server-hub-xmlrpc-api:2026.08', pullPolicy: 'IfNotPresent' };
const MINIMAL: HubApiDeploymentProps = { namespace: 'uyuni', image: IMAGE, replicas: 1, timezone: 'Etc/UTC' };

const synth = (props: Partial<HubApiDeploymentProps> = {}): K8sObject => {
  const chart = Testing.chart();
  new HubApiDeployment(chart, 'HubApi', { ...MINIMAL, ...props });
  const objects: K8sObject[] = Testing.synth(chart);
  objects.forEach(validateObject);
  expect(objects.map((o) => `${o.kind}/${o.metadata.name}`)).toEqual(['Deployment/uyuni-hub-xmlrpc']);
  return objects[0];
};
const container = (props: Partial<HubApiDeploymentProps> = {}) => synth(props).spec.template.spec.containers[0];

describe('HubApiDeployment', () => {
  it('matches the snapshot of the default props', () => {
    const chart = Testing.chart();
    new HubApiDeployment(chart, 'HubApi', MINIMAL);
    expect(Testing.synth(chart)).toMatchSnapshot();
  });

  it('is Deployment uyuni-hub-xmlrpc (component hub-xmlrpc, which Service hub-xmlrpc selects)', () => {
    const dep = synth();
    expect(dep.metadata).toEqual({
      name: 'uyuni-hub-xmlrpc',
      namespace: 'uyuni',
      labels: { 'app.kubernetes.io/part-of': 'uyuni', 'app.kubernetes.io/component': 'hub-xmlrpc', 'app.kubernetes.io/managed-by': 'uyuni-cdk' },
    });
    expect(dep.spec.selector).toEqual({ matchLabels: { 'app.kubernetes.io/part-of': 'uyuni', 'app.kubernetes.io/component': 'hub-xmlrpc' } });
    expect(dep.spec).not.toHaveProperty('strategy');
    expect(HubApiDeployment.NAME).toBe('uyuni-hub-xmlrpc');
  });

  it('runs the replicas given', () => {
    expect(synth({ replicas: 3 }).spec.replicas).toBe(3);
  });

  it('fronts the server\'s XML-RPC API at http://web/rpc/api by default, or at apiUrl', () => {
    const c = container({ timezone: 'Europe/Berlin' });
    expect(c.name).toBe('hub-xmlrpc');
    expect([c.image, c.imagePullPolicy]).toEqual([IMAGE.image, IMAGE.pullPolicy]);
    expect(c.env).toEqual([{ name: 'HUB_API_URL', value: 'http://web/rpc/api' }, { name: 'TZ', value: 'Europe/Berlin' }]);
    expect(container({ apiUrl: 'http://web.uyuni.svc/rpc/api' }).env[0]).toEqual({ name: 'HUB_API_URL', value: 'http://web.uyuni.svc/rpc/api' });
  });

  it('has no ports by default, and the given container ports', () => {
    expect(container()).not.toHaveProperty('ports');
    expect(container({ ports: [{ containerPort: 2830 }] }).ports).toEqual([{ containerPort: 2830 }]);
  });

  it('forbids privilege escalation', () => {
    expect(container().securityContext).toEqual({ allowPrivilegeEscalation: false });
  });

  it('pulls with the image pull secrets when there are some, and without by default', () => {
    expect(synth().spec.template.spec).not.toHaveProperty('imagePullSecrets');
    expect(synth({ image: { ...IMAGE, pullSecrets: [{ name: 'regcred' }] } }).spec.template.spec.imagePullSecrets).toEqual([{ name: 'regcred' }]);
  });
});
