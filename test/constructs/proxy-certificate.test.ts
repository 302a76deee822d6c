import { Testing } from 'cdk8s';
import { ProxyCertificate, proxyCertificateName, ProxyCertificateProps, serverCaRequirement } from '../../src/constructs/proxy-certificate';
import { K8sObject, validateObject } from '../helpers/validate';

const MINIMAL: ProxyCertificateProps = {
  namespace: 'uyuni', name: 'uyuni-proxy-proxy-cert', fqdn: 'proxy.example.com', duration: '8760h', renewBefore: '720h',
};

const synth = (props: Partial<ProxyCertificateProps> = {}): K8sObject => {
  const chart = Testing.chart();
  new ProxyCertificate(chart, 'Certificate', { ...MINIMAL, ...props });
  const objects: K8sObject[] = Testing.synth(chart);
  objects.forEach(validateObject);
  expect(objects.map((o) => `${o.apiVersion} ${o.kind}/${o.metadata.name}`)).toEqual([`cert-manager.io/v1 Certificate/${props.name ?? MINIMAL.name}`]);
  return objects[0];
};

describe('ProxyCertificate', () => {
  it('matches the snapshot of the default props', () => {
    const chart = Testing.chart();
    new ProxyCertificate(chart, 'Certificate', MINIMAL);
    expect(Testing.synth(chart)).toMatchSnapshot();
  });

  it('is a leaf for the proxy FQDN: RSA 2048 PKCS1 rotated always, server auth, its Secret of the same name', () => {
    const cert = synth();
    expect(cert.metadata).toEqual({
      name: 'uyuni-proxy-proxy-cert',
      namespace: 'uyuni',
      labels: { 'app.kubernetes.io/part-of': 'uyuni-proxy', 'app.kubernetes.io/component': 'tls', 'app.kubernetes.io/managed-by': 'uyuni-cdk' },
    });
    expect(cert.spec).toEqual({
      secretName: 'uyuni-proxy-proxy-cert',
      secretTemplate: { labels: { 'app.kubernetes.io/part-of': 'uyuni-proxy', 'app.kubernetes.io/component': 'tls' } },
      isCA: false,
      commonName: 'proxy.example.com',
      dnsNames: ['proxy.example.com'],
      duration: '8760h',
      renewBefore: '720h',
      privateKey: { algorithm: 'RSA', size: 2048, encoding: 'PKCS1', rotationPolicy: 'Always' },
      usages: ['server auth'],
      issuerRef: { name: 'uyuni-issuer', kind: 'Issuer', group: 'cert-manager.io' },
    });
  });

  it('takes the lifetimes and the Issuer given', () => {
    const cert = synth({ duration: '2160h', renewBefore: '360h', issuer: 'other-issuer', name: 'p2-proxy-cert' });
    expect(cert.spec).toMatchObject({ secretName: 'p2-proxy-cert', duration: '2160h', renewBefore: '360h', issuerRef: { name: 'other-issuer', kind: 'Issuer' } });
  });

  it('is named after the proxy\'s namespace, never like a server certificate', () => {
    expect(proxyCertificateName('uyuni-proxy')).toBe('uyuni-proxy-proxy-cert');
    for (const ns of ['uyuni', 'db']) expect(['uyuni-cert', 'db-cert', 'uyuni-ca']).not.toContain(proxyCertificateName(ns));
  });

  it('needs the server\'s CA Secret uyuni-ca in the server\'s namespace', () => {
    expect(serverCaRequirement('mlm')).toEqual({
      kind: 'Secret', name: 'uyuni-ca', namespace: 'mlm', keys: ['tls.crt'], ifMissing: 'fail',
      message: 'the server\'s CA (Issuer uyuni-issuer signs with it): install the server in namespace mlm first, with tls.mode generated or migrated',
    });
  });
});
