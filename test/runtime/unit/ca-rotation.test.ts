/**
 * The identity check of a CA rotation (src/runtime/safety/identity.ts, ca-trust.ts): phase 2 only after
 * a recorded phase 1 for the same new CA and with every named object trusting it, or forced, or
 * an emergency; any other change of the CA refused; and the fingerprints of real certificates.
 */
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { X509Certificate } from 'crypto';
import type { Plan } from '../../../src/plan/types';
import { destructiveChanges } from '../../../src/runtime/decide/destructive';
import { certFingerprint, pemFingerprints, secretCaFingerprint } from '../../../src/runtime/safety/ca-trust';
import { identityChanges } from '../../../src/runtime/safety/identity';
import type { PlanResult } from '../../../src/runtime/decide/plan-result';
import type { RecordedIdentity } from '../../../src/runtime/safety/record';

const OLD = 'sha256:0ld';
const NEW = 'sha256:new';
const identity = { fqdn: 'uyuni.example.com', product: 'registry.opensuse.org/uyuni/server', imageGeneration: '2026.08', tlsMode: 'generated' };
const recorded = (over: Partial<RecordedIdentity> = {}): RecordedIdentity => ({ ...identity, caFingerprint: OLD, plan: 'install', run: 'i1', at: 't0', ...over });
const added = { phase: 'added' as const, caSecret: 'uyuni-ca-next', caFingerprint: NEW, plan: 'ssl-addca', run: 'a1', at: 't1' };
const plan = (over: Partial<Plan> = {}): Plan => ({
  formatVersion: 1, name: 'install', description: '', generator: 't', namespace: 'uyuni', selector: {}, deadlineSeconds: 60, steps: [], identity, ...over,
});
const rotate = (over: Partial<NonNullable<Plan['caRotation']>> = {}) => plan({
  name: 'ssl-rotate', identity: { ...identity, caSecret: 'uyuni-ca-next' }, caRotation: { phase: 'rotate', caSecret: 'uyuni-ca-next', ...over },
});
const trusting = { nextCa: NEW, untrusted: [] };
const brief = (cs: ReturnType<typeof identityChanges>) => cs.map((c) => [c.kind, c.flag, c.allowed]);

