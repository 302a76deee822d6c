import { k8s } from 'cdk8s-plus-28';
import { Construct } from 'constructs';
import { commonLabels, PartOf } from '../model/labels';
import type { VolumeSpec } from '../model/volumes';

/** One claim as it is written. */
export interface ClaimProps {
  /** The claim's name. */
  readonly name: string;
  /** The requested size (a Kubernetes quantity). */
  readonly size: string;
  /** storageClassName; `""` turns dynamic provisioning off. @default the cluster's default class */
  readonly storageClass?: string;
  /** Labels beside ours. @default none */
  readonly labels?: Readonly<Record<string, string>>;
  /** @default none */
  readonly annotations?: Readonly<Record<string, string>>;
  /** Bind to this PersistentVolume. @default none */
  readonly volumeName?: string;
  /** A label selector for the PersistentVolume. @default none */
  readonly selector?: k8s.LabelSelector;
}

export interface ClaimsProps {
  readonly namespace: string;
  readonly claims: readonly ClaimProps[];
  /** @default 'uyuni' */
  readonly partOf?: PartOf;
}

/**
 * PersistentVolumeClaims (ReadWriteOnce, as the chart's), with every configured setting really
 * written. Every step Job and Deployment reuses them by name.
 */
export class Claims extends Construct {
  public readonly claims: readonly ClaimProps[];

  constructor(scope: Construct, id: string, props: ClaimsProps) {
    super(scope, id);
    this.claims = props.claims;
    for (const c of props.claims) {
      new k8s.KubePersistentVolumeClaim(this, c.name, {
        metadata: {
          name: c.name,
          namespace: props.namespace,
          labels: { ...c.labels, ...commonLabels(props.partOf ?? 'uyuni', 'storage') },
          ...(c.annotations ? { annotations: { ...c.annotations } } : {}),
        },
        spec: {
          accessModes: ['ReadWriteOnce'],
          storageClassName: c.storageClass,
          volumeName: c.volumeName,
          selector: c.selector,
          resources: { requests: { storage: k8s.Quantity.fromString(c.size) } },
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
