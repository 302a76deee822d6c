import { Testing } from 'cdk8s';
import { ProxyTftpDeployment, ProxyTftpDeploymentProps } from '../../src/constructs/proxy-tftp-deployment';
import { K8sObject, validateObject } from '../helpers/validate';

const IMAGE = { image: 'registry.opensuse.org/uyuni/proxy-tftpd:2026.08', pullPolicy: 'IfNotPresent' };
const MINIMAL: ProxyTftpDeploymentProps = { namespace: 'uyuni-proxy', image: IMAGE };

const synth = (props: Partial<ProxyTftpDeploymentProps> = {}): K8sObject => {
  const chart = Testing.chart();
  new ProxyTftpDeployment(chart, 'Tftp', { ...MINIMAL, ...props });
  const objects: K8sObject[] = Testing.synth(chart);
  objects.forEach(validateObject);
  expect(objects.map((o) => `${o.kind}/${o.metadata.name}`)).toEqual(['Deployment/uyuni-proxy-tftp']);
  return objects[0];
};
const pod = (props: Partial<ProxyTftpDeploymentProps> = {}) => synth(props).spec.template.spec;

describe('ProxyTftpDeployment', () => {
  it('matches the snapshot of the default props', () => {
    const chart = Testing.chart();
    new ProxyTftpDeployment(chart, 'Tftp', MINIMAL);
    expect(Testing.synth(chart)).toMatchSnapshot();
  });

  it('is Deployment uyuni-proxy-tftp (component proxy-tftp) with one replica, selected by part-of and component', () => {
    const dep = synth();
    expect(dep.metadata).toEqual({
      name: 'uyuni-proxy-tftp',
      namespace: 'uyuni-proxy',
      labels: { 'app.kubernetes.io/part-of': 'uyuni-proxy', 'app.kubernetes.io/component': 'proxy-tftp', 'app.kubernetes.io/managed-by': 'uyuni-cdk' },
    });
    expect(dep.spec.replicas).toBe(1);
    expect(dep.spec.selector).toEqual({ matchLabels: { 'app.kubernetes.io/part-of': 'uyuni-proxy', 'app.kubernetes.io/component': 'proxy-tftp' } });
  });

  it('runs tftp_wrapper.py in container tftpd, fetching from web.<namespace>.svc by default, or the httpHost given', () => {
    const [c] = pod({ namespace: 'pxy' }).containers;
    expect([c.name, c.image, c.imagePullPolicy]).toEqual(['tftpd', IMAGE.image, IMAGE.pullPolicy]);
    expect(c.command).toEqual(['/usr/bin/tftp_wrapper.py', '--httpHost', 'web.pxy.svc']);
    expect(pod({ httpHost: 'proxy.example.org' }).containers[0].command).toEqual(['/usr/bin/tftp_wrapper.py', '--httpHost', 'proxy.example.org']);
  });

  it('reads config.yaml and the CA at /etc/uyuni/ from the user\'s ConfigMaps', () => {
    const p = pod();
    expect(p.containers[0].volumeMounts).toEqual([{ name: 'tftpd-volume', mountPath: '/etc/uyuni/', readOnly: true }]);
    expect(p.volumes).toEqual([{
      name: 'tftpd-volume',
      projected: {
        sources: [
          { configMap: { name: 'proxy-configmap', items: [{ key: 'config.yaml', path: 'config.yaml' }] } },
          { configMap: { name: 'uyuni-ca', items: [{ key: 'ca.crt', path: 'ca.crt', mode: 0o644 }] } },
        ],
      },
    }]);
  });

  it('listens on 69/UDP by default, or on the ports given', () => {
    expect(pod().containers[0].ports).toEqual([{ containerPort: 69, protocol: 'UDP' }]);
    expect(pod({ ports: [{ containerPort: 1069, protocol: 'UDP' }] }).containers[0].ports).toEqual([{ containerPort: 1069, protocol: 'UDP' }]);
  });

  it('runs in the pod network, rolling, by default; in the node\'s with hostNetwork, keeping cluster DNS, Recreate', () => {
    for (const dep of [synth(), synth({ hostNetwork: false })]) {
      expect(dep.spec).not.toHaveProperty('strategy');
      expect(dep.spec.template.spec).not.toHaveProperty('hostNetwork');
      expect(dep.spec.template.spec).not.toHaveProperty('dnsPolicy');
    }
    const dep = synth({ hostNetwork: true });
    expect(dep.spec.strategy).toEqual({ type: 'Recreate' });
    expect(dep.spec.template.spec).toMatchObject({ hostNetwork: true, dnsPolicy: 'ClusterFirstWithHostNet' });
  });

  it('pulls with the image pull secrets when there are some, and without by default', () => {
    expect(pod()).not.toHaveProperty('imagePullSecrets');
    expect(pod({ image: { ...IMAGE, pullSecrets: [{ name: 'regcred' }] } }).imagePullSecrets).toEqual([{ name: 'regcred' }]);
  });
});
