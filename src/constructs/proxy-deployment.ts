import { k8s } from 'cdk8s-plus-28';
import { Construct } from 'constructs';
import type { ImageRef } from '../model/images';
import type { ContainerPort } from '../model/ports';
import { CERT_MODE, KEY_MODE } from '../model/tls';
import { componentDeployment } from './component-deployment';
import { PROXY_CONFIG, PROXY_FILES, TUNING_KEYS } from './proxy-config';
import { readScript } from './script-job';

/**
 * The containers of Deployment uyuni-proxy, named as the chart's (its cache clearing runs
 * `kubectl exec -c squid`). Each runs image `proxy-<name>`.
 */
export const PROXY_CONTAINERS = ['httpd', 'salt-broker', 'squid', 'ssh'] as const;
export type ProxyContainer = (typeof PROXY_CONTAINERS)[number];

export interface ProxyDeploymentProps {
  readonly namespace: string;
  /** Each container's image; init-httpd runs httpd's, init-sshd ssh's. */
  readonly images: Readonly<Record<ProxyContainer, ImageRef>>;
  /** The ports each container listens on. */
  readonly ports: Readonly<Record<ProxyContainer, readonly ContainerPort[]>>;
  /** The squid cache claim. @default 'squid-cache' */
  readonly cacheClaim?: string;
  /** The pod's DNS settings, as given (proxy-helm `dnsConfig`, tests/dns_config_test.yaml @ 24fbbcdd). @default none */
  readonly dnsConfig?: k8s.PodDnsConfig;
}

/** Where every container reads its configuration files (mounted at `/etc/uyuni/`). */
export const PROXY_CONFIG_DIR = '/etc/uyuni';
const CONFIG_MOUNT = `${PROXY_CONFIG_DIR}/`;
/** Where the init containers mount the emptyDirs they fill. */
const APACHE_SEED = '/tmp/apache2';
const SSHD_SEED = '/tmp/sshd';

const item = (key: string, path: string, mode?: number) => ({ key, path, ...(mode !== undefined ? { mode } : {}) });
const configYaml = { configMap: { name: PROXY_CONFIG.configMap, items: [item(PROXY_FILES.config, PROXY_FILES.config)] } };

/**
 * The pod's volumes (proxy-helm templates/deployment.yaml @ 1ad19a5d): per container a projected
 * volume of what it reads at /etc/uyuni/, the tuning from our ConfigMap proxy-tuning, the CA as
 * the image's trust anchor, the emptyDirs the init containers fill, and the squid cache.
 */
function volumes(cacheClaim: string): k8s.Volume[] {
  const tuning = (key: string, path: string) => ({ configMap: { name: PROXY_CONFIG.tuning, items: [item(key, path)] } });
  return [
    {
      name: 'httpd-volume',
      projected: {
        sources: [
          configYaml,
          { secret: { name: PROXY_CONFIG.httpd, items: [item(PROXY_FILES.httpd, PROXY_FILES.httpd)] } },
          tuning(TUNING_KEYS.apache, 'apache_tuning.conf'),
          { configMap: { name: PROXY_CONFIG.ca, items: [item('ca.crt', 'ca.crt', CERT_MODE)] } },
          { secret: { name: PROXY_CONFIG.cert, items: [item('tls.crt', 'server.crt', CERT_MODE), item('tls.key', 'server.key', KEY_MODE)] } },
        ],
      },
    },
    {
      name: 'ssh-volume',
      projected: {
        sources: [
          configYaml,
          { secret: { name: PROXY_CONFIG.ssh, items: [item(PROXY_FILES.ssh, PROXY_FILES.ssh)] } },
          tuning(TUNING_KEYS.ssh, 'ssh_tuning.conf'),
        ],
      },
    },
    { name: 'config-volume', ...configYaml },
    { name: 'squid-volume', ...tuning(TUNING_KEYS.squid, 'squid_tuning.conf') },
    { name: 'squid-cache', persistentVolumeClaim: { claimName: cacheClaim } },
    { name: 'ca-cert', configMap: { name: PROXY_CONFIG.ca, defaultMode: CERT_MODE, items: [item('ca.crt', 'RHN-ORG-TRUSTED-SSL-CERT')] } },
    { name: 'etc-apache2', emptyDir: {} },
    { name: 'etc-sshd', emptyDir: {} },
  ];
}

