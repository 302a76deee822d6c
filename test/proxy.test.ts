import * as fs from 'fs';
import * as path from 'path';
import { ConfigError, parseConfig } from '../src/config/load';
import { PROXY_SERVICES } from '../src/model/ports';
import { ROOT, synthYaml } from './helpers/synth';
import { validateObject } from './helpers/validate';

const EXAMPLE = fs.readFileSync(path.join(ROOT, 'examples', 'proxy.yaml'), 'utf8');
const { proxy } = synthYaml(EXAMPLE);

describe('the proxy plan of examples/proxy.yaml', () => {
  it('writes only the proxy plan, in order: namespace, cache, Services, Deployment', () => {
    expect(Object.keys(synthYaml(EXAMPLE)).filter((k) => k !== 'root')).toEqual(['proxy']);
    expect(proxy.plan.steps.map((s) => s.name)).toEqual(['namespace', 'volumes', 'services', 'proxy']);
    expect(proxy.plan.namespace).toBe('uyuni-proxy');
    expect(proxy.plan.selector).toEqual({ 'app.kubernetes.io/part-of': 'uyuni-proxy', 'app.kubernetes.io/managed-by': 'uyuni-cdk' });
  });

  it('derives the Services from the proxy port table: web, salt, ssh 8022→22, tftp 69/UDP', () => {
    const services = proxy.objects.filter((o) => o.kind === 'Service');
    const summary = Object.fromEntries(services.map((s) => [s.metadata.name, s.spec.ports.map((p: any) => `${p.port}->${p.targetPort}/${p.protocol}`)]));
    expect(summary).toEqual({
      web: ['80->80/TCP', '443->443/TCP'],
      salt: ['4505->4505/TCP', '4506->4506/TCP'],
      ssh: ['8022->22/TCP'],
      tftp: ['69->69/UDP'],
    });
    expect(services.map((s) => s.metadata.name)).toEqual(PROXY_SERVICES.map((s) => s.name));
  });

  it('exposes each Service as configured', () => {
    expect(proxy.find('Service', 'web').spec.type).toBe('LoadBalancer');
    const ssh = proxy.find('Service', 'ssh').spec;
    expect(ssh.type).toBe('NodePort');
    expect(ssh.ports[0].nodePort).toBe(30022);
  });

  it('runs the five proxy containers with their images and the ports of their Services', () => {
    const pod = proxy.find('Deployment', 'uyuni-proxy').spec.template.spec;
    expect(pod.containers.map((c: any) => c.name)).toEqual(['proxy-httpd', 'proxy-salt-broker', 'proxy-squid', 'proxy-ssh', 'proxy-tftpd']);
    for (const c of pod.containers) expect(c.image).toBe(`registry.opensuse.org/uyuni/${c.name}:2026.08`);
    const ports = Object.fromEntries(pod.containers.map((c: any) => [c.name, (c.ports ?? []).map((p: any) => `${p.containerPort}/${p.protocol ?? 'TCP'}`)]));
    expect(ports).toEqual({
      'proxy-httpd': ['80/TCP', '443/TCP'],
      'proxy-salt-broker': ['4505/TCP', '4506/TCP'],
      'proxy-squid': [],
      'proxy-ssh': ['22/TCP'],
      'proxy-tftpd': ['69/UDP'],
    });
  });

  it('mounts the squid cache claim with the configured size', () => {
    const pvc = proxy.find('PersistentVolumeClaim', 'squid-cache');
    expect(pvc.spec).toMatchObject({ accessModes: ['ReadWriteOnce'], storageClassName: 'standard', resources: { requests: { storage: '20Gi' } } });
    const squid = proxy.find('Deployment', 'uyuni-proxy').spec.template.spec.containers.find((c: any) => c.name === 'proxy-squid');
    expect(squid.volumeMounts).toContainEqual({ name: 'squid-cache', mountPath: '/var/cache/squid' });
  });

  it('reads its configuration from the user\'s Secret, declared as a precondition, with no key material in dist/', () => {
    expect(proxy.objects.filter((o) => o.kind === 'Secret' || o.kind === 'ConfigMap')).toHaveLength(0);
    const step = proxy.plan.steps.find((s) => s.name === 'proxy')!;
    expect(step.requires).toEqual([expect.objectContaining({
      kind: 'Secret', name: 'uyuni-proxy-config', namespace: 'uyuni-proxy', keys: ['config.yaml', 'httpd.yaml', 'ssh.yaml'], ifMissing: 'fail',
    })]);
    expect(step.requires[0].message).toContain('kubectl -n uyuni-proxy create secret generic uyuni-proxy-config --from-file=config.yaml');
    const pod = proxy.find('Deployment', 'uyuni-proxy').spec.template.spec;
    expect(pod.volumes).toContainEqual({ name: 'proxy-config', secret: { secretName: 'uyuni-proxy-config', defaultMode: 0o400 } });
    const httpd = pod.containers.find((c: any) => c.name === 'proxy-httpd');
    expect(httpd.volumeMounts.map((m: any) => m.mountPath)).toEqual(['/etc/uyuni/config.yaml', '/etc/uyuni/httpd.yaml']);
    for (const text of Object.values(proxy.text)) expect(text).not.toMatch(/BEGIN [A-Z ]*PRIVATE KEY|tls\.key:/);
  });

  it('labels every object part-of uyuni-proxy with component proxy', () => {
    for (const o of proxy.objects) {
      expect(o.metadata.labels).toMatchObject({ 'app.kubernetes.io/part-of': 'uyuni-proxy', 'app.kubernetes.io/component': o.kind === 'PersistentVolumeClaim' ? 'storage' : 'proxy', 'app.kubernetes.io/managed-by': 'uyuni-cdk' });
    }
    const selector = proxy.find('Service', 'tftp').spec.selector;
    expect(selector).toEqual(proxy.find('Deployment', 'uyuni-proxy').spec.selector.matchLabels);
  });

  it('validates every object against the Kubernetes 1.28 schemas', () => {
    for (const o of proxy.objects) expect(() => validateObject(o)).not.toThrow();
  });

  it('matches the snapshot', () => {
    expect(proxy.text).toMatchSnapshot();
  });
});

