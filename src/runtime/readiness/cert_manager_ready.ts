import type { KubernetesObject } from '@kubernetes/client-node';
import { rule } from './rule';
import { condition, Conditioned, done, Verdict, waiting } from './verdict';

type Generational = Conditioned & { readonly metadata?: { readonly generation?: number } };

/**
 * cert-manager Certificate, Issuer, ClusterIssuer: condition Ready=True, of the object's current
 * generation when cert-manager says which (its conditions carry `observedGeneration`): a
 * Certificate whose issuerRef just changed (a CA rotation's phase 2) is still Ready of the old
 * spec until cert-manager looked at the new one.
 */
export function readyVerdict(obj: Generational | undefined): Verdict {
  if (!obj) return waiting(`not found`);
  const ready = condition(obj, 'Ready') as (ReturnType<typeof condition> & { readonly observedGeneration?: number }) | undefined;
  const generation = obj.metadata?.generation;
  if (ready?.status === 'True' && ready.observedGeneration !== undefined && generation !== undefined && ready.observedGeneration < generation) {
    return waiting(`Ready of generation ${ready.observedGeneration}, the spec is at ${generation}`);
  }
  if (ready?.status === 'True') return done('Ready');
  if (!ready) return waiting('no Ready condition yet');
  return waiting(`Ready=${ready.status}${ready.reason ? ` (${ready.reason}${ready.message ? `: ${ready.message}` : ''})` : ''}`);
}

export const readyRule = rule('ready', (obj: (KubernetesObject & Generational) | undefined) => readyVerdict(obj));
