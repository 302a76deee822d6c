import { k8s } from 'cdk8s-plus-28';
import { Construct } from 'constructs';
import { IMAGES, imageRef, ImageSettings } from '../model/images';
import { containerPorts, PROXY_SERVICES } from '../model/ports';
import { componentDeployment } from './component-deployment';

export interface ProxyDeploymentProps {
  readonly namespace: string;
  /** Registry, tag and pull settings of the proxy images (`<registry>/proxy-<name>:<tag>`). */
  readonly images: ImageSettings;
  readonly timezone: string;
  /** The Secret made from the proxy config tarball (config.yaml, httpd.yaml, ssh.yaml). */
  readonly configSecret: string;
  /** The squid cache claim. */
  readonly cacheClaim: string;
}

/** The proxy's containers (`proxy-<name>`, image `proxy-<name>`) and the tarball files each one reads. */
export const PROXY_CONTAINERS = [
  { name: 'httpd', files: ['config.yaml', 'httpd.yaml'] },
  { name: 'salt-broker', files: ['config.yaml'] },
  { name: 'squid', files: ['config.yaml'] },
  { name: 'ssh', files: ['config.yaml', 'ssh.yaml'] },
  { name: 'tftpd', files: ['config.yaml'] },
] as const;

/** Where each container finds its configuration files. */
export const PROXY_CONFIG_DIR = '/etc/uyuni';

/**
 * Deployment `uyuni-proxy` (component proxy): the five proxy containers in one pod, their
 * ports derived from the proxy port table, their configuration from the user's Secret (the
 * proxy config tarball: certificates and keys included, never in dist/). Recreate: the squid
 * cache is ReadWriteOnce.
 */
export class ProxyDeployment extends Construct {
  public static readonly NAME = 'uyuni-proxy';
  public readonly deployment: k8s.KubeDeployment;

  constructor(scope: Construct, id: string, props: ProxyDeploymentProps) {
    super(scope, id);
    const ref = (name: string) => imageRef(props.images, { name: IMAGES.proxy(name) });
    const pullSecrets = ref('httpd').pullSecrets;
    this.deployment = componentDeployment(this, 'Resource', {
      name: ProxyDeployment.NAME,
      namespace: props.namespace,
      partOf: 'uyuni-proxy',
      component: 'proxy',
      replicas: 1,
      recreate: true,
      pod: {
        imagePullSecrets: pullSecrets ? [...pullSecrets] : undefined,
        containers: PROXY_CONTAINERS.map((c) => ({
          name: IMAGES.proxy(c.name),
          image: ref(c.name).image,
          imagePullPolicy: ref(c.name).pullPolicy,
          ports: containerPorts(PROXY_SERVICES, 'proxy', IMAGES.proxy(c.name)),
          env: [{ name: 'TZ', value: props.timezone }],
          volumeMounts: [
            ...c.files.map((f) => ({ name: 'proxy-config', mountPath: `${PROXY_CONFIG_DIR}/${f}`, subPath: f, readOnly: true })),
            ...(c.name === 'squid' ? [{ name: 'squid-cache', mountPath: '/var/cache/squid' }] : []),
          ],
        })),
        volumes: [
          { name: 'proxy-config', secret: { secretName: props.configSecret, defaultMode: 0o400 } },
          { name: 'squid-cache', persistentVolumeClaim: { claimName: props.cacheClaim } },
        ],
      },
    });
  }
}
