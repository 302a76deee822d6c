import { k8s } from 'cdk8s-plus-28';
import type { UyuniConfig } from '../config/schema';
import { image, IMAGES, pullSecrets } from '../model/images';
import { containerPorts, serverServices } from '../model/ports';
import { SERVER_VOLUMES, VolumeSpec } from '../model/volumes';
import { readScript } from './script-job';
import { claimMounts, claimVolumes } from './server-volumes';

/** The server image runs systemd as root: say so explicitly instead of inheriting defaults. */
export const ROOT_CONTAINER: k8s.SecurityContext = {
  runAsUser: 0,
  runAsGroup: 0,
  runAsNonRoot: false,
  readOnlyRootFilesystem: false,
  allowPrivilegeEscalation: true,
};
export const ROOT_POD: k8s.PodSecurityContext = { runAsUser: 0, runAsGroup: 0, runAsNonRoot: false };

/** Where the server sees the CA certificate (never the CA key). */
export const CA_CERT_PATH = '/etc/pki/trust/anchors/LOCAL-RHN-ORG-TRUSTED-SSL-CERT';
/** Where the server sees its own certificate and key. */
export const SERVER_TLS_DIR = '/etc/pki/spacewalk-tls';

/** The Services of the server for this configuration (from the one port table). */
export function serverServicesOf(config: UyuniConfig) {
  return serverServices({ tftp: config.tftp, debugJava: config.debugJava, hubApi: config.hubApi.replicas > 0 }, config.db.separate);
}

/** The volumes the server container mounts: all of them, but the database's when it runs apart. */
export function serverVolumesOf(config: UyuniConfig): VolumeSpec[] {
  return SERVER_VOLUMES.filter((v) => !(config.db.separate && v.name === 'var-pgsql'));
}

/** The CA certificate volume: only the certificate item, so the key is never in the pod. */
function caVolume(config: UyuniConfig): k8s.Volume {
  if (config.tls.mode === 'third-party') {
    return { name: 'ca-cert', configMap: { name: 'uyuni-ca', items: [{ key: 'ca.crt', path: 'ca.crt' }] } };
  }
  return { name: 'ca-cert', secret: { secretName: 'uyuni-ca', items: [{ key: 'tls.crt', path: 'ca.crt' }] } };
}

/** The pieces of the server pod shared by the Deployment `uyuni` and the setup Job. */
export function serverPodParts(config: UyuniConfig) {
  const volumes = serverVolumesOf(config);
  const serverImage = image(config, IMAGES.server);
  const initVolumes: k8s.Container = {
    name: 'init-volumes',
    image: serverImage,
    imagePullPolicy: config.images.pullPolicy,
    command: ['sh', '-c', readScript('init-volumes.sh')],
    env: [{ name: 'VOLUME_PATHS', value: volumes.map((v) => v.mountPath).join(' ') }],
    volumeMounts: claimMounts(volumes, '/mnt'),
    securityContext: ROOT_CONTAINER,
  };
  const podVolumes: k8s.Volume[] = [
    ...claimVolumes(volumes),
    { name: 'run', emptyDir: { medium: 'Memory', sizeLimit: k8s.Quantity.fromString('256Mi') } },
    { name: 'cgroup', hostPath: { path: '/sys/fs/cgroup', type: 'Directory' } },
    caVolume(config),
    {
      name: 'tls-key',
      secret: {
        secretName: 'uyuni-cert',
        items: [
          { key: 'tls.crt', path: 'spacewalk.crt' },
          { key: 'tls.key', path: 'spacewalk.key', mode: 0o400 },
        ],
      },
    },
    ...(config.volumes.mirror ? [{ name: 'mirror', persistentVolumeClaim: { claimName: config.volumes.mirror } }] : []),
  ];
  const mounts: k8s.VolumeMount[] = [
    ...claimMounts(volumes),
    { name: 'run', mountPath: '/run' },
    { name: 'cgroup', mountPath: '/sys/fs/cgroup' },
    { name: 'ca-cert', mountPath: CA_CERT_PATH, subPath: 'ca.crt', readOnly: true },
    { name: 'tls-key', mountPath: SERVER_TLS_DIR, readOnly: true },
    ...(config.volumes.mirror ? [{ name: 'mirror', mountPath: '/mirror', readOnly: true }] : []),
  ];
  const env: k8s.EnvVar[] = [
    { name: 'TZ', value: config.timezone },
    ...(config.volumes.mirror ? [{ name: 'MIRROR_PATH', value: '/mirror' }] : []),
  ];
  return {
    image: serverImage,
    initVolumes,
    volumes: podVolumes,
    mounts,
    env,
    ports: containerPorts(serverServicesOf(config), 'server'),
    imagePullSecrets: pullSecrets(config),
  };
}
