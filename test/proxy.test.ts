import * as fs from 'fs';
import * as path from 'path';
import { ConfigError, parseConfig } from '../src/config/load';
import { PROXY_SERVICES } from '../src/model/ports';
import { readScript } from '../src/constructs/script-job';
import { podSpec, ROOT, synthYaml } from './helpers/synth';
import { K8sObject, validateObject } from './helpers/validate';

const EXAMPLE = fs.readFileSync(path.join(ROOT, 'examples', 'proxy.yaml'), 'utf8');
const { proxy } = synthYaml(EXAMPLE);
const deployment = proxy.find('Deployment', 'uyuni-proxy');
const pod = podSpec(deployment);
const container = (name: string) => pod.containers.find((c: any) => c.name === name);
const volume = (name: string) => pod.volumes.find((v: any) => v.name === name);

/** A proxy-only configuration with this proxy section (YAML lines under `proxy:`). */
const proxyOnly = (proxySection: string, top = '') => `plans: [proxy]\nfqdn: uyuni.example.com\n${top}proxy:\n  fqdn: proxy.example.com\n${proxySection}`;

describe('the proxy plan of examples/proxy.yaml', () => {
  it('writes only the proxy plan, in order: namespace, cache, Services, certs, proxy, tftp', () => {
    expect(Object.keys(synthYaml(EXAMPLE)).filter((k) => k !== 'root')).toEqual(['proxy']);
    expect(proxy.plan.steps.map((s) => s.name)).toEqual(['namespace', 'volumes', 'services', 'certs', 'proxy', 'tftp']);
    expect(proxy.plan.namespace).toBe('uyuni-proxy');
    expect(proxy.plan.selector).toEqual({ 'app.kubernetes.io/part-of': 'uyuni-proxy', 'app.kubernetes.io/managed-by': 'uyuni-cdk' });
  });

  it('writes these objects and no other', () => {
    const ids = (step: string) => proxy.step(step).objects.map((o) => `${o.kind}/${o.name}`);
    expect(ids('namespace')).toEqual(['Namespace/uyuni-proxy']);
    expect(ids('volumes')).toEqual(['PersistentVolumeClaim/squid-cache']);
    expect(ids('services')).toEqual(['Service/web', 'Service/salt', 'Service/ssh', 'Service/tftp']);
    expect(ids('certs')).toEqual(['ServiceAccount/uyuni-proxy-certs', 'Role/uyuni-proxy-certs', 'RoleBinding/uyuni-proxy-certs', 'Job/uyuni-proxy-certs']);
    expect(ids('proxy')).toEqual(['ConfigMap/proxy-tuning', 'Deployment/uyuni-proxy']);
    expect(ids('tftp')).toEqual(['Deployment/uyuni-proxy-tftp']);
    expect(proxy.plan.steps.flatMap((s) => s.objects).every((o) => o.kind === 'Namespace' || o.namespace === 'uyuni-proxy')).toBe(true);
  });

  it('renders the Services of the port table with proxy-helm\'s port names', () => {
    const services = proxy.objects.filter((o) => o.kind === 'Service');
    const summary = Object.fromEntries(services.map((s) => [s.metadata.name, s.spec.ports.map((p: any) => `${p.name} ${p.port}->${p.targetPort}/${p.protocol}`)]));
    expect(summary).toEqual({
      web: ['http 80->80/TCP', 'https 443->443/TCP'],
      salt: ['salt-publish 4505->4505/TCP', 'salt-request 4506->4506/TCP'],
      ssh: ['ssh 8022->22/TCP'],
      tftp: ['tftp 69->69/UDP'],
    });
    expect(services.map((s) => s.metadata.name)).toEqual(PROXY_SERVICES.map((s) => s.name));
  });

  it('exposes web, salt and ssh as configured, tftp always as a LoadBalancer with ClientIP affinity', () => {
    expect(proxy.find('Service', 'web').spec.type).toBe('LoadBalancer');
    expect(proxy.find('Service', 'salt').spec.type).toBe('LoadBalancer');
    const ssh = proxy.find('Service', 'ssh').spec;
    expect(ssh.type).toBe('NodePort');
    expect(ssh.ports[0].nodePort).toBe(30022);
    expect(proxy.find('Service', 'tftp').spec).toMatchObject({ type: 'LoadBalancer', sessionAffinity: 'ClientIP', externalTrafficPolicy: 'Local' });
  });

  it('selects the proxy pod from web, salt and ssh, and the tftp pod from tftp', () => {
    for (const name of ['web', 'salt', 'ssh']) expect(proxy.find('Service', name).spec.selector).toEqual(deployment.spec.selector.matchLabels);
    expect(proxy.find('Service', 'tftp').spec.selector).toEqual(proxy.find('Deployment', 'uyuni-proxy-tftp').spec.selector.matchLabels);
    expect(proxy.find('Service', 'tftp').spec.selector).toEqual({ 'app.kubernetes.io/part-of': 'uyuni-proxy', 'app.kubernetes.io/component': 'proxy-tftp' });
  });

  it('runs Deployment uyuni-proxy (Recreate) with init-httpd, init-sshd and httpd, salt-broker, squid, ssh from proxy-<name>', () => {
    expect(deployment.spec.strategy).toEqual({ type: 'Recreate' });
    expect(pod.initContainers.map((c: any) => [c.name, c.image])).toEqual([
      ['init-httpd', 'registry.opensuse.org/uyuni/proxy-httpd:2026.08'],
      ['init-sshd', 'registry.opensuse.org/uyuni/proxy-ssh:2026.08'],
    ]);
    expect(pod.initContainers.map((c: any) => c.command)).toEqual([
      ['sh', '-c', readScript('proxy-init-httpd.sh')],
      ['sh', '-c', readScript('proxy-init-sshd.sh')],
    ]);
    expect(pod.containers.map((c: any) => c.name)).toEqual(['httpd', 'salt-broker', 'squid', 'ssh']);
    for (const c of pod.containers) expect([c.image, c.imagePullPolicy]).toEqual([`registry.opensuse.org/uyuni/proxy-${c.name}:2026.08`, 'IfNotPresent']);
    const ports = Object.fromEntries(pod.containers.map((c: any) => [c.name, c.ports.map((p: any) => `${p.containerPort}/${p.protocol ?? 'TCP'}`)]));
    expect(ports).toEqual({ 'httpd': ['80/TCP', '443/TCP'], 'salt-broker': ['4505/TCP', '4506/TCP'], 'squid': ['8088/TCP'], 'ssh': ['22/TCP'] });
  });

  it('mounts the squid cache claim with the configured size and class', () => {
    const pvc = proxy.find('PersistentVolumeClaim', 'squid-cache');
    expect(pvc.spec).toMatchObject({ accessModes: ['ReadWriteOnce'], storageClassName: 'standard', resources: { requests: { storage: '20Gi' } } });
    expect(container('squid').volumeMounts).toContainEqual({ name: 'squid-cache', mountPath: '/var/cache/squid' });
    expect(volume('squid-cache')).toEqual({ name: 'squid-cache', persistentVolumeClaim: { claimName: 'squid-cache' } });
  });

  it('gives httpd the certificate, key, CA and tuning in its projected httpd-volume, and the CA as trust anchor', () => {
    expect(volume('httpd-volume').projected.sources).toEqual([
      { configMap: { name: 'proxy-configmap', items: [{ key: 'config.yaml', path: 'config.yaml' }] } },
      { secret: { name: 'httpd', items: [{ key: 'httpd.yaml', path: 'httpd.yaml' }] } },
      { configMap: { name: 'proxy-tuning', items: [{ key: 'apache_tuning', path: 'apache_tuning.conf' }] } },
      { configMap: { name: 'uyuni-ca', items: [{ key: 'ca.crt', path: 'ca.crt', mode: 420 }] } },
      { secret: { name: 'proxy-cert', items: [{ key: 'tls.crt', path: 'server.crt', mode: 420 }, { key: 'tls.key', path: 'server.key', mode: 256 }] } },
    ]);
    expect(volume('ca-cert')).toEqual({
      name: 'ca-cert', configMap: { name: 'uyuni-ca', defaultMode: 420, items: [{ key: 'ca.crt', path: 'RHN-ORG-TRUSTED-SSL-CERT' }] },
    });
    expect(container('httpd').volumeMounts).toEqual([
      { name: 'httpd-volume', mountPath: '/etc/uyuni/', readOnly: true },
      { name: 'etc-apache2', mountPath: '/etc/apache2' },
      { name: 'ca-cert', mountPath: '/etc/pki/trust/anchors/', readOnly: true },
    ]);
  });

  it('gives ssh config.yaml, ssh.yaml and its tuning, and squid its tuning in /etc/squid/conf.d/', () => {
    expect(volume('ssh-volume').projected.sources).toEqual([
      { configMap: { name: 'proxy-configmap', items: [{ key: 'config.yaml', path: 'config.yaml' }] } },
      { secret: { name: 'ssh', items: [{ key: 'ssh.yaml', path: 'ssh.yaml' }] } },
      { configMap: { name: 'proxy-tuning', items: [{ key: 'ssh_tuning', path: 'ssh_tuning.conf' }] } },
    ]);
    expect(container('ssh').volumeMounts).toEqual([
      { name: 'ssh-volume', mountPath: '/etc/uyuni/', readOnly: true },
      { name: 'etc-sshd', mountPath: '/etc/ssh/sshd_config.d/', readOnly: true },
    ]);
    expect(container('squid').volumeMounts).toContainEqual({ name: 'squid-volume', mountPath: '/etc/squid/conf.d/', readOnly: true });
    expect(volume('squid-volume')).toEqual({ name: 'squid-volume', configMap: { name: 'proxy-tuning', items: [{ key: 'squid_tuning', path: 'squid_tuning.conf' }] } });
    expect(container('salt-broker').volumeMounts).toEqual([{ name: 'config-volume', mountPath: '/etc/uyuni/', readOnly: true }]);
  });

  it('writes the configured tuning into ConfigMap proxy-tuning, every key there even without tuning', () => {
    expect(proxy.find('ConfigMap', 'proxy-tuning').data).toEqual({ squid_tuning: 'cache_mem 512 MB\n', ssh_tuning: '', apache_tuning: '' });
  });

  it('runs Deployment uyuni-proxy-tftp: proxy-tftpd fetching from web.<ns>.svc, with config.yaml and the CA', () => {
    const tftp = proxy.find('Deployment', 'uyuni-proxy-tftp');
    expect(tftp.metadata.labels?.['app.kubernetes.io/component']).toBe('proxy-tftp');
    expect(tftp.spec).not.toHaveProperty('strategy');
    const [c] = podSpec(tftp).containers;
    expect([c.name, c.image]).toEqual(['tftpd', 'registry.opensuse.org/uyuni/proxy-tftpd:2026.08']);
    expect(c.command).toEqual(['/usr/bin/tftp_wrapper.py', '--httpHost', 'web.uyuni-proxy.svc']);
    expect(c.ports).toEqual([{ containerPort: 69, protocol: 'UDP' }]);
    expect(podSpec(tftp).volumes[0].projected.sources.map((s: any) => s.configMap.name)).toEqual(['proxy-configmap', 'uyuni-ca']);
    expect(podSpec(tftp)).not.toHaveProperty('hostNetwork');
  });

  it('requires the user\'s configuration objects at the proxy step, each with the command that makes it', () => {
    const { requires } = proxy.step('proxy');
    expect(requires.map((r) => [r.kind, r.name, r.namespace, r.keys, r.ifMissing])).toEqual([
      ['ConfigMap', 'proxy-configmap', 'uyuni-proxy', ['config.yaml'], 'fail'],
      ['Secret', 'httpd', 'uyuni-proxy', ['httpd.yaml'], 'fail'],
      ['Secret', 'ssh', 'uyuni-proxy', ['ssh.yaml'], 'fail'],
      ['Secret', 'proxy-cert', 'uyuni-proxy', ['tls.crt', 'tls.key'], 'fail'],
      ['ConfigMap', 'uyuni-ca', 'uyuni-proxy', ['ca.crt'], 'fail'],
    ]);
    const message = (name: string) => requires.find((r) => r.name === name)!.message;
    expect(message('proxy-configmap')).toContain('tar xf config.tar.gz && kubectl -n uyuni-proxy create configmap proxy-configmap --from-file=config.yaml');
    expect(message('httpd')).toContain('kubectl -n uyuni-proxy create secret generic httpd --from-file=httpd.yaml');
    expect(message('ssh')).toContain('kubectl -n uyuni-proxy create secret generic ssh --from-file=ssh.yaml');
    expect(message('proxy-cert')).toContain('made by Job uyuni-proxy-certs from the tarball\'s httpd.server_crt and httpd.server_key (httpd.yaml) '
      + '(kubectl -n uyuni-proxy logs job/uyuni-proxy-certs); without them in the tarball, create it: ');
    expect(message('uyuni-ca')).toContain('made by Job uyuni-proxy-certs from the tarball\'s ca_crt (config.yaml)');
    expect(message('proxy-cert')).toContain('for proxy.example.com');
    expect(message('proxy-cert')).toContain('kubectl -n uyuni-proxy create secret tls proxy-cert --cert=<certificate with its chain> --key=<key>');
    expect(message('uyuni-ca')).toContain('kubectl -n uyuni-proxy create configmap uyuni-ca --from-file=ca.crt=<CA certificate>');
    expect(proxy.step('tftp').requires.map((r) => r.name)).toEqual(['proxy-configmap', 'uyuni-ca']);
    for (const step of ['namespace', 'volumes', 'services']) expect(proxy.step(step).requires).toEqual([]);
    expect(proxy.step('certs').requires.map((r) => r.name)).toEqual(['proxy-configmap', 'httpd']);
  });

  describe('Job uyuni-proxy-certs (proxy-helm templates/cert.yaml @ 00f177a9: proxy-cert and uyuni-ca from the tarball)', () => {
    const job = proxy.find('Job', 'uyuni-proxy-certs');
    const spec = podSpec(job);
    const [runner] = spec.containers;

    it('runs proxy-certs.py with python3 in the proxy-httpd image, as its own service account, once', () => {
      expect([runner.name, runner.image]).toEqual(['runner', 'registry.opensuse.org/uyuni/proxy-httpd:2026.08']);
      expect(runner.command).toEqual(['python3', '-c', readScript('proxy-certs.py')]);
      expect(spec.serviceAccountName).toBe('uyuni-proxy-certs');
      expect(proxy.find('ServiceAccount', 'uyuni-proxy-certs').automountServiceAccountToken).toBe(true);
      expect(proxy.find('RoleBinding', 'uyuni-proxy-certs').subjects).toEqual([{ kind: 'ServiceAccount', name: 'uyuni-proxy-certs', namespace: 'uyuni-proxy' }]);
      expect([job.spec.backoffLimit, spec.restartPolicy]).toEqual([0, 'Never']);
    });

    it('reads config.yaml and httpd.yaml from the user\'s objects at /etc/uyuni, read-only, the key file 0400', () => {
      expect(runner.volumeMounts).toEqual([{ name: 'tarball', mountPath: '/etc/uyuni', readOnly: true }]);
      expect(spec.volumes).toEqual([{
        name: 'tarball',
        projected: {
          defaultMode: 0o400,
          sources: [
            { configMap: { name: 'proxy-configmap', items: [{ key: 'config.yaml', path: 'config.yaml' }] } },
            { secret: { name: 'httpd', items: [{ key: 'httpd.yaml', path: 'httpd.yaml' }] } },
          ],
        },
      }]);
      const env = Object.fromEntries(runner.env.map((e: any) => [e.name, e.value ?? e.valueFrom]));
      expect(env).toMatchObject({
        CONFIG_FILE: '/etc/uyuni/config.yaml', HTTPD_FILE: '/etc/uyuni/httpd.yaml', CERT_SECRET: 'proxy-cert', CA_CONFIGMAP: 'uyuni-ca',
        NAMESPACE: { fieldRef: { fieldPath: 'metadata.namespace' } }, MANAGED_BY_LABEL: 'app.kubernetes.io/managed-by', MANAGED_BY: 'uyuni-cdk',
      });
      // The objects it makes carry the plan's selector labels: destroy removes them, as helm uninstall does.
      expect(JSON.parse(env.OBJECT_LABELS)).toMatchObject(proxy.plan.selector);
    });

    it('may get and replace only proxy-cert and uyuni-ca, and create Secrets and ConfigMaps', () => {
      expect(proxy.find('Role', 'uyuni-proxy-certs').rules).toEqual([
        { apiGroups: [''], resources: ['secrets'], verbs: ['get', 'update'], resourceNames: ['proxy-cert'] },
        { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'update'], resourceNames: ['uyuni-ca'] },
        { apiGroups: [''], resources: ['secrets', 'configmaps'], verbs: ['create'] },
      ]);
    });

    it('runs after the tarball\'s objects exist and before the pods that mount what it makes', () => {
      const names = proxy.plan.steps.map((s) => s.name);
      expect(names.indexOf('certs')).toBeLessThan(names.indexOf('proxy'));
      expect(proxy.step('certs').requires.map((r) => [r.kind, r.name, r.ifMissing])).toEqual([['ConfigMap', 'proxy-configmap', 'fail'], ['Secret', 'httpd', 'fail']]);
    });
  });

  it('writes no Secret and none of the user\'s objects: no key material in dist/', () => {
    expect(proxy.objects.filter((o) => o.kind === 'Secret')).toEqual([]);
    expect(proxy.objects.filter((o) => o.kind === 'ConfigMap').map((o) => o.metadata.name)).toEqual(['proxy-tuning']);
    for (const text of Object.values(proxy.text)) expect(text).not.toMatch(/BEGIN [A-Z ]*(PRIVATE KEY|CERTIFICATE)|tls\.key:|httpd\.yaml:|ssh\.yaml:|config\.yaml:/);
  });

  it('labels every object part-of uyuni-proxy, with the component of what it is', () => {
    const component = (o: K8sObject) => {
      if (o.kind === 'PersistentVolumeClaim') return 'storage';
      if (o.metadata.name === 'tftp' || o.metadata.name === 'uyuni-proxy-tftp') return 'proxy-tftp';
      if (o.metadata.name === 'uyuni-proxy-certs') return 'step';
      return 'proxy';
    };
    for (const o of proxy.objects) {
      expect(o.metadata.labels).toMatchObject({ 'app.kubernetes.io/part-of': 'uyuni-proxy', 'app.kubernetes.io/component': component(o), 'app.kubernetes.io/managed-by': 'uyuni-cdk' });
    }
  });

  it('validates every object against the Kubernetes 1.28 schemas', () => {
    for (const o of proxy.objects) expect(() => validateObject(o)).not.toThrow();
  });
});

