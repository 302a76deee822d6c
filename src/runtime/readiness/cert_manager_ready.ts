import { condition, done, Verdict, waiting } from './verdict';

/** cert-manager Certificate, Issuer, ClusterIssuer: condition Ready=True. */
export function readyVerdict(obj: any): Verdict {
  if (!obj) return waiting(`not found`);
  const ready = condition(obj, 'Ready');
  if (ready?.status === 'True') return done('Ready');
  if (!ready) return waiting('no Ready condition yet');
  return waiting(`Ready=${ready.status}${ready.reason ? ` (${ready.reason}${ready.message ? `: ${ready.message}` : ''})` : ''}`);
}
