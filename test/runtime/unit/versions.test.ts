import { compareVersions, parseVersion } from '../../../src/runtime/core/versions';
import { evaluateGate } from '../../../src/runtime/decide/gates';
import { parseFacts } from '../../../src/runtime/core/facts';

describe('version comparison', () => {
  it('compares numerically, part by part', () => {
    expect(compareVersions('9', '16')).toBe(-1);
    expect(compareVersions('16.4', '16.10')).toBe(-1);
    expect(compareVersions('17', '16.9')).toBe(1);
    expect(compareVersions('16', '16.0')).toBe(0);
  });

  it('parses Uyuni and calendar versions', () => {
    expect(parseVersion('5.1.0 Alpha1')).toEqual({ parts: [5, 1, 0], suffix: 'Alpha1' });
    expect(parseVersion('2025.10')).toEqual({ parts: [2025, 10], suffix: '' });
    expect(compareVersions('2025.10', '2025.9')).toBe(1);
    expect(compareVersions('v16.4', '16.4')).toBe(0);
  });

  it('sorts a pre-release before its release', () => {
    expect(compareVersions('5.1.0 Alpha1', '5.1.0')).toBe(-1);
    expect(compareVersions('5.1.0 Alpha1', '5.1.0 Alpha2')).toBe(-1);
    expect(compareVersions('5.1.0 Beta1', '5.0.9')).toBe(1);
  });

  it('refuses what is not a version', () => {
    expect(() => parseVersion('latest')).toThrow(/not a version/);
  });
});

describe('gates', () => {
  const facts = parseFacts('inspecting...\nuyuni_version=2025.10\npg_version=16\n\nnoise line\nfqdn=uyuni.example.com\n');

  it('reads key=value lines and ignores the rest', () => {
    expect(facts).toEqual({ uyuni_version: '2025.10', pg_version: '16', fqdn: 'uyuni.example.com' });
  });

  it('refuses a PostgreSQL downgrade and accepts an upgrade', () => {
    const gate = (target: string) => ({ type: 'compare-versions' as const, left: { value: target }, op: '>=' as const, right: { fact: 'pg_version' }, message: 'PostgreSQL cannot be downgraded' });
    const refused = evaluateGate(gate('14'), facts);
    expect(refused.ok).toBe(false);
    expect(refused.detail).toContain('PostgreSQL cannot be downgraded');
    expect(refused.detail).toBe('PostgreSQL cannot be downgraded (pg_version is 16, expected 14 or older)');
    expect(evaluateGate(gate('17'), facts).detail).toBe('pg_version is 16, as expected: 17 or older');
    expect(evaluateGate(gate('17'), facts).ok).toBe(true);
  });

  it('refuses when a fact is missing instead of guessing', () => {
    expect(evaluateGate({ type: 'present', fact: 'db_name', message: 'no database found' }, facts).ok).toBe(false);
    expect(evaluateGate({ type: 'equals', left: { fact: 'nope' }, right: { value: 'x' }, message: 'm' }, facts).ok).toBe(false);
    expect(evaluateGate({ type: 'present', fact: 'fqdn', message: 'm' }, facts).ok).toBe(true);
  });

  it('compares strings for equals / not-equals', () => {
    expect(evaluateGate({ type: 'equals', left: { fact: 'fqdn' }, right: { value: 'uyuni.example.com' }, message: 'm' }, facts).ok).toBe(true);
    expect(evaluateGate({ type: 'not-equals', left: { fact: 'fqdn' }, right: { value: 'uyuni.example.com' }, message: 'm' }, facts).ok).toBe(false);
  });
});
