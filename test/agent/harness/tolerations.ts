/**
 * The toleration of the agent's node taint (`kubernetes.io/arch=stackable-linux`, NoSchedule and
 * NoExecute), as dist/node-services's pods carry it: a pod bound to the agent's node without it is
 * deleted by the taint eviction controller, on kube-apiserver and in the simulator alike.
 */
import { SYSTEMD_NODE } from '../../../src/systemd/defaults';

export const TOLERATIONS = [{ key: SYSTEMD_NODE.key, operator: 'Equal', value: SYSTEMD_NODE.value }];
