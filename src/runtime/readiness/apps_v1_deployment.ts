import type { V1Deployment, V1Pod, V1ReplicaSet } from '@kubernetes/client-node';
import { rule } from './rule';
import { selectorMatches } from './selector';
import { comingUp, describePod, podProgress, podReady } from './v1_pod';
import { condition, done, failed, Verdict, waiting } from './verdict';

const REVISION = 'deployment.kubernetes.io/revision';

/**
 * Deployment rollout: status is only trusted once `observedGeneration >= generation` (otherwise it
 * describes the previous spec); done when updated = ready = available = desired and no old
 * replicas remain; failed on Progressing=False ProgressDeadlineExceeded.
 *
 * Except while the newest pods are still coming up: the Deployment controller gives up after
 * `progressDeadlineSeconds` (600 by default) without a new ready pod, but a server whose first
 * start takes hours behind its startup probe is not failing, it is slow. So with the rollout's
 * pods known (`pods`), ProgressDeadlineExceeded fails only when pods are missing or some pod is
 * not Running with its containers running (waiting in a back-off, pulling, pending, exited).
 * The step's timeout still bounds the wait. Without the pods (undefined) the condition decides
 * alone, as `kubectl rollout status` does.
 */
export function rolloutVerdict(d: V1Deployment | undefined, pods?: readonly V1Pod[]): Verdict {
  if (!d) return waiting('Deployment not found');
  const s = d.status ?? {};
  const generation = d.metadata?.generation ?? 0;
  if ((s.observedGeneration ?? 0) < generation) {
    return waiting(`observedGeneration ${s.observedGeneration ?? 0} < generation ${generation}`);
  }
  const desired = d.spec?.replicas ?? 1;
  const updated = s.updatedReplicas ?? 0;
  const ready = s.readyReplicas ?? 0;
  const available = s.availableReplicas ?? 0;
  const total = s.replicas ?? 0;
  const counts = `${ready}/${desired} ready${updated !== desired || available !== ready ? ` (${updated} updated, ${available} available)` : ''}${total > desired ? ` (${total - desired} old terminating)` : ''}`;
  const progressing = condition(d, 'Progressing');
  if (progressing?.status === 'False' && progressing.reason === 'ProgressDeadlineExceeded') {
    // A ready pod is Running with every container ready: coming up too (its status may be newer
    // than the Deployment's). Fewer pods than desired is not slowness: the ReplicaSet cannot create them.
    if (pods && pods.length >= desired && pods.length > 0 && pods.every(comingUp)) {
      return waiting(`${counts}; past its progress deadline, but its pods are still coming up`);
    }
    const why = (pods ?? []).filter((p) => !podReady(p)).slice(0, 3).map((p) => describePod(podProgress(p)));
    return failed(`ProgressDeadlineExceeded${progressing.message ? `: ${progressing.message}` : ''}${why.length ? `; ${why.join('; ')}` : ''}`);
  }
  if (updated === desired && ready === desired && available === desired && total === desired) {
    return done(`${desired}/${desired} available`);
  }
  return waiting(counts);
}

/** After a `scale` action to 0: no replicas reported any more (a missing Deployment counts). */
export function scaledDownVerdict(d: V1Deployment | undefined): Verdict {
  if (!d) return done('not present');
  const s = d.status ?? {};
  if ((d.spec?.replicas ?? 1) !== 0) return waiting(`spec.replicas is ${d.spec?.replicas ?? 1}`);
  if ((s.observedGeneration ?? 0) < (d.metadata?.generation ?? 0)) return waiting('scale not observed yet');
  const left = s.replicas ?? 0;
  return left === 0 ? done('0 replicas') : waiting(`${left} replicas still running`);
}

const revisionOf = (o: { metadata?: { annotations?: Record<string, string> } }) => Number(o.metadata?.annotations?.[REVISION] ?? 0);

/**
 * The Deployment's newest ReplicaSet: one it controls, at the Deployment's revision (the
 * controller stamps both), else the highest revision it controls.
 */
export function newestReplicaSet(d: V1Deployment, sets: readonly V1ReplicaSet[]): V1ReplicaSet | undefined {
  const uid = d.metadata?.uid;
  const owned = sets.filter((rs) => (rs.metadata?.ownerReferences ?? []).some((r) => r.controller && r.uid === uid));
  const current = owned.find((rs) => revisionOf(rs) > 0 && revisionOf(rs) === revisionOf(d));
  return current ?? [...owned].sort((a, b) => revisionOf(b) - revisionOf(a))[0];
}

/**
 * The pods a rollout waits on: those of its newest ReplicaSet; while no ReplicaSet of it is
 * known, its live pods by selector. Old ReplicaSets' pods going away are not what it waits on.
 */
export function rolloutPods(d: V1Deployment, sets: readonly V1ReplicaSet[], pods: readonly V1Pod[]): V1Pod[] {
  const rs = newestReplicaSet(d, sets);
  if (rs) return pods.filter((p) => (p.metadata?.ownerReferences ?? []).some((r) => r.controller && r.uid === rs.metadata?.uid));
  return pods.filter((p) => !p.metadata?.deletionTimestamp && selectorMatches(d.spec?.selector, p.metadata?.labels));
}

export const rolloutRule = rule('rollout', (d: V1Deployment | undefined, o) => rolloutVerdict(d, o.pods));
export const scaledDownRule = rule('scaled-down', (d: V1Deployment | undefined) => scaledDownVerdict(d));
