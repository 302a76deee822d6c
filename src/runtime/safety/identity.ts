/**
 * The server's identity is kept: a plan that would change the recorded fqdn, move the server to
 * an older image generation, or replace its CA is refused before any write, naming the recorded
 * and the planned value, unless the flag for that kind of change is given (then it is a
 * destructive change that asks first: src/runtime/decide/destructive.ts).
 */
import type { Plan } from '../../plan/types';
import type { RecordedIdentity } from './record';
import { CA_SECRET } from './record';
import { compareVersions } from '../core/versions';

export interface IdentityFlags {
  /** `--allow-fqdn-change` */
  readonly allowFqdnChange?: boolean;
  /** `--allow-downgrade` */
  readonly allowDowngrade?: boolean;
  /** `--allow-new-ca` */
  readonly allowNewCa?: boolean;
}

export interface IdentityChange {
  readonly kind: 'fqdn' | 'downgrade' | 'new-ca';
  readonly flag: '--allow-fqdn-change' | '--allow-downgrade' | '--allow-new-ca';
  readonly recorded: string;
  readonly planned: string;
  /** The flag was given: the change goes ahead (after the question). */
  readonly allowed: boolean;
  readonly message: string;
}

/** -1, 0, 1, or undefined when either is not a version (`latest`): they cannot be compared (a change then needs --allow-downgrade). */
function compareGenerations(a: string, b: string): number | undefined {
  try {
    return compareVersions(a, b);
  } catch {
    return undefined;
  }
}

/**
 * What the plan would change of the recorded identity. `caNow`: the fingerprint of Secret
 * uyuni-ca in the cluster now (none: it is gone).
 */
export function identityChanges(recorded: RecordedIdentity | undefined, plan: Plan, caNow: string | undefined, flags: IdentityFlags): IdentityChange[] {
  const planned = plan.identity;
  if (!recorded || !planned) return [];
  const out: IdentityChange[] = [];
  const since = recorded.source ?? `recorded by run ${recorded.run} of plan ${recorded.plan} at ${recorded.at}`;
  if (planned.fqdn !== recorded.fqdn) {
    out.push({
      kind: 'fqdn', flag: '--allow-fqdn-change', recorded: recorded.fqdn, planned: planned.fqdn, allowed: Boolean(flags.allowFqdnChange),
      message: `the server's fqdn would change from ${recorded.fqdn} (${since}) to ${planned.fqdn}: clients, certificates and the CA name the old one`,
    });
  }
  const order = compareGenerations(planned.imageGeneration, recorded.imageGeneration);
  if (order === -1) {
    out.push({
      kind: 'downgrade', flag: '--allow-downgrade', recorded: recorded.imageGeneration, planned: planned.imageGeneration, allowed: Boolean(flags.allowDowngrade),
      message: `the server would move to an older image generation: ${recorded.imageGeneration} (${since}) → ${planned.imageGeneration}; its data was upgraded by the newer one`,
    });
  } else if (order === undefined && planned.imageGeneration !== recorded.imageGeneration) {
    // a tag that is not a version (`latest`) says nothing of its age: it may be older
    out.push({
      kind: 'downgrade', flag: '--allow-downgrade', recorded: recorded.imageGeneration, planned: planned.imageGeneration, allowed: Boolean(flags.allowDowngrade),
      message: `the server's image generation would change from ${recorded.imageGeneration} (${since}) to ${planned.imageGeneration}, and one of them is not a version: `
        + 'it cannot be told whether this is an older one; set images.tag to a version, or confirm it is not older',
    });
  }
  const ca = recorded.caFingerprint ? `CA ${recorded.caFingerprint.slice(0, 23)}…` : 'its CA';
  if (planned.tlsMode !== recorded.tlsMode) {
    out.push({
      kind: 'new-ca', flag: '--allow-new-ca', recorded: `tls.mode ${recorded.tlsMode} (${ca})`, planned: `tls.mode ${planned.tlsMode}`, allowed: Boolean(flags.allowNewCa),
      message: `the server's CA would be replaced: tls.mode ${recorded.tlsMode} (${ca}, ${since}) → tls.mode ${planned.tlsMode}; every client trusts the old CA`,
    });
  } else if (recorded.caFingerprint && !caNow && planned.tlsMode === 'generated') {
    out.push({
      kind: 'new-ca', flag: '--allow-new-ca', recorded: recorded.caFingerprint, planned: 'a new CA', allowed: Boolean(flags.allowNewCa),
      message: `Secret ${plan.namespace}/${CA_SECRET} is gone: the plan would mint a new CA in place of ${recorded.caFingerprint} (${since}); every client trusts the old one. Restore the Secret from a backup`,
    });
  }
  return out;
}
