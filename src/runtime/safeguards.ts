/**
 * What `run` checks before its first write, under the lock (src/runtime/lock.ts): nothing of
 * another owner is taken over unless `--adopt` (src/runtime/ownership.ts), and no credential is
 * generated beside data made with a lost one (src/runtime/secrets.ts `lostCredentials`). A
 * refusal releases the lock and writes nothing: what is taken over is marked only once the run
 * goes on (`adopt`, after the question: src/runtime/run.ts).
 */
import type { Plan } from '../plan/types';
import type { Cluster } from './client';
import { StepFailed } from './errors';
import { RunLock } from './lock';
import type { Manifest } from './manifests';
import { namespaceTerminating } from './namespace-state';
import { Foreign, markAdopted, refusalMessage, refuses, takeovers, upgrades } from './ownership';
import { objectId, Reporter } from './progress';
import { lostCredentials } from './secrets';

export interface SafeguardOptions {
  /** `--adopt`: take over the objects of other owners (never another plan's namespace). */
  readonly adopt?: boolean;
  /** `--lock-timeout`, seconds. @default 0 */
  readonly lockTimeoutSeconds?: number;
}

/** What guardRun leaves to `run`: the lock to release at the end, and what to take over once the run goes on. */
export interface Guarded {
  readonly lock: RunLock;
  /**
   * What the run takes over (marked `uyuni-cdk.io/adopted-from`) once it has decided to go on:
   * after the refusals and the question, never before (a refused run writes nothing).
   */
  readonly toAdopt: readonly Foreign[];
  /** Of `toAdopt`, an upgrade's take-overs of the install it upgrades (without `--adopt`): asked with the destructive changes. */
  readonly toAsk: readonly Foreign[];
}

/** Takes the lock (or defers it to the namespace step), then refuses; returns the lock and what to adopt (and ask about) later. */
export async function guardRun(
  cluster: Cluster, plan: Plan, objectsOf: (step: string) => readonly Manifest[], runId: string, reporter: Reporter, o: SafeguardOptions,
): Promise<Guarded> {
  const lock = new RunLock(cluster, {
    namespace: plan.namespace, runId, plan, verb: 'run', timeoutSeconds: o.lockTimeoutSeconds,
    onEvent: (action, result) => reporter.emit({ type: 'action', step: '(run)', action, object: objectId(lock.ref), result }),
  });
  // A namespace being deleted takes nothing new (the lock's Lease included): refused before any write.
  const terminating = await namespaceTerminating(cluster, plan.namespace);
  if (terminating) throw new StepFailed('(run)', `refused before any write: ${terminating}`);
  // false: the namespace does not exist yet, so nothing in it can be taken over or be data
  const namespaceExists = await lock.acquire();
  try {
    const foreign = await takeovers(cluster, plan, objectsOf, namespaceExists);
    const upgrade = upgrades(plan);
    if (foreign.some((f) => refuses(f, Boolean(o.adopt), upgrade))) throw new StepFailed('(run)', refusalMessage(foreign, Boolean(o.adopt), upgrade));
    const lost = namespaceExists ? await lostCredentials(cluster, plan) : [];
    if (lost.length) throw new StepFailed('(run)', lost.map((l) => l.message).join('; '));
    // --adopt and a namespace made by hand are consent already; an upgrade's take-overs are asked first
    return { lock, toAdopt: foreign, toAsk: foreign.filter((f) => !o.adopt && !f.byDesign) };
  } catch (e) {
    await lock.release();
    throw e;
  }
}

/** Marks each object adopted (`uyuni-cdk.io/adopted-from`), saying so. */
export function adopt(cluster: Cluster, items: readonly Foreign[], reporter: Reporter): Promise<void> {
  return markAdopted(cluster, items, (f) => reporter.emit({ type: 'action', step: '(run)', action: 'adopt', object: objectId(f.ref), result: `taken over from ${f.owner}` }));
}
