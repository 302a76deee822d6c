// The reference example of the node-agent spec (§2) and the #312 test script: the pod
// default/cleanup-test-ok and the unit the Stackable agent writes for it in system mode.
import type { PodLike } from '../../src/systemd';

export const REFERENCE_POD: PodLike = {
  metadata: { name: 'cleanup-test-ok' },
  spec: { containers: [{ name: 'noop-service', image: 'noop-service:1.0.0', command: ['noop-service-1.0.0/start.sh'] }], nodeName: 'localhost' },
};

/** The unit text, as the spec prints it (no trailing newline, as the script's `echo -n`). */
export const REFERENCE_UNIT = [
  '[Unit]', 'Description=default-cleanup-test-ok-noop-service', 'StartLimitIntervalSec=0', '',
  '[Service]', 'Environment="KUBECONFIG=/root/.kube/config"',
  'ExecStart=/opt/stackable/packages/noop-service-1.0.0/noop-service-1.0.0/start.sh',
  'RemainAfterExit=no', 'Restart=always', 'RestartSec=2', 'Slice=system-stackable.slice',
  'StandardError=journal', 'StandardOutput=journal', 'TimeoutStopSec=30', '',
  '[Install]', 'WantedBy=multi-user.target',
].join('\n');
