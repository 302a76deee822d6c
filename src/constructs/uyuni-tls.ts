import { Construct } from 'constructs';
import {
  Certificate, CertificateSpecPrivateKeyAlgorithm, CertificateSpecUsages, Issuer,
} from '../../imports/cert-manager.io';
import type { UyuniConfig } from '../config/schema';
import { commonLabels } from '../model/labels';
import type { Requirement } from '../plan/types';

export interface UyuniTlsProps {
  readonly namespace: string;
  readonly config: UyuniConfig;
}

/** Names shared by the TLS objects and their consumers. */
export const TLS_NAMES = {
  selfSignedIssuer: 'uyuni-issuer',
  ca: 'uyuni-ca',
  caIssuer: 'uyuni-ca-issuer',
  serverCert: 'uyuni-cert',
  dbCert: 'db-cert',
} as const;

/** What the user must provide before the TLS step, by mode (nothing for a generated CA). */
export function tlsRequirements(config: UyuniConfig, namespace: string): Requirement[] {
  const { tls, fqdn } = config;
  if (tls.mode === 'third-party') {
    return [
      {
        kind: 'Secret', name: TLS_NAMES.serverCert, namespace, keys: ['tls.crt', 'tls.key', 'ca.crt'], ifMissing: 'fail',
        message: `third-party TLS: create it with: kubectl -n ${namespace} create secret generic ${TLS_NAMES.serverCert} --from-file=tls.crt=<cert with chain> --from-file=tls.key=<key> --from-file=ca.crt=<CA cert>`,
      },
      {
        kind: 'ConfigMap', name: TLS_NAMES.ca, namespace, keys: ['ca.crt'], ifMissing: 'fail',
        message: `third-party TLS: create it with: kubectl -n ${namespace} create configmap ${TLS_NAMES.ca} --from-file=ca.crt=<CA cert>`,
      },
      ...(config.db.separate ? [{
        kind: 'Secret' as const, name: TLS_NAMES.dbCert, namespace, keys: ['tls.crt', 'tls.key', 'ca.crt'], ifMissing: 'fail' as const,
        message: `third-party TLS: create the database certificate Secret ${TLS_NAMES.dbCert} (tls.crt, tls.key, ca.crt) for ${fqdn}, db and reportdb`,
      }] : []),
    ];
  }
  if (tls.mode === 'migrated') {
    return [{
      kind: 'Secret', name: TLS_NAMES.ca, namespace, keys: ['tls.crt', 'tls.key'], ifMissing: 'fail',
      message: `migrated CA: create it from the old server's CA with: kubectl -n ${namespace} create secret tls ${TLS_NAMES.ca} --cert=<RHN-ORG-TRUSTED-SSL-CERT> --key=<RHN-ORG-PRIVATE-SSL-KEY>`,
    }];
  }
  return [];
}

/**
 * The server's TLS (uyuni-server.md §5), by mode:
 * - generated: Issuer uyuni-issuer (selfSigned) → Certificate uyuni-ca (isCA) → Issuer
 *   uyuni-ca-issuer → Certificates uyuni-cert and db-cert;
 * - migrated: the user's Secret uyuni-ca (the old CA) → Issuer uyuni-ca-issuer → certificates;
 * - third-party: no cert-manager object; the user's Secret uyuni-cert and ConfigMap uyuni-ca.
 * Durations and renewal are explicit; every object carries our labels (upstream's did not).
 */
export class UyuniTls extends Construct {
  constructor(scope: Construct, id: string, props: UyuniTlsProps) {
    super(scope, id);
    const { config, namespace } = props;
    const { tls, fqdn } = config;
    const metadata = (name: string) => ({ name, namespace, labels: commonLabels('uyuni', 'tls') });
    if (tls.mode === 'third-party') return;

    if (tls.mode === 'generated') {
      new Issuer(this, 'SelfSigned', { metadata: metadata(TLS_NAMES.selfSignedIssuer), spec: { selfSigned: {} } });
      new Certificate(this, 'Ca', {
      metadata: metadata(TLS_NAMES.ca),
      spec: {
        isCa: true,
        commonName: fqdn,
        secretName: TLS_NAMES.ca,
        duration: tls.caDuration,
        renewBefore: tls.renewBefore,
        privateKey: { algorithm: CertificateSpecPrivateKeyAlgorithm.ECDSA, size: 256 },
        subject: {
          countries: [tls.ca.country],
          provinces: [tls.ca.state],
          localities: [tls.ca.city],
          organizations: [tls.ca.organization],
          organizationalUnits: [tls.ca.organizationalUnit],
        },
        ...(tls.ca.email ? { emailAddresses: [tls.ca.email] } : {}),
        issuerRef: { name: TLS_NAMES.selfSignedIssuer, kind: 'Issuer', group: 'cert-manager.io' },
      },
      });
    }

    new Issuer(this, 'CaIssuer', { metadata: metadata(TLS_NAMES.caIssuer), spec: { ca: { secretName: TLS_NAMES.ca } } });
    const leaf = (id: string, name: string, dnsNames: string[]) => new Certificate(this, id, {
      metadata: metadata(name),
      spec: {
      secretName: name,
      commonName: fqdn,
      dnsNames,
      duration: tls.duration,
      renewBefore: tls.renewBefore,
      privateKey: { algorithm: CertificateSpecPrivateKeyAlgorithm.ECDSA, size: 256 },
      usages: [CertificateSpecUsages.SERVER_AUTH, CertificateSpecUsages.DIGITAL_SIGNATURE, CertificateSpecUsages.KEY_ENCIPHERMENT],
      issuerRef: { name: TLS_NAMES.caIssuer, kind: 'Issuer', group: 'cert-manager.io' },
      },
    });
    leaf('ServerCert', TLS_NAMES.serverCert, [fqdn]);
    leaf('DbCert', TLS_NAMES.dbCert, [fqdn, 'db', 'reportdb']);
  }
}
