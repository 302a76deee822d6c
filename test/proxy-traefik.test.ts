import { podSpec, synthYaml } from './helpers/synth';
import { validateObject } from './helpers/validate';

/** A proxy-only configuration with this proxy section (YAML lines under `proxy:`). */
const proxyOnly = (proxySection: string) => `plans: [proxy]\nfqdn: uyuni.example.com\nproxy:\n  fqdn: proxy.example.com\n${proxySection}`;

describe('the proxy through the cluster\'s Traefik (proxy-helm templates/traefik-routes.yaml @ 0806c3e6, ingress.yaml @ 3bf8ace7)', () => {
  const { proxy } = synthYaml(proxyOnly('  ingress:\n    type: traefik\n'));

  it('adds an ingress step after the Services: TCP routes for ssh and salt, the plain-HTTP Ingress', () => {
    expect(proxy.plan.steps.map((s) => s.name)).toEqual(['namespace', 'volumes', 'services', 'ingress', 'certs', 'proxy', 'tftp']);
    expect(proxy.step('ingress').objects.map((o) => `${o.kind}/${o.name}`)).toEqual([
      'IngressRouteTCP/ssh-router', 'IngressRouteTCP/salt-publish-router', 'IngressRouteTCP/salt-request-router',
      'Ingress/uyuni-proxy-ingress-nossl',
    ]);
  });

  it('routes each entry point to its Service port, as the chart', () => {
    const route = (name: string) => proxy.find('IngressRouteTCP', name);
    const summary = ['ssh-router', 'salt-publish-router', 'salt-request-router'].map((n) => {
      const spec = route(n).spec;
      return `${spec.entryPoints.join(',')} ${spec.routes[0].match} -> ${spec.routes[0].services[0].name}:${spec.routes[0].services[0].port}`;
    });
    expect(summary).toEqual([
      'ssh HostSNI(`*`) -> ssh:8022', 'salt-publish HostSNI(`*`) -> salt:4505', 'salt-request HostSNI(`*`) -> salt:4506',
    ]);
    expect(route('ssh-router').metadata.annotations).toEqual(expect.objectContaining({ 'kubernetes.io/ingress.class': 'traefik' }));
    expect(route('ssh-router').metadata.labels).toEqual(expect.objectContaining({ 'app.kubernetes.io/component': 'proxy' }));
  });

  it('serves plain HTTP for the proxy\'s FQDN on entry point web to web:80', () => {
    const ingress = proxy.find('Ingress', 'uyuni-proxy-ingress-nossl');
    expect(ingress.metadata.annotations).toEqual(expect.objectContaining({
      'traefik.ingress.kubernetes.io/router.tls': 'false', 'traefik.ingress.kubernetes.io/router.entrypoints': 'web',
    }));
    expect(ingress.spec).toEqual({
      ingressClassName: 'traefik',
      rules: [{ host: 'proxy.example.com', http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'web', port: { number: 80 } } } }] } }],
    });
    expect(() => validateObject(ingress)).not.toThrow();
  });

  it('routes no NodePort Service, and nothing at all without proxy.ingress', () => {
    const nodePorts = synthYaml(proxyOnly('  ingress:\n    type: traefik\n    className: traefik-internal\n  services:\n    ssh:\n      type: NodePort\n    salt:\n      type: LoadBalancer\n')).proxy;
    expect(nodePorts.step('ingress').objects.map((o) => o.name)).toEqual(['salt-publish-router', 'salt-request-router', 'uyuni-proxy-ingress-nossl']);
    expect(nodePorts.find('Ingress', 'uyuni-proxy-ingress-nossl').spec.ingressClassName).toBe('traefik-internal');
    const plain = synthYaml(proxyOnly('')).proxy;
    expect(plain.plan.steps.map((s) => s.name)).not.toContain('ingress');
    expect(plain.objects.filter((o) => o.apiVersion.startsWith('traefik.io/') || o.kind === 'Ingress')).toEqual([]);
    expect(podSpec(plain.find('Deployment', 'uyuni-proxy')).containers.length).toBeGreaterThan(0);
  });
});

describe('the proxy pod\'s dnsConfig (proxy-helm tests/dns_config_test.yaml @ 24fbbcdd)', () => {
  const pod = (section: string) => podSpec(synthYaml(proxyOnly(section)).proxy.find('Deployment', 'uyuni-proxy'));

  it('renders none by default', () => {
    expect(pod('')).not.toHaveProperty('dnsConfig');
  });

  it('passes nameservers, searches and options through to the pod', () => {
    const spec = pod('  dnsConfig:\n    nameservers: ["8.8.8.8"]\n    searches: [example.com]\n    options:\n      - name: ndots\n        value: "1"\n      - name: edns0\n');
    expect(spec.dnsConfig).toEqual({ nameservers: ['8.8.8.8'], searches: ['example.com'], options: [{ name: 'ndots', value: '1' }, { name: 'edns0' }] });
  });

  it('refuses an option value that is not a string, naming the field (as the chart\'s schema)', () => {
    expect(() => synthYaml(proxyOnly('  dnsConfig:\n    options:\n      - name: ndots\n        value: 1\n'))).toThrow(/proxy\.dnsConfig\.options/);
  });
});
