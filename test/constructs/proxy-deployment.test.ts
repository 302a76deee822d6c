import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { Testing } from 'cdk8s';
import { PROXY_CONTAINERS, ProxyContainer, ProxyDeployment, ProxyDeploymentProps } from '../../src/constructs/proxy-deployment';
import { readScript } from '../../src/constructs/script-job';
import { K8sObject, validateObject } from '../helpers/validate';

const image = (name: string) => ({ image: `registry.opensuse.org/uyuni/proxy-${name}:2026.08`, pullPolicy: 'IfNotPresent' });
const each = <T>(f: (c: ProxyContainer) => T) => Object.fromEntries(PROXY_CONTAINERS.map((c) => [c, f(c)])) as Record<ProxyContainer, T>;
const MINIMAL: ProxyDeploymentProps = {
  namespace: 'uyuni-proxy',
  images: each(image),
  ports: { 'httpd': [{ containerPort: 80 }, { containerPort: 443 }], 'salt-broker': [{ containerPort: 4505 }], 'squid': [{ containerPort: 8088 }], 'ssh': [{ containerPort: 22 }] },
};

const synth = (props: Partial<ProxyDeploymentProps> = {}): K8sObject => {
  const chart = Testing.chart();
  new ProxyDeployment(chart, 'Proxy', { ...MINIMAL, ...props });
  const objects: K8sObject[] = Testing.synth(chart);
  objects.forEach(validateObject);
  expect(objects.map((o) => `${o.kind}/${o.metadata.name}`)).toEqual(['Deployment/uyuni-proxy']);
  return objects[0];
};
const pod = (props: Partial<ProxyDeploymentProps> = {}) => synth(props).spec.template.spec;
const byName = (list: any[], name: string) => list.find((x) => x.name === name);

