import * as fs from 'fs';
import * as path from 'path';
import { ApiObjectMetadata } from 'cdk8s';
import { k8s } from 'cdk8s-plus-28';
import { Construct } from 'constructs';
import { commonLabels, PartOf } from '../model/labels';
import { hashSpec } from '../plan/spec-hash';
import { ANNOTATIONS } from '../plan/types';

/** The directory of the step scripts: plain shell files, unit-tested for what they contain. */
/** Labels a step Job's pods, so each step finds them afresh (pods are recreated between steps). */
export const JOB_LABEL = 'uyuni-cdk.io/job';

export const SCRIPTS_DIR = path.join(__dirname, '..', 'scripts');

/**
 * A script's include of a shared piece (`. "$(dirname "$0")/lib/kube-api.sh"`, with the
 * shellcheck directive above it): a Job runs `sh -c <text>`, where there is no file beside it.
 */
const INCLUDE = /^# shellcheck source-path=SCRIPTDIR source=lib\/([a-z0-9-]+\.sh)\n\. "\$\(dirname "\$0"\)\/lib\/\1"\n/gm;

/** Reads a step script by file name (`data-sync.sh`), with its includes from src/scripts/lib/ inlined. */
export function readScript(name: string): string {
  return fs.readFileSync(path.join(SCRIPTS_DIR, name), 'utf8')
    .replace(INCLUDE, (_line, lib: string) => fs.readFileSync(path.join(SCRIPTS_DIR, 'lib', lib), 'utf8').replace(/^# shellcheck shell=sh\n/, ''));
}

export interface ScriptJobProps {
  /** The Job's name: deterministic (no timestamps), so a re-run finds it. */
  readonly name: string;
  readonly namespace: string;
  /** @default 'uyuni' */
  readonly partOf?: PartOf;
  readonly image: string;
  readonly imagePullPolicy: string;
  /** @default no pull secret */
  readonly imagePullSecrets?: k8s.LocalObjectReference[];
  /** The script file under src/scripts/, run as `<interpreter> -c <script>`. */
  readonly script: string;
  /** What runs the script: `sh`, or `python3` for a Python script. @default 'sh' */
  readonly interpreter?: 'sh' | 'python3';
  /**
   * Values reach the script as environment variables, never pasted into its text, so no
   * configuration value can inject shell code. @default none
   */
  readonly env?: readonly k8s.EnvVar[];
  /** Volumes of the pod (PVCs, Secrets, ConfigMaps). @default none */
  readonly volumes?: readonly k8s.Volume[];
  /** Mounts of the `runner` container. @default none */
  readonly volumeMounts?: readonly k8s.VolumeMount[];
  /** Containers that run before `runner` (e.g. waiting for the database). @default none */
  readonly initContainers?: readonly k8s.Container[];
  /** @default the image's default (root for Uyuni images) */
  readonly securityContext?: k8s.SecurityContext;
  /** @default none */
  readonly podSecurityContext?: k8s.PodSecurityContext;
  /** The pod's service account (a Job that talks to the API). @default the namespace's default, without its token */
  readonly serviceAccountName?: string;
}

/**
 * A step Job (L2): one container `runner` running `sh -c <script>` (or `python3 -c`), never retried
 * (`backoffLimit: 0`, `restartPolicy: Never`) and kept after it finishes (no
 * `ttlSecondsAfterFinished`) so its logs stay readable. The spec-hash annotation lets the
 * runtime tell an unchanged step (skip) from a changed one (refuse unless --rerun).
 */
export class ScriptJob extends Construct {
  public readonly name: string;
  public readonly specHash: string;
  public readonly job: k8s.KubeJob;

  constructor(scope: Construct, id: string, props: ScriptJobProps) {
    super(scope, id);
    this.name = props.name;
    const labels = { ...commonLabels(props.partOf ?? 'uyuni', 'step'), [JOB_LABEL]: props.name };
    const spec: k8s.JobSpec = {
      backoffLimit: 0,
      template: {
        metadata: { labels },
        spec: {
          restartPolicy: 'Never',
          // A step Job that does not talk to the API gets no token to talk with.
          ...(props.serviceAccountName ? { serviceAccountName: props.serviceAccountName } : { automountServiceAccountToken: false }),
          imagePullSecrets: props.imagePullSecrets,
          securityContext: props.podSecurityContext,
          initContainers: props.initContainers ? [...props.initContainers] : undefined,
          containers: [{
            name: 'runner',
            image: props.image,
            imagePullPolicy: props.imagePullPolicy,
            command: [props.interpreter ?? 'sh', '-c', readScript(props.script)],
            env: props.env ? [...props.env] : undefined,
            volumeMounts: props.volumeMounts ? [...props.volumeMounts] : undefined,
            securityContext: props.securityContext,
          }],
          volumes: props.volumes ? [...props.volumes] : undefined,
        },
      },
    };
    const metadata: ApiObjectMetadata = { name: props.name, namespace: props.namespace, labels };
    this.job = new k8s.KubeJob(this, 'Resource', { metadata, spec });
    // The hash of the spec as written (quantities and int-or-strings resolved), not of the props.
    this.specHash = hashSpec(this.job.toJson().spec);
    this.job.metadata.addAnnotation(ANNOTATIONS.specHash, this.specHash);
  }

  /** The reference the plan index uses for this Job. */
  get ref() {
    return { apiVersion: 'batch/v1', kind: 'Job', name: this.name, namespace: this.job.metadata.namespace! } as const;
  }
}

/** sha256 of a spec's canonical JSON (keys sorted, undefined dropped): the one format, src/plan/spec-hash.ts. */
export { hashSpec };
