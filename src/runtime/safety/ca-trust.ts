/**
 * What the server can tell of a CA rotation before its phase 2 (uyuni-tools c46f1238 `mgradm ssl
 * rotate --check-only` asks the Salt clients; we read what the cluster holds): the new CA's
 * fingerprint, from its Secret, and each object of the plan's `trustedBy` (a proxy's CA
 * ConfigMap, a third-party Secret) that does not hold it. Reads only.
 */
import { createHash, X509Certificate } from 'crypto';
import type { KubernetesObject } from '@kubernetes/client-node';
import type { Plan } from '../../plan/types';
import type { Cluster } from '../../kube/cluster';

const PEM = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g;

/** `sha256:<hex>` of one certificate (its DER), as record.ts writes the server's CA. */
export function certFingerprint(cert: X509Certificate): string {
  return `sha256:${cert.fingerprint256.replace(/:/g, '').toLowerCase()}`;
}

/** The fingerprints of every PEM certificate in `text`, in order (one that does not parse: the sha256 of its text). */
export function pemFingerprints(text: string): string[] {
  return (text.match(PEM) ?? []).map((pem) => {
    try {
      return certFingerprint(new X509Certificate(pem));
    } catch {
      return `sha256:${createHash('sha256').update(pem).digest('hex')}`;
    }
  });
}

/**
 * The fingerprint of a Secret's CA: the first certificate of its ca.crt, else of its tls.crt
 * (the sha256 of the value when it holds no PEM certificate); none without either key.
 */
export function secretCaFingerprint(secret: { data?: Record<string, string> } | undefined): string | undefined {
  const value = secret?.data?.['ca.crt'] ?? secret?.data?.['tls.crt'];
  if (!value) return undefined;
  const bytes = Buffer.from(value, 'base64');
  return pemFingerprints(bytes.toString('utf8'))[0] ?? `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
}

export interface RotationFacts {
  /** The new CA's fingerprint now: the first certificate of its Secret's ca.crt (else tls.crt); none: the Secret or the key is missing. */
  readonly nextCa?: string;
  /** `trustedBy` entries that do not hold the new CA, each as `<what> (<Kind> <ns>/<name> <key>: why)`. */
  readonly untrusted: readonly string[];
}

type WithData = KubernetesObject & { data?: Record<string, string> };

function textOf(o: WithData | undefined, kind: 'ConfigMap' | 'Secret', key: string): string | undefined {
  const v = o?.data?.[key];
  if (v === undefined) return undefined;
  return kind === 'Secret' ? Buffer.from(v, 'base64').toString('utf8') : v;
}

/** The rotation facts of a plan with a `caRotation` (undefined for any other plan). */
export async function rotationFacts(cluster: Cluster, plan: Plan): Promise<RotationFacts | undefined> {
  const r = plan.caRotation;
  if (!r) return undefined;
  const ns = plan.namespace;
  const secret = await cluster.get<WithData>({ apiVersion: 'v1', kind: 'Secret', name: r.caSecret, namespace: ns });
  const nextCa = secretCaFingerprint(secret);
  const checks = await Promise.all((r.trustedBy ?? []).map(async (t) => {
    const where = `${t.kind} ${t.namespace}/${t.name} ${t.key}`;
    const o = await cluster.get<WithData>({ apiVersion: 'v1', kind: t.kind, name: t.name, namespace: t.namespace });
    const text = textOf(o, t.kind, t.key);
    if (text === undefined) return `${t.what} (${where}: ${o ? 'no such key' : 'not found'})`;
    if (!nextCa) return `${t.what} (${where}: the new CA cannot be read to compare)`;
    const fps = pemFingerprints(text);
    return fps.includes(nextCa) ? undefined : `${t.what} (${where}: ${fps.length} certificate(s), none the new CA)`;
  }));
  return { ...(nextCa ? { nextCa } : {}), untrusted: checks.filter((c): c is string => c !== undefined) };
}
