/**
 * The agent's own unit (`dist/agent/uyuni-cdk-agent.service`), from the same unit model and
 * escaping as the pods' units.
 *
 * Design: a long-running `agent run` (`Type=notify`), ordered `Before=` the pods' slice. It reports
 * READY (sd_notify, through systemd-notify: hence `NotifyAccess=all`) only after the start-up
 * cleanup, and units in a slice are ordered after it, so an orphaned unit is removed before it
 * starts and binds its ports; a kept unit starts right after. When the API cannot be read at
 * start-up the agent fails closed (exit 3): ordering needs only the start job to end, so the pods'
 * units still start, and Restart=always tries again. Stopping the agent leaves the pods' units
 * running (they are in their own slice, not the agent's cgroup). The node name is the host name
 * (`%H`), as nodes register. NODE_OPTIONS holds the agent's V8 heap setting (AGENT_NODE_OPTIONS),
 * which the npm command and the single executable both read.
 */
import { environmentAssignment, execLine, execWord } from './escape';
import { AGENT_NODE_OPTIONS, DEFAULT_AGENT_EXECUTABLE, DEFAULT_PACKAGE_DIR, DEFAULT_SLICE } from './defaults';
import { renderUnitFile } from './unit';

export const AGENT_UNIT_NAME = 'uyuni-cdk-agent.service';

export interface AgentUnitOptions {
  /** The `uyuni-cdk` executable on the node. @default DEFAULT_AGENT_EXECUTABLE (/usr/local/bin/uyuni-cdk) */
  readonly executable?: string;
  /** @default /opt/stackable/packages */
  readonly packageDir?: string;
  /** The kubeconfig the agent reads and writes into units. */
  readonly kubeconfig: string;
  /** @default system-stackable.slice */
  readonly slice?: string;
}

export function renderAgentUnit(options: AgentUnitOptions): string {
  const slice = options.slice ?? DEFAULT_SLICE;
  // `%H` is the one specifier meant for systemd (the host name); every other word is escaped.
  const exec = [
    execLine([options.executable ?? DEFAULT_AGENT_EXECUTABLE, 'agent', 'run', '--node']),
    '%H',
    ...['--package-dir', options.packageDir ?? DEFAULT_PACKAGE_DIR, '--slice', slice, '--kubeconfig', options.kubeconfig].map((w) => execWord(w)),
  ].join(' ');
  return renderUnitFile({
    name: AGENT_UNIT_NAME,
    directives: {
      Unit: [
        ['Description', 'uyuni-cdk node agent: runs the pods bound to this node as systemd units'],
        ['Wants', 'network-online.target'],
        ['After', 'network-online.target'],
        ['Before', slice],
        ['StartLimitIntervalSec', '0'],
      ],
      Service: [
        ['Type', 'notify'],
        ['NotifyAccess', 'all'],
        ['Environment', environmentAssignment('KUBECONFIG', options.kubeconfig)],
        // V8's young generation kept small: an idle agent's memory (defaults.ts AGENT_NODE_OPTIONS)
        ['Environment', environmentAssignment('NODE_OPTIONS', AGENT_NODE_OPTIONS)],
        ['ExecStart', exec],
        ['Restart', 'always'],
        ['RestartSec', '10'],
        // The cleanup before READY is bounded (API and stop-job timeouts); the pods' units wait for it.
        ['TimeoutStartSec', '300'],
        ['StandardOutput', 'journal'],
        ['StandardError', 'journal'],
      ],
      Install: [['WantedBy', 'multi-user.target']],
    },
  });
}
