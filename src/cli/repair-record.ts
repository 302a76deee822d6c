import type { Command } from 'commander';
import { EXIT } from '../plan/exit-codes';
import type { RepairRecordCommandOptions } from '../runtime/verbs/commands';
import { addConnectionOptions, exitWith, processIo } from './options';
import { loadRuntime } from './runtime';

export function register(program: Command): void {
  addConnectionOptions(program.command('repair-record')
    .argument('<planDir>', 'the plan whose records to repair, e.g. dist/migrate (its flow and its identity)')
    .description('Rebuild a damaged or half-lost record of a flow or of the server\'s identity from its intact copy or from the cluster, shown and asked first')
    .option('-y, --yes', 'write without asking (after showing what it writes)'))
    .addHelpText('after', `
The records that keep a finished migration's or upgrade's data steps from running twice and the
server's identity from changing unasked live in ConfigMap uyuni-cdk-history and, as a copy, in
the annotation uyuni-cdk.io/records of the namespace. A record that exists but cannot be read
(not JSON, a wrong checksum, incomplete) refuses every run it protects. repair-record shows, for
each record the plan depends on, what it writes and from what: the intact copy, else the
cluster's evidence (the server Deployment and its image, ConfigMap uyuni-config, Secret uyuni-ca),
else it sets the damaged value aside. A damaged value is kept as damaged.<key> in the ConfigMap.

Exit codes:
  ${EXIT.ok}  repaired, or nothing to repair
  ${EXIT.stepFailed}  not approved on the terminal: nothing written
  ${EXIT.badInput}  no terminal to ask on and no --yes: nothing written; bad input
  ${EXIT.unreachable}  the cluster is unreachable

Examples:
  uyuni-cdk repair-record dist/migrate          # shows, then asks
  uyuni-cdk repair-record dist/install --yes`)
    .action((planDir: string, opts: RepairRecordCommandOptions) => exitWith(loadRuntime().then((m) => m.repairRecordCommand(planDir, opts, processIo))));
}
