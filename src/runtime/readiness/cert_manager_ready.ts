import type { KubernetesObject } from '@kubernetes/client-node';
import { rule } from './rule';
import { condition, Conditioned, done, Verdict, waiting } from './verdict';

/** cert-manager Certificate, Issuer, ClusterIssuer: condition Ready=True. */
export function readyVerdict(obj: Conditioned | undefined): Verdict {
  if (!obj) return waiting(`not found`);
  const ready = condition(obj, 'Ready');
  if (ready?.status === 'True') return done('Ready');
  if (!ready) return waiting('no Ready condition yet');
  return waiting(`Ready=${ready.status}${ready.reason ? ` (${ready.reason}${ready.message ? `: ${ready.message}` : ''})` : ''}`);
}

export const readyRule = rule('ready', (obj: (KubernetesObject & Conditioned) | undefined) => readyVerdict(obj));
