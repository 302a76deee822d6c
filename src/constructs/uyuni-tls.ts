import { Construct } from 'constructs';
import {
  Certificate, CertificateSpec, CertificateSpecPrivateKeyAlgorithm, CertificateSpecPrivateKeyEncoding, CertificateSpecPrivateKeyRotationPolicy,
  CertificateSpecUsages, Issuer,
} from '../../imports/cert-manager.io';
import { DATABASES } from '../model/db';
import { commonLabels, selectorLabels } from '../model/labels';
import { TLS_NAMES } from '../model/tls';
import type { Requirement } from '../plan/types';

/** Where the CA comes from. */
export type TlsMode = 'generated' | 'third-party' | 'migrated';

/** The CA's subject (generated mode) and the db certificate's. */
export interface CaSubject {
  readonly country: string;
  readonly state: string;
  readonly city: string;
  readonly organization: string;
  readonly organizationalUnit: string;
  /** @default none */
  readonly email?: string;
}

export interface UyuniTlsProps {
  readonly namespace: string;
  readonly mode: TlsMode;
  /** The server's public name: the CA's and the certificates' name. */
  readonly fqdn: string;
  readonly subject: CaSubject;
  /** Leaf certificate lifetime (Go duration). */
  readonly duration: string;
  /** Renew this long before expiry. */
  readonly renewBefore: string;
  /** CA lifetime (generated mode). */
  readonly caDuration: string;
  /** The Issuer of uyuni-cert and db-cert (a CA rotation's phase 2 names the new CA's). @default 'uyuni-issuer' */
  readonly leafIssuer?: string;
}

const SECRET_KEYS = ['tls.crt', 'tls.key', 'ca.crt'];

/** The key and usages of every server certificate the chart issues (uyuni-cert, db-cert, proxies'): RSA 2048 PKCS1, rotated, server auth. */
export const SERVER_CERT_KEY: Pick<CertificateSpec, 'privateKey' | 'usages'> = {
  privateKey: {
    algorithm: CertificateSpecPrivateKeyAlgorithm.RSA,
    size: 2048,
    encoding: CertificateSpecPrivateKeyEncoding.PKCS1,
    rotationPolicy: CertificateSpecPrivateKeyRotationPolicy.ALWAYS,
  },
  usages: [CertificateSpecUsages.SERVER_AUTH],
};

/** What the user must provide before the TLS step, by mode (nothing for a generated CA). */
/** The step of the plan, and its Job, that make a migrated CA's Secret. */
export interface CaMadeBy {
  readonly step: string;
  readonly job: string;
}

export function tlsRequirements(mode: TlsMode, fqdn: string, namespace: string, caMadeBy?: CaMadeBy): Requirement[] {
  const tlsSecret = (name: string, names: string) => ({
    kind: 'Secret' as const, name, namespace, keys: SECRET_KEYS, ifMissing: 'fail' as const,
    message: `third-party TLS: create it for ${names} with: kubectl -n ${namespace} create secret generic ${name} `
      + '--from-file=tls.crt=<certificate with its chain> --from-file=tls.key=<key> --from-file=ca.crt=<CA certificate>',
  });
  if (mode === 'third-party') {
    return [
      tlsSecret(TLS_NAMES.serverCert, fqdn),
      tlsSecret(TLS_NAMES.dbCert, `${DATABASES.product.host}, ${DATABASES.report.host} and ${fqdn}`),
    ];
  }
  if (mode === 'migrated') {
    return [{
      kind: 'Secret', name: TLS_NAMES.ca, namespace, keys: ['tls.crt', 'tls.key'], ifMissing: 'fail',
      ...(caMadeBy ? { madeBy: caMadeBy.step } : {}),
      message: (caMadeBy ? `migrated CA: Job ${caMadeBy.job} (kubectl -n ${namespace} logs job/${caMadeBy.job}) makes it from the old server's ssl-build; see its log, or make it yourself. ` : 'migrated CA: ')
        + 'The old server\'s CA key is encrypted with the CA password; decrypt it, then create the Secret: '
        + 'openssl pkey -in RHN-ORG-PRIVATE-SSL-KEY -out ca.key (asks for the CA password) && '
        + `kubectl -n ${namespace} create secret tls ${TLS_NAMES.ca} --cert=RHN-ORG-TRUSTED-SSL-CERT --key=ca.key && rm ca.key`,
    }];
  }
  return [];
}

