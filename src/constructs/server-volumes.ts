import { k8s } from 'cdk8s-plus-28';
import { Construct } from 'constructs';
import type { UyuniConfig } from '../config/schema';
import { commonLabels, PartOf } from '../model/labels';
import { SERVER_VOLUMES, VolumeSpec } from '../model/volumes';

/** The size and storage class one claim gets. */
export interface ResolvedVolume extends VolumeSpec {
  readonly storageClass?: string;
}

/** Applies the configuration to the volume table: override by name, then group, then default class. */
export function resolveVolume(config: Pick<UyuniConfig, 'volumes'>, spec: VolumeSpec): ResolvedVolume {
  const v = config.volumes;
  const group = spec.group === 'other' ? {} : v[spec.group];
  const own = v.overrides[spec.name] ?? {};
  return {
    ...spec,
    size: own.size ?? group.size ?? spec.size,
    storageClass: own.storageClass ?? group.storageClass ?? v.storageClass,
  };
}

export interface ServerVolumesProps {
  readonly namespace: string;
  readonly config: Pick<UyuniConfig, 'volumes'>;
  /** @default the 27 server volumes */
  readonly volumes?: readonly VolumeSpec[];
  /** @default 'uyuni' */
  readonly partOf?: PartOf;
}

/**
 * The server's PersistentVolumeClaims (ReadWriteOnce, claim name = volume name), with the
 * configured sizes and storage classes really written (upstream computed them and dropped them).
 * Every step Job and the final Deployment reuse these claims.
 */
export class ServerVolumes extends Construct {
  public readonly volumes: readonly ResolvedVolume[];

  constructor(scope: Construct, id: string, props: ServerVolumesProps) {
    super(scope, id);
    this.volumes = (props.volumes ?? SERVER_VOLUMES).map((spec) => resolveVolume(props.config, spec));
    for (const vol of this.volumes) {
      new k8s.KubePersistentVolumeClaim(this, vol.name, {
        metadata: { name: vol.name, namespace: props.namespace, labels: commonLabels(props.partOf ?? 'uyuni', 'storage') },
        spec: {
          accessModes: ['ReadWriteOnce'],
          storageClassName: vol.storageClass,
          resources: { requests: { storage: k8s.Quantity.fromString(vol.size) } },
        },
      });
    }
  }
}

/** Pod volumes for claims (volume name = claim name). */
export function claimVolumes(volumes: readonly VolumeSpec[]): k8s.Volume[] {
  return volumes.map((v) => ({ name: v.name, persistentVolumeClaim: { claimName: v.name } }));
}

/** Mounts of claims at their table paths (or under a prefix, as init-volumes does). */
export function claimMounts(volumes: readonly VolumeSpec[], prefix = ''): k8s.VolumeMount[] {
  return volumes.map((v) => ({ name: v.name, mountPath: `${prefix}${v.mountPath}` }));
}