/**
 * Deployment `uyuni-proxy` (component proxy), as proxy-helm templates/deployment.yaml @ 1ad19a5d:
 * init containers seed /etc/apache2 and /etc/ssh/sshd_config.d (emptyDirs) from the images and
 * link the certificate and tuning into them (src/scripts/proxy-init-*.sh); then httpd,
 * salt-broker, squid and ssh, each with its configuration at /etc/uyuni/. Recreate: the squid
 * cache is ReadWriteOnce.
 */
export class ProxyDeployment extends Construct {
  public static readonly NAME = 'uyuni-proxy';
  public readonly deployment: k8s.KubeDeployment;

  constructor(scope: Construct, id: string, props: ProxyDeploymentProps) {
    super(scope, id);
    const { images } = props;
    const pullSecrets = [...new Set(PROXY_CONTAINERS.flatMap((c) => (images[c].pullSecrets ?? []).map((s) => s.name)))];
    const image = (c: ProxyContainer) => ({ image: images[c].image, imagePullPolicy: images[c].pullPolicy });
    const mount = (name: string, mountPath: string, readOnly = false) => ({ name, mountPath, ...(readOnly ? { readOnly } : {}) });
    const container = (name: ProxyContainer, volumeMounts: k8s.VolumeMount[]): k8s.Container => ({
      name,
      ...image(name),
      volumeMounts,
      ports: props.ports[name].map((p) => ({ ...p })),
    });
    const init = (name: string, from: ProxyContainer, script: string, volume: string, seed: string): k8s.Container => ({
      name,
      ...image(from),
      command: ['sh', '-c', readScript(script)],
      env: [{ name: 'TARGET', value: seed }, { name: 'CONFIG_DIR', value: PROXY_CONFIG_DIR }],
      volumeMounts: [mount(volume, seed)],
    });

    this.deployment = componentDeployment(this, 'Resource', {
      name: ProxyDeployment.NAME,
      namespace: props.namespace,
      partOf: 'uyuni-proxy',
      component: 'proxy',
      replicas: 1,
      recreate: true,
      pod: {
        ...(pullSecrets.length > 0 ? { imagePullSecrets: pullSecrets.map((name) => ({ name })) } : {}),
        ...(props.dnsConfig ? { dnsConfig: props.dnsConfig } : {}),
        initContainers: [
          init('init-httpd', 'httpd', 'proxy-init-httpd.sh', 'etc-apache2', APACHE_SEED),
          init('init-sshd', 'ssh', 'proxy-init-sshd.sh', 'etc-sshd', SSHD_SEED),
        ],
        containers: [
          container('httpd', [
            mount('httpd-volume', CONFIG_MOUNT, true),
            mount('etc-apache2', '/etc/apache2'),
            mount('ca-cert', '/etc/pki/trust/anchors/', true),
          ]),
          container('salt-broker', [mount('config-volume', CONFIG_MOUNT, true)]),
          container('squid', [
            mount('config-volume', CONFIG_MOUNT, true),
            mount('squid-cache', '/var/cache/squid'),
            mount('squid-volume', '/etc/squid/conf.d/', true),
          ]),
          container('ssh', [
            mount('ssh-volume', CONFIG_MOUNT, true),
            mount('etc-sshd', '/etc/ssh/sshd_config.d/', true),
          ]),
        ],
        volumes: volumes(props.cacheClaim ?? 'squid-cache'),
      },
    });
  }
}
