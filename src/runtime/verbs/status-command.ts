/**
 * `status`'s entry point, apart from the other verbs' (src/runtime/verbs/commands.ts): what it loads is
 * the plan's index, the connection and the reads (src/runtime/verbs/status.ts), none of the modules of
 * `run`, `plan` or `destroy` (issue 36: status start-up, measured with the installed command).
 */
import { readArchiveStatus } from './archive-status';
import type { ArchiveStatus } from '../core/status-result';
import { openPlanView } from '../core/plan-dir';
import { statusExitCode, stepStatuses } from './status';
import { statusView } from '../report/status-view';
import { targetOf } from '../core/target';
import { CommonOptions, connect, guarded, Io, viewOptions } from './verb';

export function statusCommand(planDir: string, o: CommonOptions, io: Io): Promise<number> {
  return guarded(io, async () => {
    const view = statusView(viewOptions(o, io));
    // The index's summaries of the step files synth wrote, not their parse (src/runtime/plan-dir.ts).
    const { plan, viewOf } = openPlanView(planDir, o.namespace);
    const cluster = connect(o, io);
    // The reads go with the ping (one round trip less, issue 36); an unreachable cluster is
    // still reported by the ping's error, the reads' own errors only once it answered.
    const reading = stepStatuses(cluster, plan, viewOf);
    reading.catch(() => undefined);
    // db.archiving: the db pod's last report (archive-status.ts); a failed read is shown, not fatal.
    const archive = readArchiveStatus(cluster, plan, viewOf).catch((e: Error): ArchiveStatus => ({ error: `the db pods cannot be read: ${e.message}` }));
    await cluster.ping();
    const steps = await reading;
    const archiving = await archive;
    view.status(plan, steps, targetOf(cluster), archiving);
    return statusExitCode(steps);
  });
}
