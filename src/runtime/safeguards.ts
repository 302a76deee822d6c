/**
 * What `run` checks before its first write, under the lock (src/runtime/lock.ts): nothing of
 * another owner is taken over unless `--adopt` (src/runtime/ownership.ts), and no credential is
 * generated beside data made with a lost one (src/runtime/secrets.ts `lostCredentials`). A
 * refusal releases the lock and writes nothing.
 */
import type { Plan } from '../plan/types';
import { Cluster, refString } from './client';
import { StepFailed } from './errors';
import { RunLock } from './lock';
import type { Manifest } from './manifests';
import { markAdopted, refusalMessage, refuses, takeovers } from './ownership';
import type { Reporter } from './progress';
import { lostCredentials } from './secrets';

export interface SafeguardOptions {
  /** `--adopt`: take over the objects of other owners (never another plan's namespace). */
  readonly adopt?: boolean;
  /** `--lock-timeout`, seconds. @default 0 */
  readonly lockTimeoutSeconds?: number;
}

/** Takes the lock (or defers it to the namespace step), then refuses or adopts; returns the lock to release at the end. */
export async function guardRun(
  cluster: Cluster, plan: Plan, objectsOf: (step: string) => readonly Manifest[], runId: string, reporter: Reporter, o: SafeguardOptions,
): Promise<RunLock> {
  const lock = new RunLock(cluster, {
    namespace: plan.namespace, runId, plan, verb: 'run', timeoutSeconds: o.lockTimeoutSeconds,
    onEvent: (action, result) => reporter.emit({ type: 'action', step: '(run)', action, object: refString(lock.ref), result }),
  });
  // false: the namespace does not exist yet, so nothing in it can be taken over or be data
  const namespaceExists = await lock.acquire();
  try {
    const foreign = await takeovers(cluster, plan, objectsOf, namespaceExists);
    if (foreign.some((f) => refuses(f, Boolean(o.adopt)))) throw new StepFailed('(run)', refusalMessage(foreign, Boolean(o.adopt)));
    const lost = namespaceExists ? await lostCredentials(cluster, plan) : [];
    if (lost.length) throw new StepFailed('(run)', lost.map((l) => l.message).join('; '));
    await markAdopted(cluster, foreign, (f) => reporter.emit({ type: 'action', step: '(run)', action: 'adopt', object: f.object, result: `taken over from ${f.owner}` }));
  } catch (e) {
    await lock.release();
    throw e;
  }
  return lock;
}