describe('ProxyDeployment', () => {
  it('matches the snapshot of the default props (init scripts left out)', () => {
    const chart = Testing.chart();
    new ProxyDeployment(chart, 'Proxy', MINIMAL);
    const [dep] = Testing.synth(chart);
    for (const c of dep.spec.template.spec.initContainers) c.command[2] = `<${c.name} script>`;
    expect(dep).toMatchSnapshot();
  });

  it('is Deployment uyuni-proxy (component proxy, Recreate for the ReadWriteOnce cache), selected by part-of and component', () => {
    const dep = synth();
    expect(dep.metadata).toEqual({
      name: 'uyuni-proxy',
      namespace: 'uyuni-proxy',
      labels: { 'app.kubernetes.io/part-of': 'uyuni-proxy', 'app.kubernetes.io/component': 'proxy', 'app.kubernetes.io/managed-by': 'uyuni-cdk' },
    });
    expect(dep.spec.replicas).toBe(1);
    expect(dep.spec.strategy).toEqual({ type: 'Recreate' });
    expect(dep.spec.selector).toEqual({ matchLabels: { 'app.kubernetes.io/part-of': 'uyuni-proxy', 'app.kubernetes.io/component': 'proxy' } });
  });

  it('runs httpd, salt-broker, squid and ssh from their images, with the ports given', () => {
    const p = pod();
    expect(p.containers.map((c: any) => [c.name, c.image, c.imagePullPolicy])).toEqual(
      ['httpd', 'salt-broker', 'squid', 'ssh'].map((n) => [n, `registry.opensuse.org/uyuni/proxy-${n}:2026.08`, 'IfNotPresent']),
    );
    expect(byName(p.containers, 'httpd').ports).toEqual([{ containerPort: 80 }, { containerPort: 443 }]);
    expect(byName(p.containers, 'squid').ports).toEqual([{ containerPort: 8088 }]);
    const other = pod({ images: { ...MINIMAL.images, squid: { image: 'mirror.example.org/squid:7', pullPolicy: 'Always' } } });
    expect(byName(other.containers, 'squid')).toMatchObject({ image: 'mirror.example.org/squid:7', imagePullPolicy: 'Always' });
  });

  it('seeds the emptyDirs with init-httpd (httpd\'s image) and init-sshd (ssh\'s image), running the scripts', () => {
    const p = pod({ images: { ...MINIMAL.images, httpd: image('httpd-x'), ssh: image('ssh-x') } });
    expect(p.initContainers).toEqual([
      {
        name: 'init-httpd', image: image('httpd-x').image, imagePullPolicy: 'IfNotPresent',
        command: ['sh', '-c', readScript('proxy-init-httpd.sh')],
        env: [{ name: 'TARGET', value: '/tmp/apache2' }, { name: 'CONFIG_DIR', value: '/etc/uyuni' }],
        volumeMounts: [{ name: 'etc-apache2', mountPath: '/tmp/apache2' }],
      },
      {
        name: 'init-sshd', image: image('ssh-x').image, imagePullPolicy: 'IfNotPresent',
        command: ['sh', '-c', readScript('proxy-init-sshd.sh')],
        env: [{ name: 'TARGET', value: '/tmp/sshd' }, { name: 'CONFIG_DIR', value: '/etc/uyuni' }],
        volumeMounts: [{ name: 'etc-sshd', mountPath: '/tmp/sshd' }],
      },
    ]);
  });

  it('mounts each container\'s configuration at /etc/uyuni/ read-only, and what else it needs', () => {
    const mounts = Object.fromEntries(pod().containers.map((c: any) => [c.name, c.volumeMounts.map((m: any) => `${m.name}:${m.mountPath}${m.readOnly ? ':ro' : ''}`)]));
    expect(mounts).toEqual({
      'httpd': ['httpd-volume:/etc/uyuni/:ro', 'etc-apache2:/etc/apache2', 'ca-cert:/etc/pki/trust/anchors/:ro'],
      'salt-broker': ['config-volume:/etc/uyuni/:ro'],
      'squid': ['config-volume:/etc/uyuni/:ro', 'squid-cache:/var/cache/squid', 'squid-volume:/etc/squid/conf.d/:ro'],
      'ssh': ['ssh-volume:/etc/uyuni/:ro', 'etc-sshd:/etc/ssh/sshd_config.d/:ro'],
    });
  });

  it('projects the user\'s objects and our tuning, the key readable by its owner only', () => {
    const volumes = pod().volumes;
    expect(volumes.map((v: any) => v.name)).toEqual(['httpd-volume', 'ssh-volume', 'config-volume', 'squid-volume', 'squid-cache', 'ca-cert', 'etc-apache2', 'etc-sshd']);
    const sources = (name: string) => byName(volumes, name).projected.sources.map((s: any) => {
      const [kind, ref] = Object.entries(s)[0] as [string, any];
      return `${kind} ${ref.name}: ${ref.items.map((i: any) => `${i.key}->${i.path}${i.mode !== undefined ? ` ${i.mode.toString(8)}` : ''}`).join(', ')}`;
    });
    expect(sources('httpd-volume')).toEqual([
      'configMap proxy-configmap: config.yaml->config.yaml',
      'secret httpd: httpd.yaml->httpd.yaml',
      'configMap proxy-tuning: apache_tuning->apache_tuning.conf',
      'configMap uyuni-ca: ca.crt->ca.crt 644',
      'secret proxy-cert: tls.crt->server.crt 644, tls.key->server.key 400',
    ]);
    expect(sources('ssh-volume')).toEqual([
      'configMap proxy-configmap: config.yaml->config.yaml',
      'secret ssh: ssh.yaml->ssh.yaml',
      'configMap proxy-tuning: ssh_tuning->ssh_tuning.conf',
    ]);
    expect(byName(volumes, 'config-volume').configMap).toEqual({ name: 'proxy-configmap', items: [{ key: 'config.yaml', path: 'config.yaml' }] });
    expect(byName(volumes, 'squid-volume').configMap).toEqual({ name: 'proxy-tuning', items: [{ key: 'squid_tuning', path: 'squid_tuning.conf' }] });
    expect(byName(volumes, 'ca-cert').configMap).toEqual({ name: 'uyuni-ca', defaultMode: 0o644, items: [{ key: 'ca.crt', path: 'RHN-ORG-TRUSTED-SSL-CERT' }] });
    expect(byName(volumes, 'etc-apache2')).toEqual({ name: 'etc-apache2', emptyDir: {} });
  });

  it('mounts the squid-cache claim by default, or the claim given', () => {
    expect(byName(pod().volumes, 'squid-cache').persistentVolumeClaim).toEqual({ claimName: 'squid-cache' });
    expect(byName(pod({ cacheClaim: 'big-cache' }).volumes, 'squid-cache').persistentVolumeClaim).toEqual({ claimName: 'big-cache' });
  });

  it('pulls with every image\'s pull secret once, and without by default', () => {
    expect(pod()).not.toHaveProperty('imagePullSecrets');
    const withSecret = (name: string) => ({ ...image(name), pullSecrets: [{ name: 'regcred' }] });
    expect(pod({ images: each(withSecret) }).imagePullSecrets).toEqual([{ name: 'regcred' }]);
  });
});