describe('proxy configuration errors', () => {
  const bad = (proxySection: string) => {
    try {
      parseConfig(`plans: [proxy]\nfqdn: uyuni.example.com\nproxy:\n${proxySection}`, 'proxy.yaml');
    } catch (e) {
      if (e instanceof ConfigError) return e.problems;
      throw e;
    }
    throw new Error('accepted');
  };

  it('names the field of a bad proxy setting', () => {
    expect(bad('  fqdn: proxy\n')[0]).toMatch(/^proxy.fqdn: must be a fully qualified domain name/);
    expect(bad('  fqdn: proxy.example.com\n  namespace: Proxy_NS\n')[0]).toMatch(/^proxy.namespace: must be a DNS-1123 label/);
    expect(bad('  fqdn: proxy.example.com\n  cache:\n    size: lots\n')[0]).toMatch(/^proxy.cache.size: must be a Kubernetes quantity/);
    expect(bad('  fqdn: proxy.example.com\n  services:\n    web:\n      type: Ingress\n')[0]).toMatch(/^proxy.services.web.type: must be one of/);
    expect(bad('  fqdn: proxy.example.com\n  services:\n    cobbler:\n      type: NodePort\n')[0]).toMatch(/^proxy.services.cobbler: no such Service \(known: salt, ssh, tftp, web\)/);
    expect(bad('  fqdn: proxy.example.com\n  squid: true\n')).toEqual(['proxy.squid: unknown setting']);
  });

  it('refuses a proxy node port that clashes with the server\'s', () => {
    const problems = (() => {
      try {
        parseConfig([
          'fqdn: uyuni.example.com',
          'services: {salt: {type: NodePort, nodePorts: {publish: 30505}}}',
          'proxy: {fqdn: proxy.example.com, services: {salt: {type: NodePort, nodePorts: {publish: 30505}}}}',
        ].join('\n'));
      } catch (e) { return (e as ConfigError).problems; }
      return [];
    })();
    expect(problems).toEqual(['proxy.services.salt.nodePorts.publish: node port 30505 is already used by services.salt.nodePorts.publish']);
  });
});
