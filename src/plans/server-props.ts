import type { UyuniConfig, VolumeSettings } from '../config/schema';
import { portFeatures } from '../config/features';
import type { ClaimProps } from '../constructs/claims';
import type { ServerPodProps } from '../constructs/server-pod';
import { ImageComponent, imageRef, ImageRef } from '../model/images';
import { containerPorts, serverServices, ServiceSpec } from '../model/ports';
import { RELEASE_DIR, SERVER_VOLUMES, VolumeSpec } from '../model/volumes';
import type { k8s } from 'cdk8s-plus-28';

/**
 * The one place that maps the configuration onto the constructs' props: constructs never see
 * `UyuniConfig`, so each can be built, tested and reused (the proxy) on its own.
 */

export function imageOf(config: UyuniConfig, component: ImageComponent): ImageRef {
  return imageRef(config.images, component);
}

/** The server's Services for this configuration (from the one port table). */
export function serverServicesOf(config: UyuniConfig): ServiceSpec[] {
  return serverServices(portFeatures(config));
}

/** A claim of the table with the configuration's settings (`"-"` as storage class means `""`). */
export function claimOf(config: UyuniConfig, spec: VolumeSpec, own: VolumeSettings = config.volumes.overrides[spec.name] ?? {}): ClaimProps {
  const storageClass = own.storageClass ?? config.volumes.storageClass;
  return {
    name: spec.name,
    size: own.size ?? spec.size,
    ...(storageClass !== undefined ? { storageClass: storageClass === '-' ? '' : storageClass } : {}),
    ...(own.labels ? { labels: own.labels } : {}),
    ...(own.annotations ? { annotations: own.annotations } : {}),
    ...(own.volumeName ? { volumeName: own.volumeName } : {}),
    ...(own.selector ? { selector: own.selector as k8s.LabelSelector } : {}),
  };
}

/** The server pod's props: Deployment uyuni and the Jobs that run the server image on its data. */
export function serverPodProps(config: UyuniConfig): ServerPodProps {
  const s = config.server;
  return {
    image: imageOf(config, 'server'),
    timezone: config.timezone,
    volumes: SERVER_VOLUMES,
    releaseDir: RELEASE_DIR,
    confinement: { superPrivileged: s.superPrivileged, apparmorProfile: s.apparmorProfile, selinuxType: s.selinuxType },
    sccSecret: s.sccSecret,
    debugJava: config.debugJava,
    systemdLogLevel: s.systemdLogLevel,
    mirror: s.mirror,
    ports: containerPorts(serverServicesOf(config), 'server'),
    extraVolumes: s.extraVolumes,
    extraVolumeMounts: s.extraVolumeMounts,
  };
}

/** The administrator's address: `server.email`, else root@<fqdn> as the image's own default. */
export function adminEmail(config: UyuniConfig): string {
  return config.server.email ?? `root@${config.fqdn}`;
}
