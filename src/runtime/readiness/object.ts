/** Rules for any kind: the object can be read back, or it is gone. */
import { terminatingMessage } from './v1_namespace';
import { rule } from './rule';
import { done, failed, waiting } from './verdict';

/** A Namespace being deleted never comes back: it fails the wait at once (src/runtime/readiness/v1_namespace.ts). */
export const existsRule = rule('exists', (obj) => {
  if (!obj) return waiting('not found yet');
  const terminating = obj.kind === 'Namespace' ? terminatingMessage(obj) : undefined;
  return terminating ? failed(terminating) : done('exists');
});

/** After a `delete` action, and for Jobs being re-created. */
export const deletedRule = rule('deleted', (obj) => (obj ? waiting(obj.metadata?.deletionTimestamp ? 'terminating' : 'still present') : done('gone')));
