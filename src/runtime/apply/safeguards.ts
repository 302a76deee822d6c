/**
 * What `run` checks before its first write, under the lock (src/runtime/safety/lock.ts): nothing of
 * another owner is taken over unless `--adopt` or an upgrade's question (src/runtime/safety/ownership.ts),
 * and no credential is generated beside data made with a lost one (src/runtime/decide/requirements.ts
 * `lostCredentials`). Both are part of the plan's verdict (plan-result.ts), computed under the
 * lock by `planSteps`. A refusal releases the lock and writes nothing: what is taken over is
 * marked only once the run goes on (`adopt`, after the question: src/runtime/apply/run.ts).
 */
import type { ObjectRef, Plan } from '../../plan/types';
import type { Cluster } from '../../kube/cluster';
import { StepFailed } from '../core/errors';
import { RunLock } from '../safety/lock';
import { markAdopted, refusalMessage } from '../safety/ownership';
import type { PlanResult } from '../decide/plan-result';
import { EventSink, objectId } from '../core/events';

export interface SafeguardOptions {
  /** `--lock-timeout`, seconds. @default 0 */
  readonly lockTimeoutSeconds?: number;
}

/** What guardRun leaves to `run`: the lock to release at the end. */
export interface Guarded {
  readonly lock: RunLock;
  /** false: the namespace does not exist yet (the lock is deferred to its step), so nothing in it can be taken over or be data. */
  readonly namespaceExists: boolean;
}

/**
 * Refuses a namespace being deleted (`terminating`: why, as the caller read it with
 * `namespaceTerminating` beside its other reads), then takes the lock (or defers it to the namespace step).
 */
export async function guardRun(
  cluster: Cluster, plan: Plan, runId: string, reporter: EventSink, o: SafeguardOptions, terminating: Promise<string | undefined>,
): Promise<Guarded> {
  const lock = new RunLock(cluster, {
    namespace: plan.namespace, runId, plan, verb: 'run', timeoutSeconds: o.lockTimeoutSeconds,
    onEvent: (action, result) => reporter.emit({ type: 'action', step: '(run)', action, object: objectId(lock.ref), result }),
  });
  // A namespace being deleted takes nothing new (the lock's Lease included): refused before any write.
  const why = await terminating;
  if (why) throw new StepFailed('(run)', `refused before any write: ${why}`);
  return { lock, namespaceExists: await lock.acquire() };
}

/** Throws, nothing written, when the verdict takes over an object against its owner or generates over lost credentials. */
export function refuseTakeoversAndLost(r: PlanResult): void {
  if (r.takeovers.some((t) => t.action === 'refuse')) throw new StepFailed('(run)', refusalMessage(r.takeovers));
  if (r.lostCredentials.length) throw new StepFailed('(run)', r.lostCredentials.map((l) => l.message).join('; '));
}

/** Marks each object the verdict takes over (`uyuni-cdk.io/adopted-from`), saying so; `refs`: the plan's objects by name. */
export function adopt(cluster: Cluster, r: PlanResult, refs: ReadonlyMap<string, ObjectRef>, reporter: EventSink): Promise<void> {
  const items = r.takeovers.filter((t) => t.action === 'adopt').flatMap((t) => {
    const ref = refs.get(t.object);
    return ref ? [{ ref, owner: t.owner }] : [];
  });
  return markAdopted(cluster, items, (f) => reporter.emit({ type: 'action', step: '(run)', action: 'adopt', object: objectId(f.ref), result: `taken over from ${f.owner}` }));
}