describe('the proxy plan with proxy.tftp.hostNetwork', () => {
  const p = synthYaml(proxyOnly('  tftp:\n    hostNetwork: true\n')).proxy;

  it('renders no tftp Service and runs uyuni-proxy-tftp in the node\'s network, Recreate', () => {
    expect(p.step('services').objects.map((o) => o.name)).toEqual(['web', 'salt', 'ssh']);
    const tftp = p.find('Deployment', 'uyuni-proxy-tftp');
    expect(podSpec(tftp)).toMatchObject({ hostNetwork: true, dnsPolicy: 'ClusterFirstWithHostNet' });
    expect(tftp.spec.strategy).toEqual({ type: 'Recreate' });
    expect(podSpec(tftp).containers[0].ports).toEqual([{ containerPort: 69, protocol: 'UDP' }]);
    expect(p.step('tftp').description).toContain('node\'s network');
  });

  it('keeps the defaults elsewhere: every Service ClusterIP, a 10Gi cache of the default class, empty tuning', () => {
    for (const s of p.objects.filter((o) => o.kind === 'Service')) expect(s.spec.type).toBe('ClusterIP');
    const pvc = p.find('PersistentVolumeClaim', 'squid-cache');
    expect(pvc.spec.resources.requests.storage).toBe('10Gi');
    expect(pvc.spec).not.toHaveProperty('storageClassName');
    expect(p.find('ConfigMap', 'proxy-tuning').data).toEqual({ squid_tuning: '', ssh_tuning: '', apache_tuning: '' });
    for (const o of p.objects) expect(() => validateObject(o)).not.toThrow();
  });
});

