/** Rules for any kind: the object can be read back, or it is gone. */
import { rule } from './rule';
import { done, waiting } from './verdict';

export const existsRule = rule('exists', (obj) => (obj ? done('exists') : waiting('not found yet')));

/** After a `delete` action, and for Jobs being re-created. */
export const deletedRule = rule('deleted', (obj) => (obj ? waiting(obj.metadata?.deletionTimestamp ? 'terminating' : 'still present') : done('gone')));
