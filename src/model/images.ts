import type { UyuniConfig } from '../config/schema';

/** Image naming (uyuni-server.md §1): `<registry>/<name>:<tag>`. */
export function image(config: Pick<UyuniConfig, 'images'>, name: string): string {
  return `${config.images.registry}/${name}:${config.images.tag}`;
}

export const IMAGES = {
  server: 'server',
  postgresql: 'server-postgresql',
  hubApi: 'server-hub-xmlrpc-api',
  coco: 'server-attestation',
  /** The PostgreSQL upgrade image: `server-migration-<from>-<to>`. */
  migration: (from: number, to: number) => `server-migration-${from}-${to}`,
  /** A proxy container's image (and container name): `proxy-<name>`. */
  proxy: (name: string) => `proxy-${name}`,
} as const;

/** imagePullSecrets for a pod, when the configuration names one. */
export function pullSecrets(config: Pick<UyuniConfig, 'images'>) {
  return config.images.pullSecret ? [{ name: config.images.pullSecret }] : undefined;
}