describe('the proxy plan with proxy.tls.issuer (the proxy in the server\'s cluster)', () => {
  const p = synthYaml(proxyOnly('  tls:\n    issuer: true\n', 'namespace: uyuni\ntls:\n  duration: 4380h\n')).proxy;
  const step = p.step('tls');

  it('issues Certificate uyuni-proxy-proxy-cert for the proxy FQDN in the server\'s namespace, from Issuer uyuni-issuer', () => {
    expect(p.plan.steps.map((s) => s.name)).toEqual(['namespace', 'tls', 'volumes', 'services', 'proxy', 'tftp']);
    // The certificate is the server's Certificate, copied: nothing is made from the tarball.
    expect(p.objects.filter((o) => o.kind === 'Job')).toEqual([]);
    expect(step.objects).toEqual([{ apiVersion: 'cert-manager.io/v1', kind: 'Certificate', name: 'uyuni-proxy-proxy-cert', namespace: 'uyuni' }]);
    expect(step.waits).toEqual([{ object: step.objects[0], for: 'ready' }]);
    const cert = p.find('Certificate', 'uyuni-proxy-proxy-cert');
    expect(cert.spec).toMatchObject({
      secretName: 'uyuni-proxy-proxy-cert',
      commonName: 'proxy.example.com',
      dnsNames: ['proxy.example.com'],
      usages: ['server auth'],
      privateKey: { algorithm: 'RSA', size: 2048, encoding: 'PKCS1', rotationPolicy: 'Always' },
      duration: '4380h',
      renewBefore: '720h',
      issuerRef: { name: 'uyuni-issuer', kind: 'Issuer', group: 'cert-manager.io' },
    });
    expect(cert.metadata.labels).toMatchObject({ 'app.kubernetes.io/part-of': 'uyuni-proxy', 'app.kubernetes.io/component': 'tls' });
    expect(() => validateObject(cert)).not.toThrow();
  });

  it('needs the server\'s CA first, and tells how to copy the issued Secret and its CA into the proxy\'s namespace', () => {
    expect(step.requires).toEqual([expect.objectContaining({ kind: 'Secret', name: 'uyuni-ca', namespace: 'uyuni', keys: ['tls.crt'], ifMissing: 'fail' })]);
    expect(step.requires[0].message).toContain('install the server in namespace uyuni first');
    const message = (name: string) => p.step('proxy').requires.find((r) => r.name === name)!.message;
    expect(message('proxy-cert')).toBe('the proxy\'s certificate, issued in namespace uyuni as Secret uyuni-proxy-proxy-cert: copy it with '
      + 'kubectl -n uyuni get secret uyuni-proxy-proxy-cert -o jsonpath=\'{.data.tls\\.crt}\' | base64 -d >tls.crt && '
      + 'kubectl -n uyuni get secret uyuni-proxy-proxy-cert -o jsonpath=\'{.data.tls\\.key}\' | base64 -d >tls.key && '
      + 'kubectl -n uyuni-proxy create secret tls proxy-cert --cert=tls.crt --key=tls.key --dry-run=client -o yaml | kubectl -n uyuni-proxy apply -f - && rm tls.key');
    expect(message('uyuni-ca')).toBe('the CA of the proxy\'s certificate: copy it with '
      + 'kubectl -n uyuni get secret uyuni-proxy-proxy-cert -o jsonpath=\'{.data.ca\\.crt}\' | base64 -d >ca.crt && '
      + 'kubectl -n uyuni-proxy create configmap uyuni-ca --from-file=ca.crt --dry-run=client -o yaml | kubectl -n uyuni-proxy apply -f -');
  });
});

