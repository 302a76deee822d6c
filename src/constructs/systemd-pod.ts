import { k8s } from 'cdk8s-plus-28';
import { Construct } from 'constructs';
import { commonLabels, PartOf } from '../model/labels';
import { PodLike, PodRenderError, RenderedUnit, renderPodUnits, SYSTEMD_NODE } from '../systemd';

/** The taint systemd-backed nodes register with, and the node label their pods select (defined in src/systemd/defaults.ts, which the agent reads too). */
export { SYSTEMD_NODE };

/** A container of a pod on a systemd-backed node: a process started from a package, not an image. */
export interface SystemdPodContainer {
  /** DNS-1123 label; part of the unit name. */
  readonly name: string;
  /** `<name>:<tag>`: names the package directory `<packageDir>/<name>-<tag>/`. */
  readonly image: string;
  /** The executable (relative: under the package directory) and its first arguments. */
  readonly command: readonly string[];
  /** @default none */
  readonly args?: readonly string[];
  /** @default none */
  readonly env?: ReadonlyArray<{ readonly name: string; readonly value: string }>;
}

export interface SystemdPodProps {
  readonly name: string;
  /** @default default */
  readonly namespace?: string;
  /** The node whose agent runs it (`spec.nodeName`). */
  readonly nodeName: string;
  /** @default Always */
  readonly restartPolicy?: 'Always' | 'OnFailure' | 'Never';
  /** Becomes TimeoutStopSec. @default not set (the API's default, 30) */
  readonly terminationGracePeriodSeconds?: number;
  /** Run once, in order, before the containers (oneshot units). @default none */
  readonly initContainers?: readonly SystemdPodContainer[];
  readonly containers: readonly SystemdPodContainer[];
  /** Where the node's agent finds packages. @default /opt/stackable/packages */
  readonly packageDir?: string;
  /** The kubeconfig path of the node's agent, written into the units as KUBECONFIG. */
  readonly kubeconfig: string;
  /** @default uyuni-node-services */
  readonly partOf?: PartOf;
}

/**
 * A pod that runs on a systemd-backed node (L2): emits the Pod, tolerating the node taint and
 * selecting such nodes, and records the unit files the node's agent makes for it, rendered by
 * the agent's own renderer from the very pod object emitted here.
 */
export class SystemdPod extends Construct {
  public readonly name: string;
  public readonly namespace: string;
  /** The unit files the agent renders for this pod (system manager), init containers first. */
  public readonly units: readonly RenderedUnit[];

  constructor(scope: Construct, id: string, props: SystemdPodProps) {
    super(scope, id);
    this.name = props.name;
    this.namespace = props.namespace ?? 'default';
    if (props.containers.length === 0) throw new Error(`SystemdPod ${this.namespace}/${this.name}: containers must list at least one container`);

    const container = (c: SystemdPodContainer): k8s.Container => ({
      name: c.name,
      image: c.image,
      command: [...c.command],
      ...(c.args?.length ? { args: [...c.args] } : {}),
      ...(c.env?.length ? { env: c.env.map((e) => ({ name: e.name, value: e.value })) } : {}),
    });
    const spec: k8s.PodSpec = {
      nodeName: props.nodeName,
      nodeSelector: { [SYSTEMD_NODE.key]: SYSTEMD_NODE.value },
      tolerations: [{ key: SYSTEMD_NODE.key, operator: 'Equal', value: SYSTEMD_NODE.value }],
      ...(props.restartPolicy ? { restartPolicy: props.restartPolicy } : {}),
      ...(props.terminationGracePeriodSeconds !== undefined ? { terminationGracePeriodSeconds: props.terminationGracePeriodSeconds } : {}),
      ...(props.initContainers?.length ? { initContainers: props.initContainers.map(container) } : {}),
      containers: props.containers.map(container),
    };
    const metadata = { name: this.name, namespace: this.namespace, labels: commonLabels(props.partOf ?? 'uyuni-node-services', 'node-service') };

    try {
      this.units = renderPodUnits({ metadata, spec } as PodLike, { packageDir: props.packageDir, kubeconfig: props.kubeconfig });
    } catch (e) {
      if (e instanceof PodRenderError) throw new Error(`SystemdPod ${this.namespace}/${this.name}: ${e.message}`);
      throw e;
    }
    new k8s.KubePod(this, 'Resource', { metadata, spec });
  }
}
