import { Testing } from 'cdk8s';
import { TftpDeployment, TftpDeploymentProps } from '../../src/constructs/tftp-deployment';
import { K8sObject, validateObject } from '../helpers/validate';

const IMAGE = { image: 'registry.opensuse.org/uyuni/shared-tftpd:2026.08', pullPolicy: 'IfNotPresent' };
const MINIMAL: TftpDeploymentProps = { namespace: 'uyuni', image: IMAGE, fqdn: 'uyuni.example.com' };

const synth = (props: Partial<TftpDeploymentProps> = {}): K8sObject => {
  const chart = Testing.chart();
  new TftpDeployment(chart, 'Tftp', { ...MINIMAL, ...props });
  const objects: K8sObject[] = Testing.synth(chart);
  objects.forEach(validateObject);
  expect(objects.map((o) => `${o.kind}/${o.metadata.name}`)).toEqual(['Deployment/tftp']);
  return objects[0];
};
const pod = (props: Partial<TftpDeploymentProps> = {}) => synth(props).spec.template.spec;

describe('TftpDeployment', () => {
  it('matches the snapshot of the default props', () => {
    const chart = Testing.chart();
    new TftpDeployment(chart, 'Tftp', MINIMAL);
    expect(Testing.synth(chart)).toMatchSnapshot();
  });

  it('is Deployment tftp (component tftp) with one replica, selected by part-of and component', () => {
    const dep = synth();
    expect(dep.metadata).toEqual({
      name: 'tftp',
      namespace: 'uyuni',
      labels: { 'app.kubernetes.io/part-of': 'uyuni', 'app.kubernetes.io/component': 'tftp', 'app.kubernetes.io/managed-by': 'uyuni-cdk' },
    });
    expect(dep.spec.replicas).toBe(1);
    expect(dep.spec.selector).toEqual({ matchLabels: { 'app.kubernetes.io/part-of': 'uyuni', 'app.kubernetes.io/component': 'tftp' } });
    expect(TftpDeployment.NAME).toBe('tftp');
  });

  it('runs the shared-tftpd wrapper for the FQDN, fetching from web.<namespace>.svc by default', () => {
    const [c] = pod({ namespace: 'mlm' }).containers;
    expect(c.name).toBe('tftp');
    expect([c.image, c.imagePullPolicy]).toEqual([IMAGE.image, IMAGE.pullPolicy]);
    expect(c.command).toEqual(['/usr/bin/tftp_wrapper.py', '--httpHost', 'web.mlm.svc', '--proxyFqdn', 'uyuni.example.com', '--serverFqdn', 'uyuni.example.com']);
  });

  it('fetches from the httpHost given', () => {
    expect(pod({ httpHost: 'web.example.org' }).containers[0].command.slice(1, 3)).toEqual(['--httpHost', 'web.example.org']);
  });

  it('listens on 69/UDP by default, or on the ports given', () => {
    expect(pod().containers[0].ports).toEqual([{ containerPort: 69, protocol: 'UDP' }]);
    expect(pod({ ports: [{ containerPort: 1069, protocol: 'UDP' }] }).containers[0].ports).toEqual([{ containerPort: 1069, protocol: 'UDP' }]);
  });

  it('runs in the pod network by default, in the node\'s with hostNetwork (keeping cluster DNS)', () => {
    for (const p of [pod(), pod({ hostNetwork: false })]) {
      expect(p).not.toHaveProperty('hostNetwork');
      expect(p).not.toHaveProperty('dnsPolicy');
    }
    const p = pod({ hostNetwork: true });
    expect(p.hostNetwork).toBe(true);
    expect(p.dnsPolicy).toBe('ClusterFirstWithHostNet');
  });

  it('pulls with the image pull secrets when there are some, and without by default', () => {
    expect(pod()).not.toHaveProperty('imagePullSecrets');
    expect(pod({ image: { ...IMAGE, pullSecrets: [{ name: 'regcred' }] } }).imagePullSecrets).toEqual([{ name: 'regcred' }]);
  });
});
