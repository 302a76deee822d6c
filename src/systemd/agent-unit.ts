/**
 * The agent's own unit (`dist/agent/uyuni-cdk-agent.service`), from the same unit model and
 * escaping as the pods' units.
 *
 * Design: a oneshot that runs the start-up cleanup once per boot, ordered `Before=` the pods'
 * slice. Units in a slice are ordered after it, so an orphaned unit is removed before it starts
 * and binds its ports; a kept unit starts right after. When the API cannot be read the agent fails
 * closed (exit 3): ordering needs only completion, so the pods' units still start, and
 * Restart=on-failure retries the cleanup. The node name is the host name (`%H`), as nodes register.
 */
import { environmentAssignment, execLine, execWord } from './escape';
import { DEFAULT_PACKAGE_DIR, DEFAULT_SLICE } from './defaults';
import { renderUnitFile } from './unit';

export const AGENT_UNIT_NAME = 'uyuni-cdk-agent.service';

export interface AgentUnitOptions {
  /** The `uyuni-cdk` executable on the node. @default /usr/local/bin/uyuni-cdk (npm install -g) */
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
    execLine([options.executable ?? '/usr/local/bin/uyuni-cdk', 'agent', 'cleanup', '--node']),
    '%H',
    ...['--package-dir', options.packageDir ?? DEFAULT_PACKAGE_DIR, '--slice', slice, '--kubeconfig', options.kubeconfig].map((w) => execWord(w)),
  ].join(' ');
  return renderUnitFile({
    name: AGENT_UNIT_NAME,
    directives: {
      Unit: [
        ['Description', 'uyuni-cdk node agent: removes the units of the pods\' slice that no pod of this node accounts for'],
        ['Wants', 'network-online.target'],
        ['After', 'network-online.target'],
        ['Before', slice],
        ['StartLimitIntervalSec', '0'],
      ],
      Service: [
        ['Type', 'oneshot'],
        ['Environment', environmentAssignment('KUBECONFIG', options.kubeconfig)],
        ['ExecStart', exec],
        ['Restart', 'on-failure'],
        ['RestartSec', '30'],
        ['StandardOutput', 'journal'],
        ['StandardError', 'journal'],
      ],
      Install: [['WantedBy', 'multi-user.target']],
    },
  });
}
