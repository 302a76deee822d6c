import { condition, done, failed, Verdict, waiting } from './verdict';

/**
 * Deployment rollout: status is only trusted once `observedGeneration >= generation` (otherwise it
 * describes the previous spec); done when updated = ready = available = desired and no old
 * replicas remain; failed on Progressing=False ProgressDeadlineExceeded.
 */
export function rolloutVerdict(d: any): Verdict {
  if (!d) return waiting('Deployment not found');
  const s = d.status ?? {};
  const generation = d.metadata?.generation ?? 0;
  if ((s.observedGeneration ?? 0) < generation) {
    return waiting(`observedGeneration ${s.observedGeneration ?? 0} < generation ${generation}`);
  }
  const progressing = condition(d, 'Progressing');
  if (progressing?.status === 'False' && progressing.reason === 'ProgressDeadlineExceeded') {
    return failed(`ProgressDeadlineExceeded${progressing.message ? `: ${progressing.message}` : ''}`);
  }
  const desired = d.spec?.replicas ?? 1;
  const updated = s.updatedReplicas ?? 0;
  const ready = s.readyReplicas ?? 0;
  const available = s.availableReplicas ?? 0;
  const total = s.replicas ?? 0;
  if (updated === desired && ready === desired && available === desired && total === desired) {
    return done(`${desired}/${desired} available`);
  }
  return waiting(`rollout: ${updated} updated, ${ready} ready, ${available} available of ${desired}${total > desired ? ` (${total - desired} old terminating)` : ''}`);
}

/** After a `scale` action to 0: no replicas reported any more (a missing Deployment counts). */
export function scaledDownVerdict(d: any): Verdict {
  if (!d) return done('not present');
  const s = d.status ?? {};
  if ((d.spec?.replicas ?? 1) !== 0) return waiting(`spec.replicas is ${d.spec?.replicas ?? 1}`);
  if ((s.observedGeneration ?? 0) < (d.metadata?.generation ?? 0)) return waiting('scale not observed yet');
  const left = s.replicas ?? 0;
  return left === 0 ? done('0 replicas') : waiting(`${left} replicas still running`);
}
