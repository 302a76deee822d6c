import { createHash } from 'crypto';

/**
 * The spec hash of a step Job (annotation `uyuni-cdk.io/spec-hash`): synth writes it, the runtime
 * computes it for a hand-written Job that lacks one, and compares it to decide skip / attach /
 * refuse. One format on both sides: `sha256:` and the hex digest of the spec's canonical JSON.
 */
const PREFIX = 'sha256:';

/** JSON with object keys sorted and `undefined` members dropped: the same text for the same value. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined).sort(([a], [b]) => (a < b ? -1 : 1));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** `sha256:<hex>` of a spec's canonical JSON. */
export function hashSpec(spec: unknown): string {
  return `${PREFIX}${createHash('sha256').update(canonicalJson(spec)).digest('hex')}`;
}

/** `sha256:<hex>` of a text (a step file's, for its summary in the plan index). */
export function hashText(text: string): string {
  return `${PREFIX}${createHash('sha256').update(text).digest('hex')}`;
}

/**
 * Whether two spec hashes are the same. A bare hex digest (what the runtime stamped on
 * hand-written Jobs before it wrote the prefix) equals the prefixed one.
 */
export function sameSpecHash(a: string | undefined, b: string | undefined): boolean {
  const bare = (h: string) => (h.startsWith(PREFIX) ? h.slice(PREFIX.length) : h);
  return a !== undefined && b !== undefined && bare(a) === bare(b);
}
