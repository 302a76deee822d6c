/**
 * The node's presence in the API, as the kubelet keeps it: the Node object (registered when
 * missing, with the systemd-backed nodes' label and taint), its Ready condition and addresses,
 * and a `coordination.k8s.io/v1` Lease in `kube-node-lease` renewed every 10 s, the heartbeat the
 * node lifecycle controller reads.
 */
import * as os from 'os';
import { DEFAULT_MAX_PODS, LEASE_DURATION_SECONDS, SYSTEMD_NODE, SYSTEMD_NODE_TAINT_EFFECTS } from '../systemd/defaults';
import { ApiClient, ApiError } from './api';

export const LEASE_NAMESPACE = 'kube-node-lease';

/** The agent's name in nodeInfo.kubeletVersion (the API requires a value there). */
const AGENT_VERSION = 'uyuni-cdk-agent';

const MERGE = 'application/merge-patch+json';

/** A Lease's renewTime: RFC 3339 with microseconds (MicroTime). */
function microTime(d: Date): string {
  return d.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

const seconds = (d: Date): string => d.toISOString().replace(/\.\d{3}Z$/, 'Z');

/** The node's address: the first non-internal IPv4 address, else the first IPv6, else loopback. */
export function defaultNodeIP(): string {
  const all = Object.values(os.networkInterfaces()).flat().filter((a): a is os.NetworkInterfaceInfo => Boolean(a) && !a!.internal);
  return all.find((a) => a.family === 'IPv4')?.address ?? all[0]?.address ?? '127.0.0.1';
}

/** What the node offers, as the kubelet reports it: its CPUs, its memory (Ki) and `--max-pods`. */
export function nodeResources(maxPods: number): Record<'cpu' | 'memory' | 'pods', string> {
  return { cpu: String(Math.max(1, os.cpus().length)), memory: `${Math.floor(os.totalmem() / 1024)}Ki`, pods: String(maxPods) };
}

export class NodePresence {
  private nodeUid?: string;
  private readyTransition?: string;

  constructor(private readonly api: ApiClient, private readonly node: string, private readonly nodeIP: string, private readonly maxPods = DEFAULT_MAX_PODS) {}

  /** Registers the Node when it does not exist; returns whether it was created. */
  async register(): Promise<boolean> {
    const path = `api/v1/nodes/${encodeURIComponent(this.node)}`;
    try {
      const existing = await this.api.request<{ metadata: { uid: string } }>('GET', path);
      this.nodeUid = existing.metadata.uid;
      return false;
    } catch (e) {
      if (!(e instanceof ApiError && e.status === 404)) throw e;
    }
    const created = await this.api.request<{ metadata: { uid: string } }>('POST', 'api/v1/nodes', {
      body: {
        apiVersion: 'v1',
        kind: 'Node',
        metadata: {
          name: this.node,
          labels: { [SYSTEMD_NODE.key]: SYSTEMD_NODE.value, 'kubernetes.io/hostname': this.node, 'kubernetes.io/os': 'linux' },
        },
        spec: { taints: SYSTEMD_NODE_TAINT_EFFECTS.map((effect) => ({ key: SYSTEMD_NODE.key, value: SYSTEMD_NODE.value, effect })) },
      },
    });
    this.nodeUid = created.metadata.uid;
    return true;
  }

  /**
   * Posts the Ready condition, capacity, addresses and node info (the kubelet's status update).
   * kube-scheduler places a pod only on a node whose `allocatable.pods` has room: without it, a
   * pod that selects and tolerates systemd-backed nodes but names none stays Pending, "0/2 nodes
   * are available: 1 Too many pods" (seen against kube-apiserver and kube-scheduler v1.34).
   */
  async postStatus(now = new Date()): Promise<void> {
    this.readyTransition ??= seconds(now);
    const resources = nodeResources(this.maxPods);
    await this.api.request('PATCH', `api/v1/nodes/${encodeURIComponent(this.node)}/status`, {
      contentType: MERGE,
      body: {
        status: {
          conditions: [{
            type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'uyuni-cdk agent is posting ready status',
            lastHeartbeatTime: seconds(now), lastTransitionTime: this.readyTransition,
          }],
          capacity: resources,
          allocatable: resources,
          addresses: [{ type: 'InternalIP', address: this.nodeIP }, { type: 'Hostname', address: this.node }],
          nodeInfo: {
            kubeletVersion: AGENT_VERSION, kubeProxyVersion: '', operatingSystem: 'linux', architecture: os.arch(),
            osImage: '', kernelVersion: os.release(), containerRuntimeVersion: 'systemd', machineID: '', systemUUID: '', bootID: '',
          },
        },
      },
    });
  }

  /** Creates or renews the node's Lease. */
  async renewLease(now = new Date()): Promise<void> {
    const path = `apis/coordination.k8s.io/v1/namespaces/${LEASE_NAMESPACE}/leases/${encodeURIComponent(this.node)}`;
    try {
      await this.api.request('PATCH', path, { contentType: MERGE, body: { spec: { holderIdentity: this.node, leaseDurationSeconds: LEASE_DURATION_SECONDS, renewTime: microTime(now) } } });
      return;
    } catch (e) {
      if (!(e instanceof ApiError && e.status === 404)) throw e;
    }
    await this.api.request('POST', `apis/coordination.k8s.io/v1/namespaces/${LEASE_NAMESPACE}/leases`, {
      body: {
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: {
          name: this.node,
          namespace: LEASE_NAMESPACE,
          // As the kubelet: the Lease goes with its Node.
          ...(this.nodeUid ? { ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: this.node, uid: this.nodeUid }] } : {}),
        },
        spec: { holderIdentity: this.node, leaseDurationSeconds: LEASE_DURATION_SECONDS, renewTime: microTime(now) },
      },
    });
  }
}
