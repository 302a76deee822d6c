import { Command, Option } from 'commander';
import { EXIT } from '../plan/exit-codes';
import type { PlanCommandOptions } from '../runtime/verbs/commands';
import { addClusterOptions, addIdentityOptions, collectList, exitWith, INPUT_AND_CLUSTER, processIo } from './options';
import { loadRuntime } from './runtime';

/** What `plan` exits with: it shows a run that would stop, it does not stop (Terraform's plan). */
const PLAN_EXIT_CODES_HELP = `
Exit codes:
  ${EXIT.ok}  shown, also when run would stop or refuse (the plan says where and why)
  ${EXIT.stepFailed}  an unexpected error
${INPUT_AND_CLUSTER}
With --detailed-exitcode (as Terraform's): ${EXIT.ok} no changes, ${EXIT.planChanges} changes, ${EXIT.stepFailed} any error, including a run
that would stop (a refused Job, a missing requirement or kind, a gate that would refuse) and a
mistyped option: ${EXIT.planChanges} means changes only. Objects to relabel (only our bookkeeping labels
and annotations differ, as after a migration the install plan's) are not changes unless
--bookkeeping-drift.`;

export function register(program: Command): void {
  addIdentityOptions(addClusterOptions(program.command('plan')
    .argument('<planDir>', 'a synthesized plan directory, e.g. dist/install')
    .description('Show what `run` would do, changing nothing: per step its requirements, gates, objects and the action each gets (create, unchanged, update with its field diff, recreate, skip-complete, blocked-immutable, ...), the objects pruning would delete, and a summary line')
    .option('--rerun <step>', 'predict `run --rerun <step>`; repeatable or comma-separated', collectList)
    .option('--no-prune', 'predict `run --no-prune`: objects the plan dropped are kept')
    .option('--purge-volumes', 'predict `run --purge-volumes`: claims this plan made and dropped are deleted too')
    .option('--out <file>', 'also save this plan to FILE, with its flags (--rerun, --no-prune, --purge-volumes, --adopt, --allow-…): `uyuni-cdk run FILE` applies exactly it (as Terraform\'s -out), refusing if the cluster or the plan directory changed since')
    .option('--adopt', 'predict `run --adopt`: objects of other owners are listed as adopted, not refused')
    .option('-v, --verbose', 'also list each unchanged object and what each step waits for (default: counts)')
    .option('--detailed-exitcode', `exit ${EXIT.ok} without changes, ${EXIT.planChanges} with changes, ${EXIT.stepFailed} on any error (for CI drift checks, as Terraform's)`)
    .option('--bookkeeping-drift', `with --detailed-exitcode: objects to relabel (only our bookkeeping labels change) count as changes (exit ${EXIT.planChanges}); by default they do not`)
    .addOption(new Option('--exit-code', 'the same as --detailed-exitcode').hideHelp()),
  'text (as shown below), json (one JSON document: each step with its objects and actions, prune, takeovers, lost credentials) or yaml (the same document)'), 'plan')
    .addHelpText('after', `
An update shows the unified YAML diff between the object in the cluster and a server-side apply
dry run (status, managedFields, resourceVersion, uid, generation, timestamps and the run label
left out; Secret values never shown; our bookkeeping labels and annotations counted, not shown:
"(+ 4 bookkeeping labels)"). Unchanged objects and a step's waits are counted (-v lists them).
Every step action is shown with what it would do
(stop: a scale to 0 of a running workload; delete; "not done" when its effect holds already),
a one-shot data step with its flow's record, and what run would refuse before any write (a
finished flow's data step, a change of the server's recorded identity). The last line counts
as Terraform does (credentials to generate are creates, actions updates/deletes/stops), and
objects whose apply changes only our bookkeeping labels apart ("to relabel", counted per step):
  Plan: 1 to create, 2 to update, 2 to delete, 2 to stop, 40 unchanged.
  Plan: 0 to create, 0 to update, 0 to delete, 0 to stop, 45 to relabel (bookkeeping labels only), 0 unchanged.
${PLAN_EXIT_CODES_HELP}

Examples:
  uyuni-cdk plan dist/install
  uyuni-cdk plan dist/install --detailed-exitcode   # CI drift check: 0 none, 2 changes, 1 an error
  uyuni-cdk plan dist/upgrade --output json
  uyuni-cdk plan dist/upgrade --out upgrade.plan && uyuni-cdk run upgrade.plan   # exactly what was reviewed`)
    .action((planDir: string, opts: PlanCommandOptions & { exitCode?: boolean }) => {
      const o = { ...opts, detailedExitcode: Boolean(opts.detailedExitcode || opts.exitCode) };
      return exitWith(loadRuntime().then((m) => m.planCommand(planDir, o, processIo)));
    });
}
