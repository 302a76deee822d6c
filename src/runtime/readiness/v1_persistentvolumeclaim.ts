import type { V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { rule, StorageClassLike } from './rule';
import { done, failed, Verdict, waiting } from './verdict';

/**
 * PVC: done when Bound. A claim whose StorageClass binds on first consumer stays Pending until a
 * pod that mounts it is scheduled, usually in a later step, so it counts as done here: waiting for
 * it would deadlock the run (argo-cd#12840).
 */
export function boundVerdict(pvc: V1PersistentVolumeClaim | undefined, storageClass: StorageClassLike | undefined): Verdict {
  if (!pvc) return waiting('PersistentVolumeClaim not found');
  const phase = pvc.status?.phase ?? 'Pending';
  if (phase === 'Bound') return done('Bound');
  if (phase === 'Lost') return failed('claim Lost its volume');
  if (storageClass?.volumeBindingMode === 'WaitForFirstConsumer') {
    return done(`Pending, binds on first consumer (StorageClass ${storageClass.metadata?.name})`);
  }
  return waiting(`${phase}${storageClass ? '' : ' (no StorageClass found)'}`);
}

/** The StorageClass a claim uses: named, or the cluster default when it names none. */
export function storageClassOf<C extends StorageClassLike>(pvc: V1PersistentVolumeClaim | undefined, classes: readonly C[]): C | undefined {
  const name = pvc?.spec?.storageClassName;
  if (name) return classes.find((c) => c.metadata?.name === name);
  if (name === '') return undefined;
  return classes.find((c) => c.metadata?.annotations?.['storageclass.kubernetes.io/is-default-class'] === 'true');
}

export const boundRule = rule('bound', (pvc: V1PersistentVolumeClaim | undefined, o) => boundVerdict(pvc, o.storageClass));