describe('proxy configuration errors', () => {
  const bad = (text: string) => {
    try {
      parseConfig(text, 'proxy.yaml');
    } catch (e) {
      if (e instanceof ConfigError) return e.problems;
      throw e;
    }
    throw new Error('accepted');
  };
  const badProxy = (proxySection: string) => bad(`plans: [proxy]\nfqdn: uyuni.example.com\nproxy:\n${proxySection}`);

  it('names the field of a bad proxy setting', () => {
    expect(badProxy('  fqdn: proxy\n')[0]).toMatch(/^proxy.fqdn: must be a fully qualified domain name/);
    expect(badProxy('  fqdn: proxy.example.com\n  namespace: Proxy_NS\n')[0]).toMatch(/^proxy.namespace: must be a DNS-1123 label/);
    expect(badProxy('  fqdn: proxy.example.com\n  cache:\n    size: lots\n')[0]).toMatch(/^proxy.cache.size: must be a Kubernetes quantity/);
    expect(badProxy('  fqdn: proxy.example.com\n  services:\n    web:\n      type: Ingress\n')[0]).toMatch(/^proxy.services.web.type: must be one of/);
    expect(badProxy('  fqdn: proxy.example.com\n  services:\n    cobbler:\n      type: NodePort\n')[0]).toMatch(/^proxy.services.cobbler: no such Service \(known: salt, ssh, tftp, web\)/);
    expect(badProxy('  fqdn: proxy.example.com\n  squid: true\n')).toEqual(['proxy.squid: unknown setting']);
    expect(badProxy('  fqdn: proxy.example.com\n  tls:\n    issuer: yes please\n')).toEqual(['proxy.tls.issuer: must be a boolean']);
    expect(badProxy('  fqdn: proxy.example.com\n  tuning:\n    squid: [a]\n')).toEqual(['proxy.tuning.squid: must be a string']);
    expect(badProxy('  fqdn: proxy.example.com\n  tuning:\n    httpd: x\n')).toEqual(['proxy.tuning.httpd: unknown setting']);
    expect(badProxy('  fqdn: proxy.example.com\n  tftp:\n    hostNetwork: 1\n')).toEqual(['proxy.tftp.hostNetwork: must be a boolean']);
  });

  it('says what replaced proxy.configSecret', () => {
    expect(badProxy('  fqdn: proxy.example.com\n  configSecret: uyuni-proxy-config\n')).toEqual([
      'proxy.configSecret: removed: the proxy reads ConfigMap proxy-configmap and Secrets httpd and ssh, made from the config tarball (README: "Proxy")',
    ]);
  });

  it('refuses an exposure for tftp, which is always a LoadBalancer', () => {
    expect(badProxy('  fqdn: proxy.example.com\n  services:\n    tftp:\n      type: LoadBalancer\n')).toEqual([
      'proxy.services.tftp: tftp is always a LoadBalancer Service with ClientIP affinity (use proxy.tftp.hostNetwork to do without it)',
    ]);
  });

  it('refuses proxy.tls.issuer without the server\'s Issuer, or in the server\'s namespace', () => {
    expect(bad('plans: [proxy]\nfqdn: uyuni.example.com\ntls: {mode: third-party}\nproxy: {fqdn: proxy.example.com, tls: {issuer: true}}\n')).toEqual([
      'proxy.tls.issuer: the server has no Issuer uyuni-issuer with tls.mode third-party; create Secret proxy-cert yourself',
    ]);
    expect(bad('plans: [proxy]\nfqdn: uyuni.example.com\nproxy: {fqdn: proxy.example.com, namespace: uyuni, tls: {issuer: true}}\n')).toEqual([
      'proxy.namespace: must not be the server\'s namespace uyuni with proxy.tls.issuer (the proxy\'s Services web and salt would replace the server\'s)',
    ]);
    expect(() => parseConfig('plans: [proxy]\nfqdn: uyuni.example.com\ntls: {mode: migrated}\nproxy: {fqdn: proxy.example.com, tls: {issuer: true}}\n')).not.toThrow();
  });

  it('refuses a proxy node port that clashes with the server\'s', () => {
    expect(bad([
      'fqdn: uyuni.example.com',
      'services: {salt: {type: NodePort, nodePorts: {publish: 30505}}}',
      'proxy: {fqdn: proxy.example.com, services: {salt: {type: NodePort, nodePorts: {salt-publish: 30505}}}}',
    ].join('\n'))).toEqual(['proxy.services.salt.nodePorts.salt-publish: node port 30505 is already used by services.salt.nodePorts.publish']);
    expect(badProxy('  fqdn: proxy.example.com\n  services:\n    salt: {type: NodePort, nodePorts: {publish: 30505}}\n')).toEqual([
      'proxy.services.salt.nodePorts.publish: salt has no port of that name (ports: salt-publish, salt-request)',
    ]);
  });
});
