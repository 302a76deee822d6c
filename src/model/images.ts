/**
 * Image naming (docs/upstream.md): `<registry>/<name>:<tag>`; a component's `image`
 * replaces `<registry>/<name>`, its `tag` the global tag, its `digest` the tag (pinned:
 * `<repo>@sha256:…`, what a restore asks for: docs/backup.md).
 */

/** The image names of the current generation, by component. */
export const IMAGES = {
  server: 'server',
  db: 'server-postgresql',
  hubApi: 'server-hub-xmlrpc-api',
  coco: 'server-attestation',
  tftp: 'shared-tftpd',
  /** PostgreSQL major upgrades (14/16 → 18): /migration/source → /migration/target. */
  dbMigration: 'server-database-migration',
  /** A proxy container's image: `proxy-<name>`. */
  proxy: (name: string) => `proxy-${name}`,
} as const;

export type ImageComponent = Exclude<keyof typeof IMAGES, 'proxy'>;

/** One component's override. */
export interface ImageOverride {
  /** Replaces `<registry>/<name>`. */
  readonly image?: string;
  /** Replaces the global tag. */
  readonly tag?: string;
  /** Pins the image: `<repo>@<digest>` (`sha256:…`) instead of `<repo>:<tag>`. */
  readonly digest?: string;
}

/** The image settings of a configuration (structurally `UyuniConfig['images']`). */
export interface ImageSettings {
  readonly registry: string;
  readonly tag: string;
  readonly pullPolicy: string;
  readonly pullSecret?: string;
  readonly components?: Readonly<Partial<Record<ImageComponent, ImageOverride>>>;
}

/** What a pod needs to pull one image. */
export interface ImageRef {
  /** The full reference. */
  readonly image: string;
  readonly pullPolicy: string;
  /** imagePullSecrets. @default none */
  readonly pullSecrets?: readonly { readonly name: string }[];
}

/** The reference of an image name under the settings (`name` is a proxy image or a component's). */
export function imageRef(settings: ImageSettings, component: ImageComponent | { readonly name: string }): ImageRef {
  const override = typeof component === 'string' ? settings.components?.[component] : undefined;
  const name = typeof component === 'string' ? IMAGES[component] : component.name;
  const repo = override?.image ?? `${settings.registry}/${name}`;
  return {
    image: override?.digest ? `${repo}@${override.digest}` : `${repo}:${override?.tag ?? settings.tag}`,
    pullPolicy: settings.pullPolicy,
    ...(settings.pullSecret ? { pullSecrets: [{ name: settings.pullSecret }] } : {}),
  };
}
