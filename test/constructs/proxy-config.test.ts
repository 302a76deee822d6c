import { Testing } from 'cdk8s';
import { proxyConfigRequirements, ProxyTuning, ProxyTuningProps } from '../../src/constructs/proxy-config';
import { K8sObject, validateObject } from '../helpers/validate';

const synth = (props: Partial<ProxyTuningProps> = {}): K8sObject => {
  const chart = Testing.chart();
  new ProxyTuning(chart, 'Tuning', { namespace: 'uyuni-proxy', ...props });
  const objects: K8sObject[] = Testing.synth(chart);
  objects.forEach(validateObject);
  expect(objects.map((o) => `${o.kind}/${o.metadata.name}`)).toEqual(['ConfigMap/proxy-tuning']);
  return objects[0];
};

describe('ProxyTuning', () => {
  it('matches the snapshot of the default props', () => {
    const chart = Testing.chart();
    new ProxyTuning(chart, 'Tuning', { namespace: 'uyuni-proxy' });
    expect(Testing.synth(chart)).toMatchSnapshot();
  });

  it('is ConfigMap proxy-tuning of the proxy, with every tuning key, empty by default', () => {
    const cm = synth();
    expect(cm.metadata).toEqual({
      name: 'proxy-tuning',
      namespace: 'uyuni-proxy',
      labels: { 'app.kubernetes.io/part-of': 'uyuni-proxy', 'app.kubernetes.io/component': 'proxy', 'app.kubernetes.io/managed-by': 'uyuni-cdk' },
    });
    expect(cm.data).toEqual({ squid_tuning: '', ssh_tuning: '', apache_tuning: '' });
  });

  it('writes each tuning as given, ending with a newline', () => {
    expect(synth({ squid: 'cache_mem 512 MB', ssh: 'MaxSessions 20\n', apache: 'KeepAlive On\nMaxKeepAliveRequests 200' }).data).toEqual({
      squid_tuning: 'cache_mem 512 MB\n', ssh_tuning: 'MaxSessions 20\n', apache_tuning: 'KeepAlive On\nMaxKeepAliveRequests 200\n',
    });
  });
});

describe('proxyConfigRequirements', () => {
  const byName = (issued?: { namespace: string; secret: string }) =>
    Object.fromEntries(proxyConfigRequirements({ namespace: 'pxy', fqdn: 'proxy.example.org', issued }).map((r) => [r.name, r]));

  it('requires the tarball\'s objects, the certificate and the CA, in the proxy\'s namespace, failing when missing', () => {
    const reqs = proxyConfigRequirements({ namespace: 'pxy', fqdn: 'proxy.example.org' });
    expect(reqs.map((r) => `${r.kind} ${r.namespace}/${r.name} [${r.keys.join(', ')}] ${r.ifMissing}`)).toEqual([
      'ConfigMap pxy/proxy-configmap [config.yaml] fail',
      'Secret pxy/httpd [httpd.yaml] fail',
      'Secret pxy/ssh [ssh.yaml] fail',
      'Secret pxy/proxy-cert [tls.crt, tls.key] fail',
      'ConfigMap pxy/uyuni-ca [ca.crt] fail',
    ]);
  });

  it('tells the commands that make each from the config tarball', () => {
    const r = byName();
    const tarball = 'the proxy configuration: generate it on the server (Systems > Proxy Configuration, or the proxy.containerConfig API), then: tar xf config.tar.gz && ';
    expect(r['proxy-configmap'].message).toBe(`${tarball}kubectl -n pxy create configmap proxy-configmap --from-file=config.yaml`);
    expect(r.httpd.message).toBe(`${tarball}kubectl -n pxy create secret generic httpd --from-file=httpd.yaml`);
    expect(r.ssh.message).toBe(`${tarball}kubectl -n pxy create secret generic ssh --from-file=ssh.yaml`);
  });

  it('asks for the user\'s certificate for the FQDN and its CA, or says how to copy the issued ones', () => {
    const own = byName();
    expect(own['proxy-cert'].message).toBe('the proxy\'s TLS certificate for proxy.example.org, signed by the server\'s CA: '
      + 'kubectl -n pxy create secret tls proxy-cert --cert=<certificate with its chain> --key=<key>');
    expect(own['uyuni-ca'].message).toBe('the CA that signed proxy-cert (the server\'s): kubectl -n pxy create configmap uyuni-ca --from-file=ca.crt=<CA certificate>');
    const issued = byName({ namespace: 'srv', secret: 'pxy-proxy-cert' });
    expect(issued['proxy-cert'].message).toContain("kubectl -n srv get secret pxy-proxy-cert -o jsonpath='{.data.tls\\.key}' | base64 -d >tls.key");
    expect(issued['proxy-cert'].message).toContain('kubectl -n pxy create secret tls proxy-cert --cert=tls.crt --key=tls.key --dry-run=client -o yaml | kubectl -n pxy apply -f - && rm tls.key');
    expect(issued['uyuni-ca'].message).toContain("kubectl -n srv get secret pxy-proxy-cert -o jsonpath='{.data.ca\\.crt}' | base64 -d >ca.crt");
    expect(issued['proxy-configmap']).toEqual(own['proxy-configmap']);
  });
});