describe('the identity check of a CA rotation', () => {
  it('phase 2 after its recorded phase 1, everything trusting the new CA: allowed, and asked as a destructive change', () => {
    const c = identityChanges(recorded({ caRotation: added }), rotate(), NEW, {}, trusting);
    expect(brief(c)).toEqual([['ca-rotation', 'caRotation', true]]);
    expect(c[0].message).toContain('the old CA sha256:0ld… is dropped');
    expect(c[0].message).toContain('phase 1: run a1');
    const changes = destructiveChanges({ steps: [], prune: [], identity: c, takeovers: [] } as unknown as PlanResult);
    expect(changes.map((x) => [x.kind, x.object])).toEqual([['identity', 'ca-rotation']]);
  });

  it('refuses phase 2 without a recorded phase 1 (also with no record at all), or with one for another CA; caRotation.force allows it', () => {
    expect(brief(identityChanges(recorded(), rotate(), NEW, {}, trusting))).toEqual([['ca-rotation', 'caRotation.force', false]]);
    expect(identityChanges(recorded(), rotate(), NEW, {}, trusting)[0].message).toContain('no phase 1 (dist/ssl-addca) is recorded for it');
    expect(brief(identityChanges(undefined, rotate(), NEW, {}, trusting))).toEqual([['ca-rotation', 'caRotation.force', false]]);
    const other = recorded({ caRotation: { ...added, caFingerprint: 'sha256:other' } });
    expect(identityChanges(other, rotate(), NEW, {}, trusting)[0].message).toContain('phase 1 was recorded for another CA sha256:other…');
    expect(brief(identityChanges(recorded(), rotate({ force: true }), NEW, {}, trusting))).toEqual([['ca-rotation', 'caRotation.force', true]]);
    // --allow-new-ca is not the way to skip phase 1
    expect(brief(identityChanges(recorded(), rotate(), NEW, { allowNewCa: true }, trusting))).toEqual([['ca-rotation', 'caRotation.force', false]]);
  });

  it('refuses phase 2 while a proxy does not trust the new CA, naming it; force allows it', () => {
    const facts = { nextCa: NEW, untrusted: ['the proxy p.example.com\'s CA (ConfigMap uyuni-proxy/uyuni-ca ca.crt: 1 certificate(s), none the new CA)'] };
    const c = identityChanges(recorded({ caRotation: added }), rotate(), NEW, {}, facts);
    expect(brief(c)).toEqual([['ca-rotation', 'caRotation.force', false]]);
    expect(c[0].message).toContain('not trusting the new CA yet: the proxy p.example.com\'s CA (ConfigMap uyuni-proxy/uyuni-ca');
    expect(brief(identityChanges(recorded({ caRotation: added }), rotate({ force: true }), NEW, {}, facts))).toEqual([['ca-rotation', 'caRotation.force', true]]);
  });

  it('refuses phase 2 when the new CA cannot be read, forced or not', () => {
    const c = identityChanges(recorded({ caRotation: added }), rotate({ force: true }), undefined, {}, { untrusted: [] });
    expect(brief(c)).toEqual([['ca-rotation', 'caRotation.force', false]]);
    expect(c[0].message).toContain('has no certificate (ca.crt, tls.crt)');
  });

  it('an emergency needs no phase 1 and says loudly that every client breaks', () => {
    const c = identityChanges(recorded(), rotate({ emergency: true }), undefined, {}, { untrusted: [] });
    expect(brief(c)).toEqual([['ca-rotation', 'caRotation.emergency', true]]);
    expect(c[0].message).toMatch(/^EMERGENCY CA ROTATION, no overlap: .*every client and proxy stops trusting the server/);
  });

  it('a second run of phase 2 on the rotated server changes nothing', () => {
    const rotated = recorded({ caFingerprint: NEW, caRotation: { ...added, phase: 'rotated', from: OLD, plan: 'ssl-rotate', run: 'r1' } });
    expect(identityChanges(rotated, rotate(), NEW, {}, trusting)).toEqual([]);
  });

  it('refuses any other change of the CA (--allow-new-ca allows it), and says when a rotation moved the server on', () => {
    const c = identityChanges(recorded(), plan(), 'sha256:swapped', {});
    expect(brief(c)).toEqual([['new-ca', '--allow-new-ca', false]]);
    expect(c[0].message).toContain('the server\'s CA would change from sha256:0ld…');
    expect(brief(identityChanges(recorded(), plan(), 'sha256:swapped', { allowNewCa: true }))).toEqual([['new-ca', '--allow-new-ca', true]]);
    // after a rotation, an install that names uyuni-ca (the old CA) would go back
    const rotated = recorded({ caFingerprint: NEW, caRotation: { ...added, phase: 'rotated', from: OLD, plan: 'ssl-rotate', run: 'r1' } });
    const back = identityChanges(rotated, plan(), OLD, {});
    expect(brief(back)).toEqual([['new-ca', '--allow-new-ca', false]]);
    expect(back[0].message).toContain('the CA that plan ssl-rotate rotated to, run r1');
    // phase 1 changes no CA
    expect(identityChanges(recorded(), plan({ name: 'ssl-addca', caRotation: { phase: 'addca', caSecret: 'uyuni-ca-next' } }), OLD, {})).toEqual([]);
  });
});

describe('fingerprints of real certificates (openssl)', () => {
  let dir: string;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ca-fp-'));
    for (const n of ['a', 'b']) {
      execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-subj', `/CN=ca-${n}`, '-days', '2',
        '-keyout', path.join(dir, `${n}.key`), '-out', path.join(dir, `${n}.crt`)], { stdio: 'ignore' });
    }
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('reads every certificate of a bundle, as openssl fingerprints them, and a Secret\'s first', () => {
    const a = fs.readFileSync(path.join(dir, 'a.crt'), 'utf8');
    const b = fs.readFileSync(path.join(dir, 'b.crt'), 'utf8');
    const openssl = (f: string) => `sha256:${execFileSync('openssl', ['x509', '-in', path.join(dir, f), '-noout', '-fingerprint', '-sha256'], { encoding: 'utf8' })
      .trim().split('=')[1].replace(/:/g, '').toLowerCase()}`;
    expect(pemFingerprints(`${a}\n${b}`)).toEqual([openssl('a.crt'), openssl('b.crt')]);
    expect(certFingerprint(new X509Certificate(b))).toBe(openssl('b.crt'));
    const b64 = (t: string) => Buffer.from(t).toString('base64');
    expect(secretCaFingerprint({ data: { 'ca.crt': b64(b + a), 'tls.crt': b64(a) } })).toBe(openssl('b.crt'));
    expect(secretCaFingerprint({ data: { 'tls.crt': b64(a) } })).toBe(openssl('a.crt'));
    expect(secretCaFingerprint({ data: {} })).toBeUndefined();
  });
});