describe('the proxy init scripts, run over an "image" in a temp dir', () => {
  const run = (script: string, env: Record<string, string>) =>
    spawnSync('sh', ['-c', readScript(script)], { encoding: 'utf8', env: { PATH: process.env.PATH!, ...env } });
  const scene = () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'uyuni-cdk-proxy-init-'));
    const put = (file: string, text: string) => {
      fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
      fs.writeFileSync(path.join(dir, file), text);
    };
    fs.mkdirSync(path.join(dir, 'target'));
    return { dir, put, at: (p: string) => path.join(dir, p) };
  };

  it('proxy-init-httpd copies the Apache configuration and links certificate, key and tuning, again on a re-run', () => {
    const s = scene();
    s.put('apache2/httpd.conf', 'ServerName proxy\n');
    s.put('apache2/ssl.crt/.keep', '');
    const env = { TARGET: s.at('target'), CONFIG_DIR: '/etc/uyuni', APACHE_DIR: s.at('apache2') };
    for (let i = 0; i < 2; i++) {
      const r = run('proxy-init-httpd.sh', env);
      expect(r.stderr).toBe('');
      expect(r.status).toBe(0);
    }
    expect(fs.readFileSync(s.at('target/httpd.conf'), 'utf8')).toBe('ServerName proxy\n');
    expect(fs.readlinkSync(s.at('target/ssl.crt/server.crt'))).toBe('/etc/uyuni/server.crt');
    expect(fs.readlinkSync(s.at('target/ssl.key/server.key'))).toBe('/etc/uyuni/server.key');
    // zz_: after the image's spacewalk-proxy configuration, so the user's MPM settings win (bsc#1277719)
    expect(fs.readlinkSync(s.at('target/conf.d/zz_apache_tuning.conf'))).toBe('/etc/uyuni/apache_tuning.conf');
    expect(fs.existsSync(s.at('target/conf.d/apache_tuning.conf'))).toBe(false);
  });

  it('proxy-init-httpd replaces the tuning link an older version left under its old name in a kept emptyDir', () => {
    const s = scene();
    s.put('apache2/httpd.conf', 'ServerName proxy\n');
    fs.mkdirSync(s.at('target/conf.d'), { recursive: true });
    fs.symlinkSync('/etc/uyuni/apache_tuning.conf', s.at('target/conf.d/apache_tuning.conf'));
    expect(run('proxy-init-httpd.sh', { TARGET: s.at('target'), CONFIG_DIR: '/etc/uyuni', APACHE_DIR: s.at('apache2') }).status).toBe(0);
    expect(fs.readdirSync(s.at('target/conf.d'))).toEqual(['zz_apache_tuning.conf']);
  });

  it('proxy-init-httpd fails when the image has no Apache configuration', () => {
    const s = scene();
    const r = run('proxy-init-httpd.sh', { TARGET: s.at('target'), APACHE_DIR: s.at('missing') });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('is this the proxy-httpd image?');
  });

  it('proxy-init-sshd copies the drop-ins and links the tuning as 99-tuning.conf, also without drop-ins', () => {
    const s = scene();
    s.put('sshd_config.d/10-uyuni.conf', 'PermitRootLogin no\n');
    for (let i = 0; i < 2; i++) {
      expect(run('proxy-init-sshd.sh', { TARGET: s.at('target'), CONFIG_DIR: '/etc/uyuni', SSHD_DIR: s.at('sshd_config.d') }).status).toBe(0);
    }
    expect(fs.readFileSync(s.at('target/10-uyuni.conf'), 'utf8')).toBe('PermitRootLogin no\n');
    expect(fs.readlinkSync(s.at('target/99-tuning.conf'))).toBe('/etc/uyuni/ssh_tuning.conf');
    const empty = scene();
    expect(run('proxy-init-sshd.sh', { TARGET: empty.at('target'), SSHD_DIR: empty.at('none') }).status).toBe(0);
    expect(fs.readdirSync(empty.at('target'))).toEqual(['99-tuning.conf']);
  });
});
