/**
 * The server's identity is kept: a plan that would change the recorded fqdn, move the server to
 * an older image generation, or replace its CA is refused before any write, naming the recorded
 * and the planned value, unless the flag for that kind of change is given (then it is a
 * destructive change that asks first: src/runtime/decide/destructive.ts).
 *
 * The one CA change allowed without --allow-new-ca is a CA rotation's phase 2 (dist/ssl-rotate,
 * src/plans/ca-rotation.ts) after its phase 1 was recorded for the same new CA, with every object
 * it names trusting that CA; or forced, or an emergency (the configuration says so). It still
 * asks first, as a destructive change.
 */
import type { Plan } from '../../plan/types';
import type { RotationFacts } from './ca-trust';
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
  readonly kind: 'fqdn' | 'downgrade' | 'new-ca' | 'ca-rotation';
  /** What allows it: a flag of run, or (a CA rotation) a setting the plan was synthesized with. */
  readonly flag: '--allow-fqdn-change' | '--allow-downgrade' | '--allow-new-ca' | 'caRotation' | 'caRotation.force' | 'caRotation.emergency';
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

const short = (fp: string | undefined) => (fp ? `${fp.slice(0, 23)}…` : 'none');

/**
 * A CA rotation's phase 2 (or its emergency): allowed after a recorded phase 1 for this CA with
 * everything trusting it, or by caRotation.force / caRotation.emergency; refused otherwise.
 * Nothing when the server is on that CA already (a second run converges).
 */
function rotationChange(recorded: RecordedIdentity | undefined, plan: Plan, facts: RotationFacts): IdentityChange[] {
  const r = plan.caRotation!;
  const from = recorded?.caFingerprint;
  const to = facts.nextCa;
  const phase1 = recorded?.caRotation;
  if (to && from === to && phase1?.phase === 'rotated' && phase1.caFingerprint === to) return [];
  const base = { kind: 'ca-rotation' as const, recorded: from ?? 'no recorded CA', planned: to ?? `Secret ${r.caSecret} (not there yet)` };
  if (r.emergency) {
    return [{
      ...base, flag: 'caRotation.emergency', allowed: true,
      message: `EMERGENCY CA ROTATION, no overlap: the server's CA ${short(from)} is replaced by a new CA (Secret ${r.caSecret}) at once; `
        + 'every client and proxy stops trusting the server until it is given the new CA',
    }];
  }
  const added = phase1?.phase === 'added' && to !== undefined && phase1.caFingerprint === to;
  const untrusted = facts.untrusted.length ? `; not trusting the new CA yet: ${facts.untrusted.join(', ')}` : '';
  const switchText = `CA rotation phase 2: the server's certificates are issued from the new CA ${short(to)} (Secret ${r.caSecret}) and the old CA ${short(from)} is dropped; `
    + 'a client that has not taken the new CA stops trusting the server';
  if (!to) {
    return [{ ...base, flag: 'caRotation.force', allowed: false, message: `CA rotation phase 2: the new CA's Secret ${plan.namespace}/${r.caSecret} has no certificate (ca.crt, tls.crt): run dist/ssl-addca first` }];
  }
  if (!added) {
    const why = phase1?.phase === 'added'
      ? `phase 1 was recorded for another CA ${short(phase1.caFingerprint)} (Secret ${phase1.caSecret}, run ${phase1.run})`
      : 'no phase 1 (dist/ssl-addca) is recorded for it';
    return [{
      ...base, flag: 'caRotation.force', allowed: Boolean(r.force),
      message: `${switchText}; ${why}: clients have not been given the new CA${untrusted}`,
    }];
  }
  if (facts.untrusted.length) {
    return [{ ...base, flag: 'caRotation.force', allowed: Boolean(r.force), message: `${switchText}${untrusted}` }];
  }
  return [{ ...base, flag: 'caRotation', allowed: true, message: `${switchText} (phase 1: run ${phase1.run} at ${phase1.at})` }];
}

/**
 * What the plan would change of the recorded identity. `caNow`: the fingerprint of the plan's CA
 * Secret (uyuni-ca, or its `identity.caSecret`) in the cluster now (none: it is gone); `rotation`:
 * what the cluster shows of a CA rotation (src/runtime/ca-trust.ts), for a plan with `caRotation`.
 */
export function identityChanges(
  recorded: RecordedIdentity | undefined, plan: Plan, caNow: string | undefined, flags: IdentityFlags, rotation?: RotationFacts,
): IdentityChange[] {
  const planned = plan.identity;
  const rotating = plan.caRotation?.phase === 'rotate';
  // phase 2 is refused without the record of phase 1: a missing record never turns the guard off
  const rotationChanges = rotating ? rotationChange(recorded, plan, rotation ?? { untrusted: [] }) : [];
  if (!recorded || !planned) return rotationChanges;
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
  } else if (rotating) {
    out.push(...rotationChanges);
  } else if (recorded.caFingerprint && caNow && caNow !== recorded.caFingerprint) {
    const rotated = recorded.caRotation?.phase === 'rotated' && recorded.caRotation.caFingerprint === recorded.caFingerprint
      ? ` (the CA that plan ${recorded.caRotation.plan} rotated to, run ${recorded.caRotation.run}; this plan does not know the rotation `
        + 'and would go back to the CA of Secret ' + (planned.caSecret ?? CA_SECRET) + ': docs/ca-rotation.md, "After the rotation")'
      : '';
    out.push({
      kind: 'new-ca', flag: '--allow-new-ca', recorded: recorded.caFingerprint, planned: caNow, allowed: Boolean(flags.allowNewCa),
      message: `the server's CA would change from ${short(recorded.caFingerprint)} (${since})${rotated} to ${short(caNow)} (Secret ${plan.namespace}/${planned.caSecret ?? CA_SECRET} now): `
        + 'every client trusts the recorded one; a CA rotation in two phases (docs/ca-rotation.md) keeps them',
    });
  } else if (recorded.caFingerprint && !caNow && planned.tlsMode === 'generated') {
    out.push({
      kind: 'new-ca', flag: '--allow-new-ca', recorded: recorded.caFingerprint, planned: 'a new CA', allowed: Boolean(flags.allowNewCa),
      message: `Secret ${plan.namespace}/${CA_SECRET} is gone: the plan would mint a new CA in place of ${recorded.caFingerprint} (${since}); every client trusts the old one. Restore the Secret from a backup`,
    });
  }
  return out;
}