/**
 * The server's TLS (docs/upstream.md), by mode:
 * - generated: Issuer uyuni-root-issuer (selfSigned) → Certificate uyuni-ca (isCA) → Issuer
 *   uyuni-issuer → Certificates uyuni-cert and db-cert, as the official chart's cert-manager
 *   setup, but namespaced (no ClusterIssuer, nothing in cert-manager's namespace);
 * - migrated: the user's Secret uyuni-ca (the old CA, so registered clients keep trusting the
 *   server) → Issuer uyuni-issuer → the certificates;
 * - third-party: no cert-manager object; the user's Secrets uyuni-cert and db-cert.
 * The pods read the CA from the Secrets' `ca.crt`, which cert-manager writes.
 */
export class UyuniTls extends Construct {
  constructor(scope: Construct, id: string, props: UyuniTlsProps) {
    super(scope, id);
    const { namespace, fqdn, subject } = props;
    const metadata = (name: string) => ({ name, namespace, labels: commonLabels('uyuni', 'tls') });
    if (props.mode === 'third-party') return;
    const x509Subject = {
      countries: [subject.country],
      provinces: [subject.state],
      localities: [subject.city],
      organizations: [subject.organization],
      organizationalUnits: [subject.organizationalUnit],
    };

    if (props.mode === 'generated') {
      new Issuer(this, 'RootIssuer', { metadata: metadata(TLS_NAMES.rootIssuer), spec: { selfSigned: {} } });
      new Certificate(this, 'Ca', {
        metadata: metadata(TLS_NAMES.ca),
        spec: {
          isCa: true,
          commonName: fqdn,
          dnsNames: [fqdn],
          secretName: TLS_NAMES.ca,
          duration: props.caDuration,
          renewBefore: props.renewBefore,
          privateKey: { algorithm: CertificateSpecPrivateKeyAlgorithm.ECDSA, size: 256, rotationPolicy: CertificateSpecPrivateKeyRotationPolicy.ALWAYS },
          subject: x509Subject,
          ...(subject.email ? { emailAddresses: [subject.email] } : {}),
          issuerRef: { name: TLS_NAMES.rootIssuer, kind: 'Issuer', group: 'cert-manager.io' },
        },
      });
    }

    new Issuer(this, 'CaIssuer', { metadata: metadata(TLS_NAMES.caIssuer), spec: { ca: { secretName: TLS_NAMES.ca } } });
    const leaf = (cid: string, name: string, spec: { commonName?: string; dnsNames: string[]; subject?: typeof x509Subject; emailAddresses?: string[] }) =>
      new Certificate(this, cid, {
        metadata: metadata(name),
        spec: {
          secretName: name,
          secretTemplate: { labels: selectorLabels('uyuni', 'tls') },
          isCa: false,
          ...spec,
          duration: props.duration,
          renewBefore: props.renewBefore,
          ...SERVER_CERT_KEY,
          issuerRef: { name: props.leafIssuer ?? TLS_NAMES.caIssuer, kind: 'Issuer', group: 'cert-manager.io' },
        },
      });
    leaf('ServerCert', TLS_NAMES.serverCert, { dnsNames: [fqdn] });
    leaf('DbCert', TLS_NAMES.dbCert, {
      commonName: DATABASES.report.host,
      dnsNames: [DATABASES.product.host, DATABASES.report.host, fqdn],
      subject: x509Subject,
      ...(subject.email ? { emailAddresses: [subject.email] } : {}),
    });
  }
}
